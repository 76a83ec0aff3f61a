#include <hetero/log.hpp>
#include <hetero/runtime/model_graph.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace hetero {

const char* phase_name(int phase) { return phase == kPrefill ? "prefill" : "decode"; }

std::vector<Share> Plan::shares(int layer, Role role, int phase, int64_t rows) const {
    const LayerPlacement& lp = layers.at(size_t(layer));
    auto it = lp.matmuls[size_t(phase)].find(role);
    if (it != lp.matmuls[size_t(phase)].end() && !it->second.empty()) return it->second;
    return {Share{lp.home, 0, rows}};
}

std::vector<size_t> Plan::used_devices() const {
    std::set<size_t> used;
    for (const LayerPlacement& lp : layers) {
        used.insert(lp.home);
        for (const auto& phase : lp.matmuls)
            for (const auto& [role, shares] : phase)
                for (const Share& s : shares) used.insert(s.device);
    }
    return {used.begin(), used.end()};
}

namespace {

std::string layer_range(int a, int b) { return a == b ? fmt::format("layer {}", a) : fmt::format("layers {}-{}", a, b); }

std::string describe_shares(const Plan& p, const std::vector<Share>& shares) {
    std::string s;
    for (const Share& sh : shares)
        s += fmt::format("{}{} rows {}-{}", s.empty() ? "" : " + ", p.devices[sh.device].label(), sh.row_begin, sh.row_end - 1);
    return s;
}

}  // namespace

std::string Plan::describe() const {
    std::string s;
    const int nl = n_layer();
    // Runs of consecutive layers with the same home.
    for (int a = 0; a <= nl;) {
        int b = a;
        while (b + 1 < nl && layers[size_t(b + 1)].home == layers[size_t(a)].home) ++b;
        const DeviceRef& d = devices[layers[size_t(a)].home];
        std::string what;
        if (a == nl) what = "output head";
        else what = (a == 0 ? "embedding, " : "") + layer_range(a, b) + (b == nl - 1 && layers[size_t(nl)].home == layers[size_t(a)].home ? ", output head" : "");
        s += fmt::format("{}{} ({}): {}", s.empty() ? "" : "\n", d.label(), d.props.name, what);
        if (b == nl - 1 && layers[size_t(nl)].home == layers[size_t(a)].home) b = nl;
        a = b + 1;
    }
    for (int phase = 0; phase < kPhases; ++phase) {
        for (int l = 0; l <= nl; ++l) {
            for (const auto& [role, shares] : layers[size_t(l)].matmuls[size_t(phase)]) {
                if (shares.size() == 1 && shares[0].device == layers[size_t(l)].home) continue;
                s += fmt::format("\n  {} {} {}: {}", phase_name(phase), l == nl ? std::string("head") : fmt::format("layer {}", l), role_name(role),
                                 describe_shares(*this, shares));
            }
        }
    }
    if (prompt_len > 0 && predicted_seconds[kPrefill] > 0)
        s += fmt::format("\npredicted ({}): prefill of {} tokens {:.2f} ms ({:.0f} tok/s), decode {:.3f} ms/token ({:.1f} tok/s)", cost_source,
                         prompt_len, predicted_seconds[kPrefill] * 1e3, prompt_len / predicted_seconds[kPrefill],
                         predicted_seconds[kDecode] * 1e3, predicted_seconds[kDecode] > 0 ? 1.0 / predicted_seconds[kDecode] : 0.0);
    return s;
}

std::string Plan::to_json() const {
    using nlohmann::json;
    json j;
    json devs = json::array();
    for (const DeviceRef& d : devices) devs.push_back({{"label", d.label()}, {"name", d.props.name}});
    j["devices"] = devs;
    json ls = json::array();
    for (int l = 0; l <= n_layer(); ++l) {
        const LayerPlacement& lp = layers[size_t(l)];
        json e;
        e["layer"] = l == n_layer() ? json("head") : json(l);
        e["home"] = devices[lp.home].label();
        for (int phase = 0; phase < kPhases; ++phase) {
            json mm = json::object();
            for (const auto& [role, shares] : lp.matmuls[size_t(phase)]) {
                json sh = json::array();
                for (const Share& s : shares) sh.push_back({{"device", devices[s.device].label()}, {"rows", {s.row_begin, s.row_end}}});
                mm[role_name(role)] = sh;
            }
            e[phase_name(phase)] = mm;
        }
        ls.push_back(e);
    }
    j["layers"] = ls;
    if (prompt_len > 0) {
        j["prompt_len"] = prompt_len;
        j["predicted_seconds"] = {{"prefill", predicted_seconds[kPrefill]}, {"decode_token", predicted_seconds[kDecode]}};
        j["cost_source"] = cost_source;
    }
    return j.dump(2);
}

std::vector<DeviceRef> available_devices(const std::vector<Provider*>& providers, const DeviceFilter& allowed) {
    std::vector<DeviceRef> out;
    for (Provider* p : providers) {
        const uint32_t n = p->device_count();
        if (n == 0) log(LogLevel::warn, fmt::format("not using provider {}: {}", p->name(), p->device_summary()));
        for (uint32_t d = 0; d < n; ++d) {
            DeviceRef ref{p, d, p->device_props(d)};
            if (!allowed || allowed(*p, d, ref.props)) out.push_back(ref);
        }
    }
    return out;
}

namespace {

// The operand that decides whether a device runs a node, named in refusals:
// its weight (matmul, embedding, norm), else its KV cache, else its first input.
std::string deciding_operand(const ModelGraph& g, const hetero_node& node) {
    auto described = [&](const char* what, int32_t id) {
        const ModelTensor& t = g.tensors[size_t(id)];
        const std::string name = t.desc.name && *t.desc.name ? std::string(t.desc.name) + " " : "";
        return fmt::format("{} dtype {} ({}{})", what, sdk::dtype_name(t.desc.dtype), name, sdk::detail::shape_str(t.desc));
    };
    std::vector<int32_t> operands(node.inputs, node.inputs + node.n_inputs);
    operands.push_back(node.output);
    for (int32_t id : operands)
        if (g.tensors[size_t(id)].use == TensorUse::weight) return described("weight", id);
    for (int32_t id : operands)
        if (g.tensors[size_t(id)].use == TensorUse::k_cache || g.tensors[size_t(id)].use == TensorUse::v_cache) return described("cache", id);
    return described("input", node.inputs[0]);
}

}  // namespace

std::string unsupported_reason(const DeviceRef& d, const ModelGraph& g, size_t i) {
    if (!d.provider) return "";  // a simulated device: its cost model refuses what it cannot run
    std::vector<hetero_tensor_desc> descs;
    descs.reserve(g.tensors.size());
    for (const ModelTensor& t : g.tensors) {
        descs.push_back(t.desc);
        // Caches, inputs and outputs are bound at execute, as the session binds them.
        if (t.use != TensorUse::weight && t.use != TensorUse::activation) descs.back().kind = HETERO_TENSOR_BOUND;
    }
    const hetero_node& node = g.nodes[i].node;
    const std::string what = fmt::format("op {} with {} not supported", sdk::op_name(node.op), deciding_operand(g, node));
    // Dtypes added after ABI 1.0 go only to a device that advertises them: a
    // plugin built before they existed could not refuse them itself.
    for (uint32_t k = 0; k <= node.n_inputs; ++k) {
        const hetero_tensor_desc& t = descs[size_t(k < node.n_inputs ? node.inputs[k] : node.output)];
        if (t.dtype >= HETERO_DTYPE_COUNT_1_0 && !(d.props.dtype_mask & HETERO_DTYPE_BIT(t.dtype)))
            return fmt::format("{}: the device does not list dtype {}", what, sdk::dtype_name(t.dtype));
    }
    const hetero_status st = d.provider->api().op_supported(d.provider->ep(), d.index, &node, descs.data(), uint32_t(descs.size()), nullptr);
    if (st == HETERO_OK) return "";
    return fmt::format("{}: {}", what, d.provider->api().last_error());
}

std::vector<DeviceRef> devices_for_model(const ModelFile& model, const std::vector<DeviceRef>& devices, int32_t n_ctx) {
    std::vector<DeviceRef> keep, helpers;
    std::string reasons;
    for (const DeviceRef& d : devices) {
        // One layer and the head at decode shape ask every question a layer
        // asks; the cache type is the one a session would give this device.
        const uint32_t cache = cache_dtype(CacheType::automatic, d.props);
        const ModelGraph g = build_model_graph(model, 1, n_ctx, std::vector<uint32_t>(size_t(model.hparams.n_layer), cache));
        // Matrices may differ in dtype between layers: ask every matmul.
        std::string why_matmul;
        for (size_t i = 0; i < g.nodes.size() && why_matmul.empty(); ++i)
            if (g.nodes[i].node.op == HETERO_OP_MATMUL) why_matmul = unsupported_reason(d, g, i);
        std::string why;
        for (size_t i = 0; i < g.nodes.size() && why.empty(); ++i)
            if ((g.nodes[i].layer == 0 || g.nodes[i].layer == g.n_layer) && !is_matmul_role(g.nodes[i].role)) why = unsupported_reason(d, g, i);
        if (why.empty() && why_matmul.empty()) {
            keep.push_back(d);
        } else if (why_matmul.empty()) {
            // Runs the matmuls but not a whole layer (an NPU without
            // attention): it can take matmuls from the layers' home devices.
            log(LogLevel::info, fmt::format("{} ({}) can take this model's matmuls but not whole layers: {}", d.label(), d.props.name, why));
            helpers.push_back(d);
        } else {
            // The matmuls decide: a device that runs them stays as a helper
            // whatever else it lacks, so name them first.
            why = why.empty() ? why_matmul : why_matmul + "; also " + why;
            log(LogLevel::warn, fmt::format("not using {} ({}) for this model: {}", d.label(), d.props.name, why));
            reasons += fmt::format("\n  {}: {}", d.label(), why);
        }
    }
    if (keep.empty()) {
        for (const DeviceRef& h : helpers) reasons += fmt::format("\n  {}: runs the matmuls only", h.label());
        throw Error("no device can run this model:" + reasons);
    }
    keep.insert(keep.end(), helpers.begin(), helpers.end());
    return keep;
}

Plan plan_single_device(int n_layer, const std::vector<DeviceRef>& devices, size_t device) {
    if (device >= devices.size()) throw Error("no device to run the model on");
    Plan plan;
    plan.devices = devices;
    plan.layers.assign(size_t(n_layer + 1), LayerPlacement{});
    for (auto& l : plan.layers) l.home = device;
    return plan;
}

Plan plan_even_layers(int n_layer, const std::vector<DeviceRef>& devices) {
    if (devices.empty()) throw Error("no device to run the model on");
    Plan plan = plan_single_device(n_layer, devices, 0);
    const int n_dev = std::min<int>(int(devices.size()), std::max(1, n_layer));
    int begin = 0;
    for (int d = 0; d < n_dev; ++d) {
        const int count = n_layer / n_dev + (d < n_layer % n_dev ? 1 : 0);
        for (int l = begin; l < begin + count; ++l) plan.layers[size_t(l)].home = size_t(d);
        begin += count;
    }
    plan.layers[size_t(n_layer)].home = size_t(n_dev - 1);
    return plan;
}

}  // namespace hetero
