// Dispatches of ROPE and ROPE_SCALED (shaders/rope.comp) and STORE_ROWS
// (store_rows.comp), alone or in pairs (Q and K; K and V), and the Q/K rope
// pair that also writes K's rotated rows and V into the caches (rope.comp's
// STORE form), which saves decode the STORE_ROWS pair's dispatch.
#include "vk_lowering.hpp"

namespace hetero::vk {

namespace {

constexpr uint32_t kRopeWG = 256, kStoreWG = 256;

// Invocations of a rope over x [N, H, Hd]: one per pair of elements.
uint64_t rope_invocations(const hetero_tensor_desc& x) {
    return uint64_t(x.shape[0]) * uint64_t(x.shape[1]) * uint64_t((x.shape[2] + 1) / 2);
}

RopeArgs rope_args(const hetero_node& node, const hetero_tensor_desc* t, int32_t out) {
    const hetero_tensor_desc& x = t[node.inputs[0]];
    const int64_t Hd = x.shape[2];
    RopeArgs args{.x = node.inputs[0],
                  .positions = node.inputs[1],
                  .y = out,
                  .rows = uint32_t(x.shape[0]),
                  .heads = uint32_t(x.shape[1]),
                  .head_dim = uint32_t(Hd),
                  .rot_dims = uint32_t(sdk::rope_dims(node, Hd)),
                  .mode = uint32_t(node.iparams[0]),
                  .base = node.fparams[0]};
    if (node.op == HETERO_OP_ROPE_SCALED) {
        // Factors at binding 8 (in4); without them the shader never reads it: positions stand in.
        const bool factors = node.n_inputs > 2;
        args.factors = factors ? node.inputs[2] : node.inputs[1];
        args.has_factors = factors ? 1u : 0u;
        args.freq_scale = node.fparams[1] != 0.f ? node.fparams[1] : 1.f;
    }
    return args;
}

StoreRowsArgs store_rows_args(const hetero_node& node, const hetero_tensor_desc* t, int32_t out) {
    const hetero_tensor_desc& src = t[node.inputs[0]];
    return StoreRowsArgs{.src = node.inputs[0],
                         .positions = node.inputs[1],
                         .cache = out,
                         .rows = uint32_t(src.shape[0]),
                         .dim = uint32_t(sdk::row_width(src)),
                         .cache_rows = uint32_t(t[out].shape[0]),
                         .cache_f16 = t[out].dtype == HETERO_DTYPE_F16 ? 1u : 0u};
}

const char* rope_shader(const hetero_node& node) { return node.op == HETERO_OP_ROPE_SCALED ? "rope_scaled" : "rope"; }

}  // namespace

Dispatch lower_rope(const NodeLowering& n) {
    Dispatch d = dispatch(rope_shader(n.node), n.index, rope_args(n.node, n.t, n.out));
    d.spec = {kRopeWG};
    grid(d, n.dev, ceil_div(rope_invocations(n.t[n.in()[0]]), kRopeWG));
    return d;
}

Dispatch lower_store_rows(const NodeLowering& n) {
    const StoreRowsArgs args = store_rows_args(n.node, n.t, n.out);
    Dispatch d = dispatch("store_rows", n.index, args);
    d.spec = {kStoreWG};
    grid(d, n.dev, ceil_div(uint64_t(args.rows) * args.dim, kStoreWG));
    return d;
}

Dispatch lower_rope_pair(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index,
                         const hetero_tensor_desc* t, const std::vector<hetero_node>& stores) {
    const hetero_node &a = members[0], &b = members[1];
    const hetero_tensor_desc& xb = t[b.inputs[0]];
    RopeArgs args = rope_args(a, t, a.output);
    args.x2 = b.inputs[0];
    args.y2 = b.output;
    args.heads2 = uint32_t(xb.shape[1]);
    std::string shader = std::string(rope_shader(a)) + "_pair";
    // Q's invocations, then K's (the same rows and head dim).
    const hetero_tensor_desc& xa = t[a.inputs[0]];
    uint64_t count = uint64_t(xa.shape[0]) * uint64_t(xa.shape[1] + xb.shape[1]) * uint64_t((xa.shape[2] + 1) / 2);
    if (!stores.empty()) {
        // K's rotated rows and V go to the caches (see shaders/rope.comp, STORE); V's invocations follow.
        const hetero_tensor_desc& kc = t[stores[0].output];
        shader += "_store";
        args.v = stores[1].inputs[0];
        args.y2 = stores[0].output;
        args.v_cache = stores[1].output;
        args.cache_rows = uint32_t(kc.shape[0]);
        args.cache_f16 = kc.dtype == HETERO_DTYPE_F16 ? 1u : 0u;
        count += rope_invocations(xb);
    }
    Dispatch d = dispatch(shader, first_index, args);
    d.spec = {kRopeWG};
    grid(d, dev, ceil_div(count, kRopeWG));
    return d;
}

Dispatch lower_store_rows_pair(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index,
                               const hetero_tensor_desc* t) {
    const hetero_node &a = members[0], &b = members[1];
    StoreRowsArgs args = store_rows_args(a, t, a.output);
    args.src2 = b.inputs[0];
    args.cache2 = b.output;
    Dispatch d = dispatch("store_rows_pair", first_index, args);
    d.spec = {kStoreWG};
    // K's elements, then V's (the same shape).
    grid(d, dev, ceil_div(2 * uint64_t(args.rows) * args.dim, kStoreWG));
    return d;
}

}  // namespace hetero::vk
