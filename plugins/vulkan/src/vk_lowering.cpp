// What this device can run, and the node -> dispatch switch: each op family
// is lowered in its own file (vk_lowering.hpp lists them).
#include "vk_lowering.hpp"

#include "vk_fusion.hpp"

#include <hetero/sdk/quant.hpp>

#include <algorithm>

namespace hetero::vk {

namespace {

using sdk::fail;

constexpr uint32_t kAttentionMaxHeadDim = 512;

bool writes_16bit(const hetero_node& node, const hetero_tensor_desc* t) {
    const uint32_t out = t[node.output].dtype;
    return (node.op == HETERO_OP_CONVERT || node.op == HETERO_OP_STORE_ROWS) && out != HETERO_DTYPE_F32;
}

// A tensor past the device's storage-buffer range (or 2^32 elements) cannot be bound.
void check_tensor_size(const DeviceInfo& dev, const std::string& op, const hetero_tensor_desc* tensors, int32_t id) {
    const uint64_t bytes = sdk::tensor_bytes(tensors[id]);
    if (bytes + dev.min_offset_align + 4 > dev.max_storage_range || sdk::element_count(tensors[id]) >= (int64_t(1) << 32))
        fail(HETERO_ERR_UNSUPPORTED, op + ": tensor " + std::to_string(id) + " (" + std::to_string(bytes) +
                                         " bytes) exceeds the device's storage buffer range of " +
                                         std::to_string(dev.max_storage_range) + " bytes");
}

}  // namespace

void grid(Dispatch& d, const DeviceInfo& dev, uint64_t count) {
    const uint64_t x = std::max<uint64_t>(1, std::min<uint64_t>(count, std::min<uint32_t>(dev.max_groups_x, 65535u)));
    d.groups[0] = uint32_t(x);
    d.groups[1] = std::max<uint32_t>(1, ceil_div(count, x));
}

bool coopmat_enabled(const DeviceInfo& dev) {
    static const bool disabled = sdk::env_equals("HETERO_VK_COOPMAT", "0");
    return dev.coopmat_f16 && !disabled;
}

bool use_coopmat(const DeviceInfo& dev, uint32_t w_dtype) {
    return coopmat_enabled(dev) && coop_gemm_weights(w_dtype);
}

void check_node_supported(const DeviceInfo& dev, const hetero_node& node, const hetero_tensor_desc* tensors) {
    const std::string op = sdk::op_name(node.op);
    if (node.op >= HETERO_OP_COUNT_1_3) fail(HETERO_ERR_UNSUPPORTED, "vulkan: no shader for op " + std::to_string(node.op));
    for (uint32_t i = 0; i < node.n_inputs; ++i) check_tensor_size(dev, op, tensors, node.inputs[i]);
    check_tensor_size(dev, op, tensors, node.output);
    const uint32_t out_dtype = tensors[node.output].dtype;
    if (writes_16bit(node, tensors) && !dev.storage16)
        fail(HETERO_ERR_UNSUPPORTED, op + ": writing " + sdk::dtype_name(out_dtype) + " needs 16-bit storage access");
    // Block types other than Q8_0/Q4_0 (K-quants, Q4_1, Q5_0, Q5_1, IQ4_NL) are
    // read (matmul, embedding, conversion to f32); no shader writes them.
    if (node.op == HETERO_OP_CONVERT && sdk::is_quant_dtype(out_dtype) && !sdk::is_block_dtype(out_dtype))
        fail(HETERO_ERR_UNSUPPORTED, "convert: quantizing to " + std::string(sdk::dtype_name(out_dtype)) + " is not provided");
    const bool attention = node.op == HETERO_OP_ATTENTION || node.op == HETERO_OP_ATTENTION_EXT || node.op == HETERO_OP_ATTENTION_SEQS;
    if (attention && tensors[node.inputs[0]].shape[2] > int64_t(kAttentionMaxHeadDim))
        fail(HETERO_ERR_UNSUPPORTED, "attention: head dim above " + std::to_string(kAttentionMaxHeadDim));
    if (attention) check_attention_supported(dev, node, tensors);
    if (node.op == HETERO_OP_MATMUL && tensors[node.inputs[0]].shape[0] > kMatvecMaxRows &&
        ceil_div(uint64_t(tensors[node.inputs[0]].shape[0]), kGemmTile) > 65535u)
        fail(HETERO_ERR_UNSUPPORTED, "matmul: too many rows for one dispatch");
}

std::vector<Dispatch> lower_node(const DeviceInfo& dev, const hetero_node& node, uint32_t ni, const hetero_tensor_desc* t,
                                 const ResidualFusion& fusion) {
    const NodeLowering n{dev, node, ni, t, fusion.residual >= 0 ? fusion.out : node.output};
    switch (node.op) {
        case HETERO_OP_EMBEDDING: return {lower_embedding(n)};
        case HETERO_OP_MATMUL: return {lower_matmul(n, fusion)};
        case HETERO_OP_RMSNORM:
        case HETERO_OP_SOFTMAX: return {lower_norm(n)};
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: return {lower_rope(n)};
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: return lower_attention(n);
        case HETERO_OP_SWIGLU:
        case HETERO_OP_GEGLU:
        case HETERO_OP_SOFTCAP:
        case HETERO_OP_ADD:
        case HETERO_OP_MUL: return {lower_elementwise(n)};
        case HETERO_OP_CONVERT: return {lower_convert(n)};
        case HETERO_OP_STORE_ROWS: return {lower_store_rows(n)};
        default: fail(HETERO_ERR_UNSUPPORTED, "vulkan: op " + std::to_string(node.op) + " has no shader");
    }
}

Dispatch lower_group(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index, const hetero_tensor_desc* t,
                     const hetero_node* norm, const hetero_node* swiglu, const std::vector<hetero_node>& stores) {
    if (members.size() < 2 || members.size() > max_group_size(members[0])) fail(HETERO_ERR_INTERNAL, "vulkan: bad node group");
    switch (members[0].op) {
        case HETERO_OP_MATMUL: return lower_matmul_group(dev, members, first_index, t, norm, swiglu);
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: return lower_rope_pair(dev, members, first_index, t, stores);
        case HETERO_OP_STORE_ROWS: return lower_store_rows_pair(dev, members, first_index, t);
        default: fail(HETERO_ERR_INTERNAL, "vulkan: bad node group");
    }
}

}  // namespace hetero::vk
