// make_schedule in five steps: cut the graph into tasks, find who writes and
// who reads every tensor, turn the tensors that cross tasks into hand-overs,
// give every task its hand-overs in binding order, then order each device's
// tasks and list the waits between them.
#include <hetero/error.hpp>
#include <hetero/schedule/schedule.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace hetero {

namespace {

// The rows of every node: the plan's shares for a matmul of this phase, one
// share on the layer's home for everything else.
std::vector<std::vector<Share>> node_shares(const ModelGraph& g, const Plan& plan, int phase) {
    std::vector<std::vector<Share>> shares(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const ModelNode& mn = g.nodes[i];
        if (mn.node.op == HETERO_OP_MATMUL && is_matmul_role(mn.role))
            shares[i] = plan.shares(mn.layer, mn.role, phase, g.tensors[size_t(mn.node.inputs[1])].desc.shape[0]);
        else
            shares[i] = {Share{plan.layers[size_t(mn.layer)].home, 0, 0}};
    }
    return shares;
}

// 1. Runs of consecutive nodes on one device; a split matmul is one task per
//    share plus a merge on its layer's home; the head starts a task.
std::vector<ScheduledTask> cut_tasks(const ModelGraph& g, const Plan& plan, const std::vector<std::vector<Share>>& shares) {
    std::vector<ScheduledTask> tasks;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const ModelNode& mn = g.nodes[i];
        const std::vector<Share>& sh = shares[i];
        const bool split = sh.size() > 1;
        ScheduledTask* last = tasks.empty() ? nullptr : &tasks.back();
        const bool head_starts = mn.layer == g.n_layer && (i == 0 || g.nodes[i - 1].layer != g.n_layer);
        const bool last_was_split = last && (last->kind == TaskKind::merge || shares[last->nodes.back()].size() > 1);
        // A batched step's per-sequence nodes read and write views of the
        // rows the nodes around them make and read: a task of their own, so
        // that no executable binds a view and its base together.
        const bool sequence_block_changes = last && (g.nodes[last->nodes.back()].seq >= 0) != (mn.seq >= 0);
        if (!split && last && last->kind == TaskKind::execute && last->device == sh[0].device && !head_starts && !last_was_split &&
            !sequence_block_changes) {
            last->nodes.push_back(i);
            continue;
        }
        if (!split) {
            ScheduledTask t;
            t.device = sh[0].device;
            t.nodes = {i};
            tasks.push_back(std::move(t));
            continue;
        }
        for (size_t s = 0; s < sh.size(); ++s) {
            ScheduledTask t;
            t.device = sh[s].device;
            t.nodes = {i};
            t.share = int(s);
            t.rows = sh[s];
            t.merge_task = tasks.size() + sh.size() - s;
            tasks.push_back(std::move(t));
        }
        ScheduledTask m;
        m.kind = TaskKind::merge;
        m.device = plan.layers[size_t(mn.layer)].home;
        m.nodes = {i};
        tasks.push_back(std::move(m));
    }
    return tasks;
}

// The names traces and printouts show.
std::string task_name(const ModelGraph& g, const ScheduledTask& t) {
    const ModelNode& first = g.nodes[t.nodes.front()];
    const ModelNode& last = g.nodes[t.nodes.back()];
    if (t.kind == TaskKind::merge) return fmt::format("merge {}", g.name(first.node.output));
    if (t.share >= 0) return fmt::format("layer {} {} rows {}-{}", first.layer, role_name(first.role), t.rows.row_begin, t.rows.row_end - 1);
    if (first.layer == g.n_layer) return "output head";
    if (first.seq >= 0) return fmt::format("layer {} {}-{} of {} sequences", first.layer, role_name(first.role), role_name(last.role), g.n_seq);
    if (first.layer == last.layer) return fmt::format("layer {} {}-{}", first.layer, role_name(first.role), role_name(last.role));
    return fmt::format("layers {}-{}", first.layer, last.layer);
}

// The tensor whose memory `id` is: its base for a view, else itself.
int32_t storage_of(const ModelGraph& g, int32_t id) {
    const int32_t base = g.tensors[size_t(id)].view_of;
    return base >= 0 ? base : id;
}

// 2. Who writes and who reads every tensor: a merge writes its split
//    matmul's output, a task of whole nodes their outputs; the head's input
//    is written with the final hidden state it is the last rows of. Reading
//    or writing a view reads or writes its base.
struct TensorUsers {
    std::vector<long> producer;              // task, -1 = none (the host, weights, caches)
    std::vector<std::vector<size_t>> readers;  // tasks, in task order (repeats possible)
};

TensorUsers find_users(const ModelGraph& g, const std::vector<ScheduledTask>& tasks) {
    TensorUsers u{std::vector<long>(g.tensors.size(), -1), std::vector<std::vector<size_t>>(g.tensors.size())};
    for (size_t ti = 0; ti < tasks.size(); ++ti) {
        const ScheduledTask& t = tasks[ti];
        for (size_t i : t.nodes) {
            const hetero_node& nd = g.nodes[i].node;
            if (t.kind == TaskKind::merge) {
                u.producer[size_t(nd.output)] = long(ti);
                continue;
            }
            for (uint32_t k = 0; k < nd.n_inputs; ++k) u.readers[size_t(storage_of(g, nd.inputs[k]))].push_back(ti);
            if (t.share < 0) u.producer[size_t(storage_of(g, nd.output))] = long(ti);
        }
    }
    if (g.last_hidden >= 0) u.producer[size_t(g.last_hidden)] = u.producer[size_t(g.final_hidden)];
    return u;
}

bool stays_on_device(TensorUse use) { return use == TensorUse::weight || use == TensorUse::k_cache || use == TensorUse::v_cache; }

// 3. Hand-overs: the tensors read outside the task that writes them, the
//    inputs, the final hidden state (the head reads its last rows) and the
//    logits; then each share's output, in task order.
void find_hand_overs(const ModelGraph& g, const TensorUsers& users, Schedule& s) {
    auto device_of = [&](long task) { return task < 0 ? -1L : long(s.tasks[size_t(task)].device); };
    s.hand_over_of.assign(g.tensors.size(), -1);
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        const ModelTensor& mt = g.tensors[t];
        if (stays_on_device(mt.use) || mt.view_of >= 0) continue;  // a view is bound inside its base's hand-over
        const long prod = users.producer[t];
        bool crosses = mt.use != TensorUse::activation || t == size_t(g.final_hidden);
        for (size_t r : users.readers[t]) crosses = crosses || long(r) != prod;
        if (!crosses) continue;
        HandOver h;
        h.name = g.name(int32_t(t));
        h.tensor = int32_t(t);
        h.bytes = sdk::tensor_bytes(mt.desc);
        h.from_task = prod;
        const bool merged = prod >= 0 && s.tasks[size_t(prod)].kind == TaskKind::merge;
        h.from_device = merged ? -1 : device_of(prod);  // a merge writes host memory
        h.via_host = mt.use == TensorUse::logits;
        for (size_t r : users.readers[t]) {
            if (long(s.tasks[r].device) != h.from_device) h.via_host = true;
            if (long(r) != prod && std::find(h.to_tasks.begin(), h.to_tasks.end(), r) == h.to_tasks.end()) h.to_tasks.push_back(r);
        }
        s.hand_over_of[t] = int(s.hand_overs.size());
        s.hand_overs.push_back(std::move(h));
        if (mt.use == TensorUse::tokens) s.tokens = s.hand_over_of[t];
        if (mt.use == TensorUse::positions) s.positions = s.hand_over_of[t];
        if (mt.use == TensorUse::cache_rows) s.cache_rows = s.hand_over_of[t];
        if (mt.use == TensorUse::logits) s.logits = s.hand_over_of[t];
    }
    if (g.last_hidden >= 0) {
        HandOver& lh = s.hand_overs[size_t(s.hand_over_of[size_t(g.last_hidden)])];
        const hetero_tensor_desc& d = g.tensors[size_t(g.last_hidden)].desc;
        lh.alias_of = s.hand_over_of[size_t(g.final_hidden)];
        lh.alias_offset = uint64_t(g.n_tokens - g.head_rows) * uint64_t(d.shape[1]) * 4;
    }
    for (size_t ti = 0; ti < s.tasks.size(); ++ti) {
        ScheduledTask& t = s.tasks[ti];
        if (t.share < 0) continue;
        const ModelTensor& out = g.tensors[size_t(g.nodes[t.nodes[0]].node.output)];
        HandOver h;
        h.name = fmt::format("{} rows {}-{}", out.desc.name, t.rows.row_begin, t.rows.row_end);
        h.tensor = g.nodes[t.nodes[0]].node.output;
        h.bytes = uint64_t(out.desc.shape[0] * (t.rows.row_end - t.rows.row_begin)) * 4;
        h.from_task = long(ti);
        h.from_device = long(t.device);
        h.to_tasks = {t.merge_task};
        h.via_host = true;
        t.outputs.push_back(int(s.hand_overs.size()));
        s.tasks[t.merge_task].inputs.push_back(int(s.hand_overs.size()));
        s.hand_overs.push_back(std::move(h));
    }
}

// 4. Each execute task's hand-overs in the order its graph meets them (a
//    node's inputs, then its output; a tensor once); the producer of the
//    final hidden state also writes the head's input. A merge got its shares
//    in step 3 and writes the split matmul's output.
void bind_hand_overs(const ModelGraph& g, Schedule& s) {
    for (ScheduledTask& t : s.tasks) {
        const int32_t first_output = g.nodes[t.nodes.front()].node.output;
        if (t.kind == TaskKind::merge) {
            t.outputs = {s.hand_over_of[size_t(first_output)]};
            continue;
        }
        std::set<int32_t> seen;
        auto meet = [&](int32_t id, bool is_output) {
            id = storage_of(g, id);
            if (!seen.insert(id).second) return;
            if (t.share >= 0 && is_output) return;  // the share's own output, given in step 3
            const int x = s.hand_over_of[size_t(id)];
            if (x >= 0) (is_output ? t.outputs : t.inputs).push_back(x);
        };
        for (size_t i : t.nodes) {
            const hetero_node& nd = g.nodes[i].node;
            for (uint32_t k = 0; k < nd.n_inputs; ++k) meet(nd.inputs[k], false);
            meet(nd.output, true);
        }
        if (g.last_hidden >= 0 && std::find(t.outputs.begin(), t.outputs.end(), s.hand_over_of[size_t(g.final_hidden)]) != t.outputs.end())
            t.outputs.push_back(s.hand_over_of[size_t(g.last_hidden)]);
        if (t.outputs.empty() && t.nodes.back() + 1 == g.nodes.size()) throw Error("internal: the head writes no logits");
    }
}

// 5. Each device's queue, what every task runs after, and the waits: a task
//    waits for a hand-over made elsewhere than on its own device (another
//    device, or a merge in host memory).
void order_tasks(const Plan& plan, Schedule& s) {
    std::map<size_t, std::vector<size_t>> per_device;
    for (size_t ti = 0; ti < s.tasks.size(); ++ti) {
        ScheduledTask& t = s.tasks[ti];
        per_device[t.device].push_back(ti);
        for (int x : t.inputs) {
            const HandOver& h = s.hand_overs[size_t(x)];
            if (h.from_task < 0) continue;
            const size_t producer = size_t(h.from_task);
            if (std::find(t.after.begin(), t.after.end(), producer) == t.after.end()) t.after.push_back(producer);
            if (h.from_device != long(t.device)) s.waits.push_back(Wait{ti, producer, x});
        }
    }
    for (auto& [device, tasks] : per_device) {
        const hetero_device_props& p = plan.devices[device].props;
        s.queues.push_back(DeviceQueue{device, (p.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY) != 0, std::move(tasks)});
    }
}

}  // namespace

const char* task_kind_name(TaskKind kind) { return kind == TaskKind::merge ? "merge" : "execute"; }

Schedule make_schedule(const ModelGraph& g, const Plan& plan) {
    if (plan.layers.size() != size_t(g.n_layer + 1))
        throw Error(fmt::format("the plan has {} layer entries, the model needs {}", plan.layers.size(), g.n_layer + 1));
    for (const LayerPlacement& lp : plan.layers)
        if (lp.home >= plan.devices.size()) throw Error("the plan names a device it does not list");
    Schedule s;
    s.n_tokens = g.n_tokens;
    s.phase = is_decode_graph(g) ? kDecode : kPrefill;
    const std::vector<std::vector<Share>> shares = node_shares(g, plan, s.phase);
    for (const auto& sh : shares)
        for (const Share& share : sh)
            if (share.device >= plan.devices.size()) throw Error("the plan names a device it does not list");
    s.tasks = cut_tasks(g, plan, shares);
    for (ScheduledTask& t : s.tasks) t.name = task_name(g, t);
    find_hand_overs(g, find_users(g, s.tasks), s);
    bind_hand_overs(g, s);
    order_tasks(plan, s);
    return s;
}

}  // namespace hetero
