#include <hetero/log.hpp>
#include <hetero/runtime/graph_builder.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero {

std::string DeviceRef::label() const { return fmt::format("{}:{}", provider ? provider->name() : "?", index); }

namespace {

// One node of each kind a layer uses, at decode shapes, with the model's
// weight dtypes; the question asked of every device.
struct ProbeGraph {
    GraphBuilder g;
    std::vector<hetero_node> nodes;
};

ProbeGraph probe_graph(const ModelFile& m, int32_t n_ctx) {
    const LlamaHParams& hp = m.hparams;
    ProbeGraph p;
    GraphBuilder& g = p.g;
    auto f32 = [&](std::initializer_list<int64_t> shape) { return g.tensor(HETERO_DTYPE_F32, shape, HETERO_TENSOR_INTERNAL, ""); };
    auto weight = [&](const std::string& name) {
        const WeightView& w = m.weight(name);
        return g.tensor(w.dtype, w.shape, HETERO_TENSOR_CONSTANT, name);
    };
    auto add = [&](uint32_t op, std::initializer_list<int32_t> in, int32_t out, std::initializer_list<float> f = {},
                   std::initializer_list<int64_t> i = {}) {
        g.node(op, in, out, f, i);
    };
    const int64_t D = hp.n_embd, H = hp.n_head, Hkv = hp.n_head_kv, Hd = hp.head_dim;
    const int32_t ids = g.tensor(HETERO_DTYPE_I32, {1}, HETERO_TENSOR_BOUND, "");
    const int32_t x = f32({1, D});
    add(HETERO_OP_EMBEDDING, {weight("token_embd.weight"), ids}, x);
    add(HETERO_OP_RMSNORM, {x, weight("blk.0.attn_norm.weight")}, f32({1, D}), {hp.norm_eps});
    for (const auto& [name, w] : m.weights) {
        if (w.shape.size() != 2 || name == "token_embd.weight") continue;
        add(HETERO_OP_MATMUL, {f32({1, w.shape[1]}), weight(name)}, f32({1, w.shape[0]}));
    }
    if (!m.has("output.weight"))
        add(HETERO_OP_MATMUL, {f32({1, D}), weight("token_embd.weight")}, f32({1, hp.n_vocab}));
    const int32_t q = f32({1, H, Hd});
    add(HETERO_OP_ROPE, {q, ids}, f32({1, H, Hd}), {hp.rope_freq_base}, {hp.rope_mode, hp.rope_dims});
    const int32_t kc = g.tensor(HETERO_DTYPE_F32, {n_ctx, Hkv, Hd}, HETERO_TENSOR_BOUND, "");
    const int32_t vc = g.tensor(HETERO_DTYPE_F32, {n_ctx, Hkv, Hd}, HETERO_TENSOR_BOUND, "");
    add(HETERO_OP_STORE_ROWS, {f32({1, Hkv, Hd}), ids}, kc);
    add(HETERO_OP_ATTENTION, {q, kc, vc, ids}, f32({1, H, Hd}), {1.f});
    add(HETERO_OP_SWIGLU, {f32({1, hp.n_ff}), f32({1, hp.n_ff})}, f32({1, hp.n_ff}));
    add(HETERO_OP_ADD, {x, f32({1, D})}, f32({1, D}));
    return p;
}

}  // namespace

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

std::vector<DeviceRef> devices_for_model(const ModelFile& model, const std::vector<DeviceRef>& devices, int32_t n_ctx) {
    ProbeGraph probe = probe_graph(model, n_ctx);
    const hetero_graph view = probe.g.view();
    std::vector<DeviceRef> keep;
    std::string reasons;
    for (const DeviceRef& d : devices) {
        std::string why;
        for (uint32_t n = 0; n < view.n_nodes && why.empty(); ++n) {
            const hetero_node& node = view.nodes[n];
            const hetero_status st = d.provider->api().op_supported(d.provider->ep(), d.index, &node, view.tensors, view.n_tensors, nullptr);
            if (st != HETERO_OK) {
                const hetero_tensor_desc& w = view.tensors[node.inputs[node.n_inputs > 1 ? 1 : 0]];
                why = fmt::format("{} ({}{}): {}", sdk::op_name(node.op), sdk::dtype_name(w.dtype), w.name && *w.name ? std::string(" ") + w.name : "",
                                  d.provider->api().last_error());
            }
        }
        if (why.empty()) {
            keep.push_back(d);
        } else {
            log(LogLevel::warn, fmt::format("not using {} ({}) for this model: {}", d.label(), d.props.name, why));
            reasons += fmt::format("\n  {}: {}", d.label(), why);
        }
    }
    if (keep.empty()) throw Error("no device can run this model:" + reasons);
    return keep;
}

Plan plan_even_layers(int n_layer, const std::vector<DeviceRef>& devices) {
    if (devices.empty()) throw Error("no device to run the model on");
    Plan plan;
    const int n_dev = std::min<int>(int(devices.size()), std::max(1, n_layer));
    int begin = 0;
    for (int d = 0; d < n_dev; ++d) {
        const int count = n_layer / n_dev + (d < n_layer % n_dev ? 1 : 0);
        Segment s;
        s.device = devices[size_t(d)];
        s.layer_begin = begin;
        s.layer_end = begin + count;
        s.embedding = d == 0;
        s.head = d == n_dev - 1;
        begin += count;
        plan.segments.push_back(s);
    }
    return plan;
}

std::string Plan::describe() const {
    std::string s;
    for (const auto& seg : segments) {
        std::string what;
        if (seg.embedding) what += "embedding, ";
        if (seg.layer_end > seg.layer_begin)
            what += seg.layer_end - seg.layer_begin == 1 ? fmt::format("layer {}", seg.layer_begin)
                                                         : fmt::format("layers {}-{}", seg.layer_begin, seg.layer_end - 1);
        if (seg.head) what += (seg.layer_end > seg.layer_begin ? ", " : "") + std::string("output head");
        s += fmt::format("{}{} ({}): {}", s.empty() ? "" : "\n", seg.device.label(), seg.device.props.name, what);
    }
    return s;
}

}  // namespace hetero
