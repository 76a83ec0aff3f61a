#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/solver/planner.hpp>
#include <hetero/solver/prior_cost_model.hpp>
#include <hetero/solver/solver.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
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

// The two phases the plan weighs: prefill, run as chunks of `chunk` tokens
// until the prompt is in, and one decode step. Costs are read at these shapes.
struct Phases {
    int32_t prompt = 0;                     // the prompt the plan is made for, 1..n_ctx
    int32_t chunk = 0;                      // tokens of one prefill step
    std::array<int32_t, kPhases> n{};       // tokens per step
    std::array<int64_t, kPhases> kv{};      // mean cache rows a query reads
    std::array<double, kPhases> repeat{};   // steps per phase
};

Phases phases_of(const PlanRequest& req) {
    Phases ph;
    ph.prompt = std::clamp<int32_t>(req.prompt_len, 1, req.n_ctx);
    ph.chunk = std::min(ph.prompt, std::max<int32_t>(1, req.max_batch));
    // A decode step of several sequences is costed as one sequence of that
    // many rows: the matmuls see every row, the attention of each row reads
    // about as much cache as one sequence's would.
    ph.n = {ph.chunk, std::max<int32_t>(1, req.decode_batch)};
    // A query reads half the prompt on average, and in decode the prompt plus
    // half the generated tokens.
    ph.kv = {std::max<int64_t>(1, ph.prompt / 2), std::min<int64_t>(req.n_ctx, int64_t(ph.prompt) + std::max(1, req.n_generate) / 2)};
    ph.repeat = {std::ceil(double(ph.prompt) / double(ph.chunk)), 1.0};
    return ph;
}

// What the problem's builders read. The graphs are built once per device
// and phase because each device gets its own cache type; which device can
// run which node is asked once (decode shapes: prefill asks the same ops).
struct PlanInputs {
    const ModelFile& model;
    const std::vector<DeviceRef>& devices;
    const CostModel& cost;
    const PlanRequest& req;
    Phases ph;
    int n_layer = 0;
    std::vector<std::array<ModelGraph, kPhases>> graphs;  // [device][phase]
    std::vector<std::vector<std::string>> why_not;        // [device][node of the decode graph]; "" = it can

    // The graph whose node indices and weights the builders read (every device's graph has the same nodes).
    const ModelGraph& g0() const { return graphs[0][kDecode]; }
    bool can_run(size_t d, size_t node) const { return why_not[d][node].empty(); }
};

PlanInputs read_inputs(const ModelFile& model, const std::vector<DeviceRef>& devices, const CostModel& cost, const PlanRequest& req) {
    PlanInputs in{model, devices, cost, req, phases_of(req), int(model.hparams.n_layer), {}, {}};
    const size_t N = devices.size();
    in.graphs.resize(N);
    for (size_t d = 0; d < N; ++d) {
        const uint32_t cd = cache_dtype(req.cache_type, devices[d].props);
        for (int p = 0; p < kPhases; ++p)
            in.graphs[d][size_t(p)] = build_model_graph(model, in.ph.n[size_t(p)], req.n_ctx, std::vector<uint32_t>(size_t(in.n_layer), cd));
    }
    const ModelGraph& g0 = in.g0();
    in.why_not.assign(N, std::vector<std::string>(g0.nodes.size()));
    for (size_t d = 0; d < N; ++d)
        for (size_t i = 0; i < g0.nodes.size(); ++i) in.why_not[d][i] = unsupported_reason(devices[d], in.graphs[d][kDecode], i);
    return in;
}

std::vector<SolverDevice> solver_devices(const PlanInputs& in) {
    std::vector<SolverDevice> out;
    const std::vector<int> resources = resource_ids(in.devices);
    for (size_t d = 0; d < in.devices.size(); ++d) {
        SolverDevice sd;
        sd.label = in.devices[d].label();
        sd.resource = resources[d];
        sd.memory_bytes = in.devices[d].props.memory_bytes;
        // A benchmark measures after its warm-up, so it does not pay compiles.
        sd.compile_seconds = in.req.count_compile ? in.cost.compile_seconds(d) : 0.0;
        sd.row_align = in.cost.row_align(d);
        out.push_back(sd);
    }
    return out;
}

// What holds for the whole chain: how often each phase runs, whether the
// solver may cut rows, the hand-over between homes, and the activation
// estimate the out-of-memory message states.
void set_chain_terms(const PlanInputs& in, SolverProblem& prob) {
    const LlamaHParams& hp = in.model.hparams;
    prob.weight = {1.0, double(std::max(1, in.req.n_generate))};
    prob.allow_splits = in.req.constraints.allow_splits;
    const uint64_t hidden_bytes = uint64_t(hp.n_embd) * 4;
    // The hidden state moves, and the next home launches one more task.
    prob.handoff_seconds = [&cost = in.cost, ph = in.ph, hidden_bytes](size_t a, size_t b, int p) {
        if (a == b) return 0.0;
        return ph.repeat[size_t(p)] * (cost.transfer_seconds(a, b, hidden_bytes * uint64_t(ph.n[size_t(p)])) + cost.execute_seconds(b, ph.n[size_t(p)]));
    };
    // One prefill chunk's hidden states, Q/K/V, FFN intermediates and logits in f32.
    prob.activation_bytes = uint64_t(in.ph.chunk) * uint64_t(4 * hp.n_embd + 2 * hp.n_head * hp.head_dim + 2 * hp.n_head_kv * hp.head_dim +
                                                             3 * hp.n_ff + hp.n_vocab) * 4;
}

// Per device and phase: seconds of layer l's work that stays with its home
// (everything but the matmuls), -1 where the device cannot run one of those
// nodes. The first layer and the head each start a task of their own, and so
// does the attention of a batched decode step.
std::vector<std::array<double, kPhases>> home_seconds(const PlanInputs& in, int l) {
    std::vector<std::array<double, kPhases>> home(in.devices.size(), {0.0, 0.0});
    for (size_t d = 0; d < in.devices.size(); ++d) {
        for (int p = 0; p < kPhases; ++p) {
            const ModelGraph& g = in.graphs[d][size_t(p)];
            double t = (l == 0 || l == in.n_layer) ? in.cost.execute_seconds(d, in.ph.n[size_t(p)]) : 0.0;
            // A batched decode step runs each layer's per-sequence attention as a task of its own: two more executes.
            if (p == kDecode && in.req.decode_batch > 1 && l < in.n_layer) t += 2 * in.cost.execute_seconds(d, in.ph.n[size_t(p)]);
            for (size_t i = 0; i < g.nodes.size(); ++i) {
                const ModelNode& mn = g.nodes[i];
                if (mn.layer != l || is_matmul_role(mn.role)) continue;
                const double s = in.can_run(d, i) ? in.cost.node_seconds(d, op_shape(g, i, in.ph.kv[size_t(p)])) : -1;
                if (s < 0) {
                    t = -1;
                    break;
                }
                t += s;
            }
            home[d][size_t(p)] = t < 0 ? -1.0 : t * in.ph.repeat[size_t(p)];
        }
    }
    return home;
}

// Matmul node i (weight w) as the solver prices it: the seconds of any row
// share on any device, what a share away from the home adds in copies, and
// the home's own part of handing shares out. The closures run inside
// solve(), so they hold the caller's cost model and devices by reference.
SolverMatmul matmul_of(const PlanInputs& in, size_t i, const hetero_tensor_desc& w) {
    const ModelGraph& g0 = in.g0();
    SolverMatmul sm;
    sm.role = g0.nodes[i].role;
    sm.rows = w.shape[0];
    sm.weight_bytes = sdk::tensor_bytes(w);
    const OpShape base = op_shape(g0, i, 0);
    sm.key = base.family();
    std::vector<bool> can(in.devices.size());
    for (size_t d = 0; d < in.devices.size(); ++d) can[d] = in.can_run(d, i);
    sm.seconds = [&cost = in.cost, ph = in.ph, base, can](size_t d, int p, int64_t rows) {
        if (!can[d]) return -1.0;
        OpShape s = base;
        s.n = ph.n[size_t(p)];
        s.m = rows;
        const double t = cost.node_seconds(d, s);
        return t < 0 ? -1.0 : t * ph.repeat[size_t(p)];
    };
    // The input goes out to the device, its rows come back, and it runs one more task.
    const int64_t in_width = base.k;
    sm.copy_seconds = [&cost = in.cost, ph = in.ph, in_width](size_t h, size_t d, int p, int64_t rows) {
        const uint64_t n = uint64_t(ph.n[size_t(p)]);
        return ph.repeat[size_t(p)] * (cost.transfer_seconds(h, d, n * uint64_t(in_width) * 4) +
                                       cost.transfer_seconds(d, h, n * uint64_t(rows) * 4) + cost.execute_seconds(d, ph.n[size_t(p)]));
    };
    // The home's own part of a hand-out: two more round trips (before
    // the shares, after the merge), the host merge of the whole output
    // and, where the home does not share the host's memory, reading
    // its rows out and writing the merged result back.
    const int64_t out_rows = sm.rows;
    sm.away_seconds = [&cost = in.cost, &devices = in.devices, ph = in.ph, out_rows](size_t h, int p) {
        const double bytes = double(ph.n[size_t(p)]) * double(out_rows) * 4;
        double t = 2 * cost.execute_seconds(h, ph.n[size_t(p)]) + bytes / PriorCostModel::kHostCopyBytesPerSecond;
        if (!(devices[h].props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY)) t += 2 * bytes / PriorCostModel::kBusBytesPerSecond;
        return ph.repeat[size_t(p)] * t;
    };
    return sm;
}

// The config's pins and forced splits of matmul node i in layer l: pins
// first, then splits, the last rule that names it winning (so a split
// overrides a pin). A forced matmul gets a key of its own: it must not share
// the solver's memo with free ones.
void apply_matmul_rules(const PlanInputs& in, int l, size_t i, SolverMatmul& sm) {
    const PlanConstraints& rules = in.req.constraints;
    for (const auto& pin : rules.pins)
        if (pin.role && *pin.role == sm.role && layer_in(l, in.n_layer, pin.first, pin.last)) {
            const size_t d = device_by_label(in.devices, pin.device, "the config's plan.pin");
            if (!in.can_run(d, i)) throw Error(fmt::format("config pins layer {} {} to {}, which cannot run it: {}", l, role_name(sm.role), pin.device, in.why_not[d][i]));
            sm.forced = {Share{d, 0, sm.rows}};
        }
    for (const auto& sp : rules.splits)
        if ((!sp.role || *sp.role == sm.role) && layer_in(l, in.n_layer, sp.first, sp.last)) {
            std::vector<size_t> ds;
            for (const auto& lbl : sp.devices) {
                const size_t d = device_by_label(in.devices, lbl, "the config's plan.split");
                if (!in.can_run(d, i)) throw Error(fmt::format("config splits layer {} {} onto {}, which cannot run it: {}", l, role_name(sm.role), lbl, in.why_not[d][i]));
                ds.push_back(d);
            }
            sm.forced = proportional_shares(ds, sp.ratio, sm.rows, 8);
        }
    if (!sm.forced.empty()) sm.key += fmt::format(" forced@{}", l);
}

// Pinned homes: every other device is ruled out for layer l, and the pinned
// one must be able to run all of the layer's nodes.
void apply_home_pins(const PlanInputs& in, int l, SolverLayer& sl) {
    const ModelGraph& g0 = in.g0();
    for (const auto& pin : in.req.constraints.pins) {
        if (pin.role || !layer_in(l, in.n_layer, pin.first, pin.last)) continue;
        const size_t d = device_by_label(in.devices, pin.device, "the config's plan.pin");
        for (size_t i = 0; i < g0.nodes.size(); ++i)
            if (g0.nodes[i].layer == l && !in.can_run(d, i))
                throw Error(fmt::format("config pins {} to {}, which cannot run its {}: {}", l == in.n_layer ? std::string("the output head") : fmt::format("layer {}", l),
                                        pin.device, role_name(g0.nodes[i].role), in.why_not[d][i]));
        for (size_t o = 0; o < in.devices.size(); ++o)
            if (o != d) sl.home[o] = {-1.0, -1.0};
    }
}

// Layer l of the chain (l == n_layer: the output head). Its home holds the
// KV cache and the embedding and norm weights; each matmul is priced on its
// own and takes the config's rules.
SolverLayer layer_of(const PlanInputs& in, int l) {
    const LlamaHParams& hp = in.model.hparams;
    const uint64_t cache_bytes = uint64_t(in.req.n_ctx) * uint64_t(hp.n_head_kv * hp.head_dim) * 4 * 2 * uint64_t(std::max<int32_t>(1, in.req.decode_batch));
    SolverLayer sl;
    sl.home = home_seconds(in, l);
    sl.home_bytes = l < in.n_layer ? cache_bytes : 0;
    sl.cache_bytes = sl.home_bytes;
    const ModelGraph& g0 = in.g0();
    for (size_t i = 0; i < g0.nodes.size(); ++i) {
        const ModelNode& mn = g0.nodes[i];
        if (mn.layer != l) continue;
        const hetero_tensor_desc& w = g0.tensors[size_t(mn.node.inputs[mn.role == Role::embedding ? 0 : 1])].desc;
        if (!is_matmul_role(mn.role)) {
            if (mn.node.op == HETERO_OP_EMBEDDING || mn.node.op == HETERO_OP_RMSNORM) sl.home_bytes += sdk::tensor_bytes(w);
            continue;
        }
        SolverMatmul sm = matmul_of(in, i, w);
        apply_matmul_rules(in, l, i, sm);
        sl.matmuls.push_back(std::move(sm));
    }
    apply_home_pins(in, l, sl);
    return sl;
}

// The solver's answer as a Plan: each layer's home and, per phase, only the
// matmuls that do not simply stay whole on it; the predicted seconds; and
// which cost model priced the devices the plan uses.
Plan plan_of(const PlanInputs& in, const SolverProblem& prob, const SolverResult& r) {
    Plan plan;
    plan.devices = in.devices;
    plan.layers.resize(size_t(in.n_layer + 1));
    for (int l = 0; l <= in.n_layer; ++l) {
        const SolverLayerResult& lr = r.layers[size_t(l)];
        const std::vector<SolverMatmul>& matmuls = prob.layers[size_t(l)].matmuls;
        LayerPlacement& lp = plan.layers[size_t(l)];
        lp.home = lr.home;
        for (int p = 0; p < kPhases; ++p)
            for (size_t j = 0; j < matmuls.size(); ++j) {
                const std::vector<Share>& sh = lr.placement[size_t(p)][j];
                if (sh.size() == 1 && sh[0].device == lr.home) continue;
                lp.matmuls[size_t(p)][matmuls[j].role] = sh;
            }
    }
    plan.prompt_len = in.ph.prompt;
    plan.predicted_seconds = r.phase_seconds;
    std::set<std::string> sources;
    for (size_t d : plan.used_devices()) sources.insert(in.devices[d].label() + ": " + in.cost.source(d));
    for (const auto& s : sources) plan.cost_source += (plan.cost_source.empty() ? "" : "; ") + s;
    return plan;
}

}  // namespace

Plan solve_plan(const ModelFile& model, const std::vector<DeviceRef>& devices, const CostModel& cost, const PlanRequest& req) {
    if (devices.empty()) throw Error("no device to run the model on");
    // The problem's cost closures hold `cost` and `devices` by reference: they run only inside solve() below.
    const PlanInputs in = read_inputs(model, devices, cost, req);
    SolverProblem prob;
    prob.devices = solver_devices(in);
    set_chain_terms(in, prob);
    for (int l = 0; l <= in.n_layer; ++l) prob.layers.push_back(layer_of(in, l));
    return plan_of(in, prob, solve(prob));
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
