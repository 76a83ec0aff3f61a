#include <hetero/error.hpp>
#include <hetero/schedule/schedule.hpp>
#include <hetero/sim/simulator.hpp>

#include "../runtime/trace_tracks.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace hetero {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One piece of a task: compute seconds and bytes streamed (both may be 0).
struct Segment {
    double compute = 0, bytes = 0;
};

struct SimTask {
    size_t device = 0;
    std::string name, category;
    std::vector<Segment> segments;
    std::vector<size_t> deps;  // tasks whose outputs it reads
    double finish = -1;
};

struct TraceEvent {
    std::string track, name, category;
    double start = 0, seconds = 0;
};

// A task's name in the simulated trace.
std::string sim_task_name(const ModelGraph& g, const ScheduledTask& t) {
    const ModelNode& first = g.nodes[t.nodes.front()];
    const std::string where = first.layer == g.n_layer ? std::string("head") : fmt::format("layer {}", first.layer);
    if (t.kind == TaskKind::merge) return fmt::format("merge {} {}", where, role_name(first.role));
    if (t.share >= 0) return fmt::format("{} {} rows {}-{}", where, role_name(first.role), t.rows.row_begin, t.rows.row_end - 1);
    return fmt::format("{} {}-{}", where, role_name(first.role), role_name(g.nodes[t.nodes.back()].role));
}

// The tasks of one forward over n tokens: the schedule the session runs
// (make_schedule), each task costed on its unit.
std::vector<SimTask> cost_tasks(const ModelFile& model, const Plan& plan, const SocCostModel& cost, int32_t n, int32_t n_ctx, int64_t kv) {
    const LlamaHParams& hp = model.hparams;
    std::vector<uint32_t> cache(size_t(hp.n_layer));
    for (int l = 0; l < int(hp.n_layer); ++l) cache[size_t(l)] = cache_dtype(CacheType::automatic, plan.devices[plan.layers[size_t(l)].home].props);
    const ModelGraph g = build_model_graph(model, n, n_ctx, cache);
    const Schedule schedule = make_schedule(g, plan);
    const double copy_bps = cost.profile().memory.copy_gbs.value * 1e9;

    std::vector<SimTask> tasks(schedule.tasks.size());
    for (size_t t = 0; t < schedule.tasks.size(); ++t) {
        const ScheduledTask& c = schedule.tasks[t];
        SimTask& st = tasks[t];
        st.device = c.device;
        st.name = sim_task_name(g, c);
        st.deps = c.after;
        const ModelNode& first = g.nodes[c.nodes.front()];
        if (c.kind == TaskKind::merge) {
            const double bytes = double(n) * double(g.tensors[size_t(first.node.inputs[1])].desc.shape[0]) * 4;
            st.category = "merge";
            st.segments.push_back({bytes / copy_bps, 0});
            continue;
        }
        st.category = "execute";
        st.segments.push_back({cost.unit(c.device).launch_us.value * 1e-6, 0});
        for (size_t i : c.nodes) {
            OpShape s = op_shape(g, i, kv);
            if (c.share >= 0) s.m = c.rows.row_end - c.rows.row_begin;
            const SocCostModel::Work w = cost.work(c.device, s);
            if (!w.supported)
                throw Error(fmt::format("the plan puts {} {} on {}, which the SoC profile {} does not run ({} is not among its ops)",
                                        first.layer == g.n_layer ? std::string("head") : fmt::format("layer {}", first.layer),
                                        role_name(g.nodes[i].role), plan.devices[c.device].label(), cost.profile().id, w.op));
            st.segments.push_back({w.compute_seconds, w.bytes});
        }
    }
    return tasks;
}

// Runs the tasks; returns the makespan. Adds busy time and bytes per device and trace events at `offset`.
double run_tasks(std::vector<SimTask>& tasks, const Plan& plan, const SocCostModel& cost, std::vector<SimUnitStats>& stats, std::vector<TraceEvent>* trace,
                 double offset) {
    const size_t D = plan.devices.size();
    const double sync = cost.profile().memory.sync_us.value * 1e-6;
    const double combined = cost.profile().memory.combined_gbs.value * 1e9;
    std::vector<std::vector<size_t>> queue(D);
    for (size_t t = 0; t < tasks.size(); ++t) queue[tasks[t].device].push_back(t);
    struct Dev {
        size_t next = 0;     // next task in its queue
        long task = -1;      // running task
        size_t seg = 0;      // its current segment
        double left = 1.0;   // fraction of the segment left
        double started = 0;  // of the running task
        double wake = -1;    // waiting for a dependency's synchronisation
    };
    std::vector<Dev> dv(D);
    double now = 0;
    size_t done = 0;
    auto try_start = [&](size_t d) {
        Dev& v = dv[d];
        if (v.task >= 0 || v.next >= queue[d].size()) return;
        SimTask& t = tasks[queue[d][v.next]];
        double ready = 0;
        for (size_t p : t.deps) {
            if (tasks[p].finish < 0) return;  // blocked
            ready = std::max(ready, tasks[p].finish + (tasks[p].device != d ? sync : 0.0));
        }
        if (ready > now + 1e-15) {
            v.wake = ready;
            return;
        }
        v.wake = -1;
        v.task = long(queue[d][v.next]);
        v.seg = 0;
        v.left = 1.0;
        v.started = now;
    };
    while (done < tasks.size()) {
        // Start what can start; finish segments of zero length.
        bool progressed = true;
        while (progressed) {
            progressed = false;
            for (size_t d = 0; d < D; ++d) {
                try_start(d);
                Dev& v = dv[d];
                while (v.task >= 0) {
                    SimTask& t = tasks[size_t(v.task)];
                    if (v.seg < t.segments.size() && (t.segments[v.seg].compute > 0 || t.segments[v.seg].bytes > 0) && v.left > 1e-12) break;
                    if (v.seg < t.segments.size()) {
                        ++v.seg;
                        v.left = 1.0;
                        continue;
                    }
                    t.finish = now;
                    stats[d].busy_seconds += now - v.started;
                    if (trace) trace->push_back({plan.devices[d].label(), t.name, t.category, offset + v.started, now - v.started});
                    v.task = -1;
                    ++v.next;
                    ++done;
                    progressed = true;
                    try_start(d);
                }
            }
        }
        if (done == tasks.size()) break;
        // Bandwidth: max-min fair shares of the combined bandwidth, each capped by its unit and its need.
        std::vector<double> rate(D, 0), alloc(D, 0);
        std::vector<std::pair<double, size_t>> demand;
        for (size_t d = 0; d < D; ++d) {
            if (dv[d].task < 0) continue;
            const Segment& s = tasks[size_t(dv[d].task)].segments[dv[d].seg];
            if (s.bytes <= 0) {
                rate[d] = 1.0 / s.compute;
                continue;
            }
            const double need = std::min(cost.bandwidth_gbs(d) * 1e9, s.compute > 0 ? s.bytes / s.compute : kInf);
            demand.push_back({need, d});
        }
        std::sort(demand.begin(), demand.end());
        double left = combined;
        for (size_t i = 0; i < demand.size(); ++i) {
            const size_t d = demand[i].second;
            alloc[d] = std::min(demand[i].first, left / double(demand.size() - i));
            left -= alloc[d];
            rate[d] = alloc[d] / tasks[size_t(dv[d].task)].segments[dv[d].seg].bytes;
        }
        double dt = kInf;
        for (size_t d = 0; d < D; ++d) {
            if (dv[d].task >= 0) dt = std::min(dt, dv[d].left / rate[d]);
            else if (dv[d].wake >= 0) dt = std::min(dt, dv[d].wake - now);
        }
        if (!(dt < kInf)) throw Error("simulation: the tasks wait on each other (internal error in the task cut)");
        dt = std::max(dt, 0.0);
        for (size_t d = 0; d < D; ++d) {
            if (dv[d].task < 0) continue;
            dv[d].left -= rate[d] * dt;
            stats[d].bytes += alloc[d] * dt;
        }
        now += dt;
    }
    return now;
}

std::string trace_json(const std::vector<TraceEvent>& events) {
    using nlohmann::json;
    std::map<std::string, int> tids;
    for (const TraceEvent& e : events) tids.emplace(e.track, 0);
    json out = trace_tracks::number_tracks(tids, "hetero (simulated)", " (simulated)");
    for (const TraceEvent& e : events)
        out.push_back({{"ph", "X"},
                       {"pid", 1},
                       {"tid", tids[e.track]},
                       {"name", e.name},
                       {"cat", "simulated " + e.category},
                       {"ts", e.start * 1e6},
                       {"dur", e.seconds * 1e6},
                       {"args", {{"simulated", true}, {"simulated_us", e.seconds * 1e6}}}});
    return json({{"traceEvents", out}, {"displayTimeUnit", "ms"}, {"otherData", {{"simulated", true}}}}).dump();
}

// MFLOP of the matmul tasks a device runs in one forward of n tokens.
double device_mflop(const ModelFile& model, const Plan& plan, size_t device, int32_t n, int32_t n_ctx) {
    const LlamaHParams& hp = model.hparams;
    const ModelGraph g = build_model_graph(model, n, n_ctx, std::vector<uint32_t>(size_t(hp.n_layer), HETERO_DTYPE_F16));
    const int phase = n > 1 ? kPrefill : kDecode;
    double mflop = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const ModelNode& mn = g.nodes[i];
        if (mn.node.op != HETERO_OP_MATMUL || !is_matmul_role(mn.role)) continue;
        const OpShape s = op_shape(g, i, 1);
        for (const Share& sh : plan.shares(mn.layer, mn.role, phase, s.m))
            if (sh.device == device) mflop += s.flops() * double(sh.row_end - sh.row_begin) / double(s.m) / 1e6;
    }
    return mflop;
}

}  // namespace

std::vector<double> simulate_jobs(const Plan& plan, const SocCostModel& cost, const std::vector<SimJob>& jobs) {
    std::vector<SimTask> tasks;
    for (const SimJob& j : jobs) {
        SimTask t;
        t.device = j.device;
        t.name = "job";
        t.category = "execute";
        t.segments.push_back({j.compute_seconds, j.bytes});
        tasks.push_back(t);
    }
    std::vector<SimUnitStats> stats(plan.devices.size());
    run_tasks(tasks, plan, cost, stats, nullptr, 0);
    std::vector<double> out;
    for (const SimTask& t : tasks) out.push_back(t.finish);
    return out;
}

Plan plan_without_kind(const Plan& plan, uint32_t kind) {
    Plan out = plan;
    for (LayerPlacement& lp : out.layers)
        for (auto& phase : lp.matmuls)
            for (auto it = phase.begin(); it != phase.end();) {
                bool uses = false;
                for (const Share& s : it->second) uses = uses || out.devices[s.device].props.kind == kind;
                if (uses) it = phase.erase(it);  // whole on the home
                else ++it;
            }
    return out;
}

SimResult simulate(const ModelFile& model, const Plan& plan, const SocCostModel& cost, const SimOptions& o) {
    if (o.prompt_len < 1) throw Error("simulate: the prompt needs at least one token");
    if (o.chunk < 1) throw Error("simulate: the chunk needs at least one token");
    const int32_t n_ctx = o.n_ctx > 0 ? o.n_ctx : o.prompt_len + std::max(1, o.n_generate) + 1024;
    const size_t D = plan.devices.size();
    for (const LayerPlacement& lp : plan.layers)
        if (lp.home >= D) throw Error("simulate: the plan names a device it does not list");
    SimResult r;
    r.prefill_units.resize(D);
    r.decode_units.resize(D);
    for (size_t d = 0; d < D; ++d) r.prefill_units[d].label = r.decode_units[d].label = plan.devices[d].label();
    std::vector<TraceEvent> events;
    std::vector<TraceEvent>* tr = o.trace ? &events : nullptr;
    const std::vector<size_t> used = plan.used_devices();
    const Plan rest_plan = plan_without_kind(plan, HETERO_DEVICE_NPU);
    std::map<int32_t, bool> compiled;

    // One program of n tokens at position pos, under `p`; returns its seconds.
    auto run_program = [&](const Plan& p, int32_t n, int32_t pos, const std::string& label) {
        std::vector<SimTask> tasks = cost_tasks(model, p, cost, n, n_ctx, int64_t(pos) + (n + 1) / 2);
        const double start = r.prefill_seconds;
        const double t = run_tasks(tasks, p, cost, r.prefill_units, tr, start);
        if (tr) events.push_back({"host", label, "forward", start, t});
        r.chunks.push_back(n);
        r.prefill_seconds += t;
    };
    auto static_unprepared = [&](const Plan& p, int32_t n) {
        for (size_t d : p.used_devices())
            if (!cost.prepared(d, n)) return true;
        return false;
    };
    for (int32_t pos = 0; pos < o.prompt_len;) {
        const int32_t n = std::min(o.chunk, o.prompt_len - pos);
        if (!static_unprepared(plan, n) || o.shapes == ShapePolicy::compile) {
            if (static_unprepared(plan, n) && !compiled[n]) {
                compiled[n] = true;
                double c = 0;
                for (size_t d : used)
                    if (!cost.prepared(d, n)) c += cost.compile_seconds_for(d, device_mflop(model, plan, d, n, n_ctx));
                if (tr) events.push_back({"host", fmt::format("compile graphs for {} tokens", n), "compile", r.prefill_seconds, c});
                r.compile_seconds += c;
                r.prefill_seconds += c;
            }
            run_program(plan, n, pos, fmt::format("prefill {} tokens at {}", n, pos));
        } else if (o.shapes == ShapePolicy::pad) {
            int32_t padded = n;
            while (static_unprepared(plan, padded) && padded < n_ctx) ++padded;
            run_program(plan, padded, pos, fmt::format("prefill {} tokens at {} padded to {}", n, pos, padded));
        } else {
            int32_t aligned = n;
            while (aligned > 1 && static_unprepared(plan, aligned)) --aligned;
            if (aligned == 1) aligned = 0;  // the decode graph is no prefill shape
            if (aligned > 0) run_program(plan, aligned, pos, fmt::format("prefill {} tokens at {} (aligned part)", aligned, pos));
            if (n > aligned) run_program(rest_plan, n - aligned, pos + aligned, fmt::format("prefill {} tokens at {} (remainder)", n - aligned, pos + aligned));
        }
        pos += n;
    }
    // One decode step at the mean context of the generated tokens.
    {
        const int32_t pos = o.prompt_len + std::max(1, o.n_generate) / 2;
        std::vector<SimTask> tasks = cost_tasks(model, plan, cost, 1, n_ctx, pos + 1);
        const double start = r.prefill_seconds;
        r.decode_seconds = run_tasks(tasks, plan, cost, r.decode_units, tr, start);
        if (tr) events.push_back({"host", fmt::format("decode 1 token at {}", pos), "forward", start, r.decode_seconds});
    }
    if (tr) r.trace_json = trace_json(events);
    return r;
}

}  // namespace hetero
