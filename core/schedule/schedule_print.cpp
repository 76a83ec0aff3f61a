// The schedule as `hetero plan --schedule` prints it: text and JSON.
#include <hetero/schedule/schedule.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hetero {

namespace {

std::string device_label(const Plan& plan, long device) { return device < 0 ? std::string("host") : plan.devices[size_t(device)].label(); }

std::string bytes_text(uint64_t b) {
    if (b >= 10u << 20) return fmt::format("{} MiB", b >> 20);
    if (b >= 10u << 10) return fmt::format("{} KiB", b >> 10);
    return fmt::format("{} B", b);
}

bool shares_host_memory(const Schedule& s, size_t device) {
    for (const DeviceQueue& q : s.queues)
        if (q.device == device) return q.shares_host_memory;
    return false;
}

// How a hand-over reaches its readers: which copies through host memory it costs.
std::string copies_text(const Schedule& s, const HandOver& h) {
    bool out = h.via_host && h.from_device >= 0 && !shares_host_memory(s, size_t(h.from_device));
    bool in = false;
    for (size_t r : h.to_tasks) {
        const size_t d = s.tasks[r].device;
        if (long(d) != h.from_device && !shares_host_memory(s, d)) in = true;
    }
    if (!h.via_host) return "stays on its device";
    if (!out && !in) return "shared memory, no copy";
    return out && in ? "copied out and in" : out ? "copied out" : "copied in";
}

std::string readers_text(const Schedule& s, const Plan& plan, const HandOver& h) {
    std::string text;
    for (size_t r : h.to_tasks) text += fmt::format("{}#{} {}", text.empty() ? "" : ", ", r, device_label(plan, long(s.tasks[r].device)));
    if (text.empty()) text = h.via_host ? "host" : "no other task";
    return text;
}

std::string producer_text(const Schedule& s, const Plan& plan, const HandOver& h) {
    if (h.from_task < 0) return "host";
    if (h.from_device < 0) return fmt::format("#{} in host memory", h.from_task);
    std::string text = fmt::format("#{} {}", h.from_task, device_label(plan, h.from_device));
    if (h.alias_of >= 0) text += fmt::format(" (last rows of {})", s.hand_overs[size_t(h.alias_of)].name);
    return text;
}

}  // namespace

std::string describe_schedule(const Schedule& s, const Plan& plan) {
    std::string out = fmt::format("{} schedule, {} token{}: {} tasks on {} device{}, {} hand-overs, {} waits\n", phase_name(s.phase), s.n_tokens,
                                  s.n_tokens == 1 ? "" : "s", s.tasks.size(), s.queues.size(), s.queues.size() == 1 ? "" : "s", s.hand_overs.size(),
                                  s.waits.size());
    for (const DeviceQueue& q : s.queues) {
        out += fmt::format("  {} ({}{}):\n", plan.devices[q.device].label(), plan.devices[q.device].props.name,
                           q.shares_host_memory ? ", shares host memory" : "");
        for (size_t ti : q.tasks) {
            const ScheduledTask& t = s.tasks[ti];
            out += fmt::format("    #{:<3} {:<8} {:<32} {} node{}", ti, task_kind_name(t.kind), t.name, t.nodes.size(), t.nodes.size() == 1 ? "" : "s");
            if (!t.after.empty()) {
                out += ", after";
                for (size_t a : t.after) out += fmt::format(" #{}", a);
            }
            out += "\n";
        }
    }
    out += "  hand-overs:\n";
    for (const HandOver& h : s.hand_overs) {
        out += fmt::format("    {:<28} {:>9}  {} -> {}: {}\n", h.name, bytes_text(h.bytes), producer_text(s, plan, h), readers_text(s, plan, h),
                           copies_text(s, h));
    }
    out += "  waits:\n";
    for (const Wait& w : s.waits)
        out += fmt::format("    #{} on {} waits for #{} on {} ({})\n", w.task, device_label(plan, long(s.tasks[w.task].device)), w.on_task,
                           device_label(plan, long(s.tasks[w.on_task].device)), s.hand_overs[size_t(w.hand_over)].name);
    return out;
}

std::string schedule_to_json(const Schedule& s, const Plan& plan) {
    using nlohmann::json;
    json tasks = json::array(), hand_overs = json::array(), queues = json::array(), waits = json::array();
    for (size_t ti = 0; ti < s.tasks.size(); ++ti) {
        const ScheduledTask& t = s.tasks[ti];
        json j = {{"id", ti}, {"kind", task_kind_name(t.kind)}, {"device", plan.devices[t.device].label()}, {"name", t.name},
                  {"nodes", t.nodes}, {"inputs", t.inputs}, {"outputs", t.outputs}, {"after", t.after}};
        if (t.share >= 0) j["rows"] = {t.rows.row_begin, t.rows.row_end}, j["merge_task"] = t.merge_task;
        tasks.push_back(std::move(j));
    }
    for (size_t x = 0; x < s.hand_overs.size(); ++x) {
        const HandOver& h = s.hand_overs[x];
        json j = {{"id", x}, {"name", h.name}, {"bytes", h.bytes}, {"from_task", h.from_task}, {"from", device_label(plan, h.from_device)},
                  {"to_tasks", h.to_tasks}, {"via_host", h.via_host}, {"copies", copies_text(s, h)}};
        if (h.alias_of >= 0) j["alias_of"] = h.alias_of, j["alias_offset"] = h.alias_offset;
        hand_overs.push_back(std::move(j));
    }
    for (const DeviceQueue& q : s.queues)
        queues.push_back({{"device", plan.devices[q.device].label()}, {"shares_host_memory", q.shares_host_memory}, {"tasks", q.tasks}});
    for (const Wait& w : s.waits) waits.push_back({{"task", w.task}, {"on_task", w.on_task}, {"hand_over", w.hand_over}});
    return json({{"phase", phase_name(s.phase)}, {"tokens", s.n_tokens}, {"tasks", tasks}, {"queues", queues}, {"hand_overs", hand_overs},
                 {"waits", waits}})
        .dump();
}

}  // namespace hetero
