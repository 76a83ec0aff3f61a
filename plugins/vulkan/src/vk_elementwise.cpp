// Dispatches of the row and element ops: EMBEDDING (shaders/embedding.comp),
// RMSNORM and SOFTMAX (rmsnorm.comp, softmax.comp), ADD, MUL, SWIGLU, GEGLU
// and SOFTCAP (elementwise.comp), and CONVERT (to_f32.comp,
// from_f32_half.comp, from_f32_quant.comp).
#include "vk_lowering.hpp"

#include <algorithm>

namespace hetero::vk {

namespace {

// Elements of a row each rmsnorm invocation keeps in registers (MAX_PER in shaders/rmsnorm.comp).
constexpr uint32_t kRmsnormMaxPer = 16;

// Invocations of the one-element-per-invocation shaders.
constexpr uint32_t kElementWG = 256;

ElementwiseOp elementwise_op(uint32_t op) {
    switch (op) {
        case HETERO_OP_ADD: return ElementwiseOp::Add;
        case HETERO_OP_MUL: return ElementwiseOp::Mul;
        case HETERO_OP_SWIGLU: return ElementwiseOp::Swiglu;
        case HETERO_OP_GEGLU: return ElementwiseOp::Geglu;
        default: return ElementwiseOp::Softcap;
    }
}

// Specialisation of shaders/rmsnorm.comp over `rows` rows of `dim`. Decode
// normalises one row: a wider workgroup shortens each invocation's chain.
// The row length as a specialisation constant lets the shader keep the row
// in registers.
std::vector<uint32_t> rmsnorm_shape(const DeviceInfo& dev, int64_t rows, int64_t dim) {
    uint32_t wg = 256;
    const uint32_t max_wg = std::min<uint32_t>({1024u, dev.props.limits.maxComputeWorkGroupInvocations,
                                                dev.props.limits.maxComputeWorkGroupSize[0]});
    if (rows <= 8)
        while (wg * 2 <= max_wg && int64_t(wg) * 2 <= dim) wg *= 2;
    return {wg, dim <= int64_t(kRmsnormMaxPer) * wg ? uint32_t(dim) : 0u};
}

}  // namespace

Dispatch lower_embedding(const NodeLowering& n) {
    const int32_t* in = n.in();
    const hetero_tensor_desc& table = n.t[in[0]];
    const int64_t N = n.t[in[1]].shape[0], D = table.shape[1];
    Dispatch d = dispatch("embedding", n.index,
                          EmbeddingArgs{.table = in[0],
                                        .ids = in[1],
                                        .y = n.out,
                                        .rows = uint32_t(N),
                                        .dim = uint32_t(D),
                                        .vocab = uint32_t(table.shape[0]),
                                        .table_dtype = table.dtype});
    d.spec = {kElementWG};
    grid(d, n.dev, ceil_div(uint64_t(N * D), kElementWG));
    return d;
}

Dispatch lower_norm(const NodeLowering& n) {
    const int32_t* in = n.in();
    const bool rms = n.node.op == HETERO_OP_RMSNORM;
    const int64_t D = sdk::inner_dim(n.t[in[0]]), rows = sdk::outer_rows(n.t[in[0]]);
    const NormArgs args{.x = in[0], .w = rms ? in[1] : -1, .y = n.out, .rows = uint32_t(rows), .dim = uint32_t(D), .param = n.node.fparams[0]};
    Dispatch d = dispatch(rms ? (n.dev.subgroup_arithmetic ? "rmsnorm_sg" : "rmsnorm") : "softmax", n.index, args);
    d.spec = rms ? rmsnorm_shape(n.dev, rows, D) : std::vector<uint32_t>{kElementWG};
    grid(d, n.dev, uint64_t(rows));
    return d;
}

Dispatch lower_elementwise(const NodeLowering& n) {
    const int32_t* in = n.in();
    // SOFTCAP has one input: binding 2 gets x again and is not read.
    const bool unary = n.node.op == HETERO_OP_SOFTCAP;
    const uint64_t count = uint64_t(sdk::element_count(n.t[in[0]]));
    const bool broadcast = !unary && n.t[in[1]].ndim == 1 && sdk::element_count(n.t[in[1]]) != int64_t(count);
    Dispatch d = dispatch("elementwise", n.index,
                          ElementwiseArgs{.a = in[0],
                                          .b = unary ? in[0] : in[1],
                                          .y = n.out,
                                          .count = uint32_t(count),
                                          .broadcast = broadcast ? uint32_t(n.t[in[1]].shape[0]) : 0u,
                                          .op = elementwise_op(n.node.op),
                                          .param = n.node.fparams[0]});
    d.spec = {kElementWG};
    grid(d, n.dev, ceil_div(count, kElementWG));
    return d;
}

Dispatch lower_convert(const NodeLowering& n) {
    const int32_t x = n.in()[0];
    const uint32_t from = n.t[x].dtype, to = n.t[n.out].dtype;
    const uint64_t count = uint64_t(sdk::element_count(n.t[n.out]));
    Dispatch d;
    if (to == HETERO_DTYPE_F32) {
        d = dispatch("to_f32", n.index, ConvertArgs{.x = x, .y = n.out, .count = uint32_t(count), .dtype = from});
    } else if (to == HETERO_DTYPE_F16 || to == HETERO_DTYPE_BF16) {
        d = dispatch("from_f32_half", n.index, ConvertArgs{.x = x, .y = n.out, .count = uint32_t(count), .dtype = to});
    } else {
        // One invocation per 32-element block.
        d = dispatch("from_f32_quant", n.index, ConvertArgs{.x = x, .y = n.out, .count = uint32_t(count / 32), .dtype = to});
        d.spec = {64};
        grid(d, n.dev, ceil_div(count / 32, 64));
        return d;
    }
    d.spec = {kElementWG};
    grid(d, n.dev, ceil_div(count, kElementWG));
    return d;
}

}  // namespace hetero::vk
