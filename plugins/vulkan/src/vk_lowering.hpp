// Lowers graph nodes to compute dispatches (shader, specialization constants,
// push constants, grid, operand tensors: Dispatch, vk_kernel_args.hpp) and
// decides which nodes this device can run.
//
//   vk_lowering.cpp     support checks, the node -> dispatch switch, node groups, grids
//   vk_matmul.cpp       matvec, tiled GEMM, coopmat GEMM; multi-matvec and multi GEMM groups
//   vk_attention.cpp    tensor-core, tiled, per-row and compact attention
//   vk_elementwise.cpp  EMBEDDING, RMSNORM / SOFTMAX, elementwise ops, CONVERT
//   vk_rope_store.cpp   ROPE, ROPE_SCALED, STORE_ROWS, their pairs, the rope + K/V store
// Which nodes one dispatch runs together: vk_fusion.hpp.
#pragma once

#include "vk_device_info.hpp"
#include "vk_kernel_args.hpp"

#include <hetero/sdk/fusion.hpp>

#include <vector>

namespace hetero::vk {

// Decode-sized batches use the matrix-vector shader (weights read once per
// token, reductions across invocations); larger ones the tiled GEMM, in
// tiles of kGemmTile weight rows x kGemmTile activation rows (the coopmat
// GEMM: 64 or 128).
inline constexpr int64_t kMatvecMaxRows = 4;
inline constexpr uint32_t kGemmTile = 64;

// Weight types the coopmat GEMM (shaders/matmul_coop.comp) dequantizes.
inline bool coop_gemm_weights(uint32_t dtype) {
    return dtype == HETERO_DTYPE_Q4_0 || dtype == HETERO_DTYPE_Q8_0 || dtype == HETERO_DTYPE_Q4_K || dtype == HETERO_DTYPE_Q5_K ||
           dtype == HETERO_DTYPE_Q6_K;
}

// Throws Error(HETERO_ERR_UNSUPPORTED, why) when `dev` cannot run the node.
void check_node_supported(const DeviceInfo& dev, const hetero_node& node, const hetero_tensor_desc* tensors);

using sdk::ResidualFusion;

// The dispatches of one (well-formed, supported) node.
std::vector<Dispatch> lower_node(const DeviceInfo& dev, const hetero_node& node, uint32_t node_index,
                                 const hetero_tensor_desc* tensors, const ResidualFusion& fusion = {});

// The dispatch of a node group (vk_fusion.hpp: can_join_group). `norm`: the
// RMSNORM producing the members' x, run inside the dispatch (can_fuse_norm),
// or null; `swiglu`: the SWIGLU of the two members' outputs, likewise
// (can_fuse_swiglu), or null; `stores`: for a rope pair, the STORE_ROWS pair
// it also runs (can_fuse_rope_store), or empty.
Dispatch lower_group(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index,
                     const hetero_tensor_desc* tensors, const hetero_node* norm = nullptr, const hetero_node* swiglu = nullptr,
                     const std::vector<hetero_node>& stores = {});

// ---------------------------------------------------------------- shared by the lowering files

// One node being lowered.
struct NodeLowering {
    const DeviceInfo& dev;
    const hetero_node& node;
    uint32_t index;               // the node's index (push.node: error reports name it)
    const hetero_tensor_desc* t;  // the graph's tensors
    int32_t out;                  // the tensor the dispatch writes: the node's output, or its fused ADD's
    const int32_t* in() const { return node.inputs; }
};

inline uint32_t ceil_div(uint64_t a, uint64_t b) { return uint32_t((a + b - 1) / b); }

// `count` workgroups as a 2-D grid (one dimension is limited to maxComputeWorkGroupCount[0]).
void grid(Dispatch& d, const DeviceInfo& dev, uint64_t count);

// Tensor-core kernels where the device has them; HETERO_VK_COOPMAT=0 keeps
// the f32 GEMM and attention (for comparisons).
bool coopmat_enabled(const DeviceInfo& dev);
// The coopmat GEMM takes quantized weights of the types coop_gemm_weights lists.
bool use_coopmat(const DeviceInfo& dev, uint32_t w_dtype);

// vk_matmul.cpp
Dispatch lower_matmul(const NodeLowering& n, const ResidualFusion& fusion);
Dispatch lower_matmul_group(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index,
                            const hetero_tensor_desc* t, const hetero_node* norm, const hetero_node* swiglu);
// vk_attention.cpp: ATTENTION, ATTENTION_EXT (one dispatch, or key segments
// and their merge on loop-capped devices); the check throws
// HETERO_ERR_UNSUPPORTED where even segments cannot run the node.
std::vector<Dispatch> lower_attention(const NodeLowering& n);
void check_attention_supported(const DeviceInfo& dev, const hetero_node& node, const hetero_tensor_desc* tensors);
// vk_elementwise.cpp
Dispatch lower_embedding(const NodeLowering& n);
Dispatch lower_norm(const NodeLowering& n);  // RMSNORM, SOFTMAX
Dispatch lower_elementwise(const NodeLowering& n);  // ADD, MUL, SWIGLU, GEGLU, SOFTCAP
Dispatch lower_convert(const NodeLowering& n);
// vk_rope_store.cpp
Dispatch lower_rope(const NodeLowering& n);  // ROPE, ROPE_SCALED
Dispatch lower_store_rows(const NodeLowering& n);
Dispatch lower_rope_pair(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index,
                         const hetero_tensor_desc* t, const std::vector<hetero_node>& stores);
Dispatch lower_store_rows_pair(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index,
                               const hetero_tensor_desc* t);

}  // namespace hetero::vk
