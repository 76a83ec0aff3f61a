#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/solver/planner.hpp>
#include <hetero/solver/prior_cost_model.hpp>
#include <hetero/solver/solver.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace hetero {

namespace {

size_t device_by_label(const std::vector<DeviceRef>& devices, const std::string& label, const std::string& what) {
    std::string known;
    for (size_t d = 0; d < devices.size(); ++d) {
        if (devices[d].label() == label) return d;
        known += (known.empty() ? "" : ", ") + devices[d].label();
    }
    throw Error(fmt::format("{} names device '{}', which is not in use (devices: {})", what, label, known));
}

bool layer_in(int layer, int n_layer, int first, int last) {
    if (first >= (1 << 30)) return layer == n_layer;  // "head"
    const int end = last < 0 ? n_layer : last;
    return layer >= first && layer <= end;
}

// Cuts `rows` in the given proportions, each cut a multiple of `align` (the last takes the rest).
std::vector<Share> proportional_shares(const std::vector<size_t>& devices, std::vector<double> ratio, int64_t rows, int64_t align) {
    if (ratio.empty()) ratio.assign(devices.size(), 1.0);
    double total = 0;
    for (double r : ratio) total += r;
    std::vector<Share> out;
    int64_t begin = 0;
    double acc = 0;
    for (size_t i = 0; i < devices.size(); ++i) {
        acc += ratio[i];
        int64_t end = i + 1 == devices.size() ? rows : int64_t(std::llround(rows * acc / total / double(align))) * align;
        end = std::clamp<int64_t>(end, begin, rows);
        if (end > begin) out.push_back(Share{devices[i], begin, end});
        begin = end;
    }
    return out;
}

}  // namespace

Plan solve_plan(const ModelFile& model, const std::vector<DeviceRef>& devices, const CostModel& cost, const PlanRequest& req) {
    if (devices.empty()) throw Error("no device to run the model on");
    const LlamaHParams& hp = model.hparams;
    const int n_layer = int(hp.n_layer);
    const int32_t prompt = std::clamp<int32_t>(req.prompt_len, 1, req.n_ctx);
    const int32_t chunk = std::min(prompt, std::max<int32_t>(1, req.max_batch));
    const double chunks = std::ceil(double(prompt) / double(chunk));
    const int32_t phase_n[kPhases] = {chunk, 1};
    // Mean cache rows a query reads: over the prompt, and over the generated tokens.
    const int64_t phase_kv[kPhases] = {std::max<int64_t>(1, prompt / 2),
                                       std::min<int64_t>(req.n_ctx, int64_t(prompt) + std::max(1, req.n_generate) / 2)};
    const double phase_repeat[kPhases] = {chunks, 1.0};
    const size_t N = devices.size();

    // The graphs the costs are read from: one prefill chunk and one decode step,
    // with each device's own cache type asked of it.
    std::vector<std::array<ModelGraph, kPhases>> graphs(N);
    for (size_t d = 0; d < N; ++d) {
        const uint32_t cd = cache_dtype(req.cache_type, devices[d].props);
        for (int p = 0; p < kPhases; ++p)
            graphs[d][size_t(p)] = build_model_graph(model, phase_n[p], req.n_ctx, std::vector<uint32_t>(size_t(n_layer), cd));
    }
    const ModelGraph& g0 = graphs[0][kDecode];
    // Which device can run which node (decode shapes; prefill asks the same ops).
    std::vector<std::vector<std::string>> why_not(N, std::vector<std::string>(g0.nodes.size()));
    for (size_t d = 0; d < N; ++d)
        for (size_t i = 0; i < g0.nodes.size(); ++i) why_not[d][i] = unsupported_reason(devices[d], graphs[d][kDecode], i);

    SolverProblem prob;
    const std::vector<int> resources = resource_ids(devices);
    for (size_t d = 0; d < N; ++d) {
        SolverDevice sd;
        sd.label = devices[d].label();
        sd.resource = resources[d];
        sd.memory_bytes = devices[d].props.memory_bytes;
        sd.compile_seconds = req.count_compile ? cost.compile_seconds(d) : 0.0;
        sd.row_align = cost.row_align(d);
        prob.devices.push_back(sd);
    }
    prob.weight = {1.0, double(std::max(1, req.n_generate))};
    prob.allow_splits = req.constraints.allow_splits;
    const uint64_t hidden_bytes = uint64_t(hp.n_embd) * 4;
    prob.handoff_seconds = [&, hidden_bytes](size_t a, size_t b, int p) {
        if (a == b) return 0.0;
        return phase_repeat[p] * (cost.transfer_seconds(a, b, hidden_bytes * uint64_t(phase_n[p])) + cost.execute_seconds(b, phase_n[p]));
    };
    const uint64_t cache_bytes = uint64_t(req.n_ctx) * uint64_t(hp.n_head_kv * hp.head_dim) * 4 * 2;
    // One prefill chunk's hidden states, Q/K/V, FFN intermediates and logits in f32.
    prob.activation_bytes = uint64_t(chunk) * uint64_t(4 * hp.n_embd + 2 * hp.n_head * hp.head_dim + 2 * hp.n_head_kv * hp.head_dim +
                                                       3 * hp.n_ff + hp.n_vocab) * 4;

    for (int l = 0; l <= n_layer; ++l) {
        SolverLayer sl;
        sl.home.assign(N, {0.0, 0.0});
        sl.home_bytes = l < n_layer ? cache_bytes : 0;
        sl.cache_bytes = sl.home_bytes;
        for (size_t d = 0; d < N; ++d) {
            for (int p = 0; p < kPhases; ++p) {
                const ModelGraph& g = graphs[d][size_t(p)];
                double t = (l == 0 || l == n_layer) ? cost.execute_seconds(d, phase_n[p]) : 0.0;  // the first task and the head's
                for (size_t i = 0; i < g.nodes.size(); ++i) {
                    const ModelNode& mn = g.nodes[i];
                    if (mn.layer != l || is_matmul_role(mn.role)) continue;
                    const double s = why_not[d][i].empty() ? cost.node_seconds(d, op_shape(g, i, phase_kv[p])) : -1;
                    if (s < 0) {
                        t = -1;
                        break;
                    }
                    t += s;
                }
                sl.home[d][size_t(p)] = t < 0 ? -1.0 : t * phase_repeat[p];
            }
        }
        for (size_t i = 0; i < g0.nodes.size(); ++i) {
            const ModelNode& mn = g0.nodes[i];
            if (mn.layer != l) continue;
            const hetero_tensor_desc& w = g0.tensors[size_t(mn.node.inputs[mn.role == Role::embedding ? 0 : 1])].desc;
            if (!is_matmul_role(mn.role)) {
                if (mn.node.op == HETERO_OP_EMBEDDING || mn.node.op == HETERO_OP_RMSNORM) sl.home_bytes += sdk::tensor_bytes(w);
                continue;
            }
            SolverMatmul sm;
            sm.role = mn.role;
            sm.rows = w.shape[0];
            sm.weight_bytes = sdk::tensor_bytes(w);
            const OpShape base = op_shape(g0, i, 0);
            sm.key = base.family();
            std::vector<bool> can(N);
            for (size_t d = 0; d < N; ++d) can[d] = why_not[d][i].empty();
            sm.seconds = [&, base, can](size_t d, int p, int64_t rows) {
                if (!can[d]) return -1.0;
                OpShape s = base;
                s.n = phase_n[p];
                s.m = rows;
                const double t = cost.node_seconds(d, s);
                return t < 0 ? -1.0 : t * phase_repeat[p];
            };
            const int64_t in_width = base.k;
            sm.copy_seconds = [&, in_width](size_t h, size_t d, int p, int64_t rows) {
                const uint64_t n = uint64_t(phase_n[p]);
                return phase_repeat[p] * (cost.transfer_seconds(h, d, n * uint64_t(in_width) * 4) +
                                          cost.transfer_seconds(d, h, n * uint64_t(rows) * 4) + cost.execute_seconds(d, phase_n[p]));
            };
            // The home's own part of a hand-out: two more round trips (before
            // the shares, after the merge), the host merge of the whole output
            // and, where the home does not share the host's memory, reading
            // its rows out and writing the merged result back.
            const int64_t out_rows = sm.rows;
            sm.away_seconds = [&, out_rows](size_t h, int p) {
                const double bytes = double(phase_n[p]) * double(out_rows) * 4;
                double t = 2 * cost.execute_seconds(h, phase_n[p]) + bytes / PriorCostModel::kHostCopyBytesPerSecond;
                if (!(devices[h].props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY)) t += 2 * bytes / PriorCostModel::kBusBytesPerSecond;
                return phase_repeat[p] * t;
            };
            // Forced placements from the config.
            for (const auto& pin : req.constraints.pins)
                if (pin.role && *pin.role == mn.role && layer_in(l, n_layer, pin.first, pin.last)) {
                    const size_t d = device_by_label(devices, pin.device, "the config's plan.pin");
                    if (!can[d]) throw Error(fmt::format("config pins layer {} {} to {}, which cannot run it: {}", l, role_name(mn.role), pin.device, why_not[d][i]));
                    sm.forced = {Share{d, 0, sm.rows}};
                }
            for (const auto& sp : req.constraints.splits)
                if ((!sp.role || *sp.role == mn.role) && layer_in(l, n_layer, sp.first, sp.last)) {
                    std::vector<size_t> ds;
                    for (const auto& lbl : sp.devices) {
                        const size_t d = device_by_label(devices, lbl, "the config's plan.split");
                        if (!can[d]) throw Error(fmt::format("config splits layer {} {} onto {}, which cannot run it: {}", l, role_name(mn.role), lbl, why_not[d][i]));
                        ds.push_back(d);
                    }
                    sm.forced = proportional_shares(ds, sp.ratio, sm.rows, 8);
                }
            if (!sm.forced.empty()) sm.key += fmt::format(" forced@{}", l);
            sl.matmuls.push_back(std::move(sm));
        }
        // Pinned homes: every other device is ruled out for this layer.
        for (const auto& pin : req.constraints.pins) {
            if (pin.role || !layer_in(l, n_layer, pin.first, pin.last)) continue;
            const size_t d = device_by_label(devices, pin.device, "the config's plan.pin");
            for (size_t i = 0; i < g0.nodes.size(); ++i)
                if (g0.nodes[i].layer == l && !why_not[d][i].empty())
                    throw Error(fmt::format("config pins {} to {}, which cannot run its {}: {}", l == n_layer ? std::string("the output head") : fmt::format("layer {}", l),
                                            pin.device, role_name(g0.nodes[i].role), why_not[d][i]));
            for (size_t o = 0; o < N; ++o)
                if (o != d) sl.home[o] = {-1.0, -1.0};
        }
        prob.layers.push_back(std::move(sl));
    }

    const SolverResult r = solve(prob);
    Plan plan;
    plan.devices = devices;
    plan.layers.resize(size_t(n_layer + 1));
    for (int l = 0; l <= n_layer; ++l) {
        const SolverLayerResult& lr = r.layers[size_t(l)];
        LayerPlacement& lp = plan.layers[size_t(l)];
        lp.home = lr.home;
        for (int p = 0; p < kPhases; ++p)
            for (size_t j = 0; j < prob.layers[size_t(l)].matmuls.size(); ++j) {
                const std::vector<Share>& sh = lr.placement[size_t(p)][j];
                if (sh.size() == 1 && sh[0].device == lr.home) continue;
                lp.matmuls[size_t(p)][prob.layers[size_t(l)].matmuls[j].role] = sh;
            }
    }
    plan.prompt_len = prompt;
    plan.predicted_seconds = r.phase_seconds;
    std::set<std::string> sources;
    for (size_t d : plan.used_devices()) sources.insert(devices[d].label() + ": " + cost.source(d));
    for (const auto& s : sources) plan.cost_source += (plan.cost_source.empty() ? "" : "; ") + s;
    return plan;
}

PlanConstraints constraints_on(const PlanConstraints& constraints, const std::vector<DeviceRef>& devices) {
    auto present = [&](const std::string& label) {
        for (const DeviceRef& d : devices)
            if (d.label() == label) return true;
        return false;
    };
    PlanConstraints out = constraints;
    out.pins.clear();
    out.splits.clear();
    for (const auto& pin : constraints.pins)
        if (present(pin.device)) out.pins.push_back(pin);
    for (const auto& sp : constraints.splits) {
        PlanConstraints::Split kept = sp;
        kept.devices.clear();
        kept.ratio.clear();
        for (size_t i = 0; i < sp.devices.size(); ++i) {
            if (!present(sp.devices[i])) continue;
            kept.devices.push_back(sp.devices[i]);
            if (i < sp.ratio.size()) kept.ratio.push_back(sp.ratio[i]);
        }
        if (kept.devices.size() >= 2) out.splits.push_back(std::move(kept));
    }
    return out;
}

}  // namespace hetero
