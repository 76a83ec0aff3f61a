// Lowers graph nodes to compute dispatches (shader, specialization constants,
// push constants, grid, operand tensors) and decides which nodes this
// device can run.
#pragma once

#include "vk_device.hpp"
#include "vk_pipelines.hpp"

#include <hetero/sdk/fusion.hpp>

#include <string>
#include <vector>

namespace hetero::vk {

struct Dispatch {
    std::string shader;
    std::vector<uint32_t> spec;
    PushConstants push;
    uint32_t groups[3] = {1, 1, 1};
    int32_t operand[kOperandBindings] = {-1, -1, -1, -1, -1, -1, -1, -1};  // in0..in3, out0..out2, in4
};

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

// Consecutive independent nodes of one kind that one dispatch can run
// together, which saves the fixed cost of a dispatch (large for decode):
// up to three MATMULs reading the same activations with quantized
// weights of one type and row width (the Q, K and V projections; gate and
// up; multi-matvec for decode, a multi coopmat GEMM for prefill), two ROPEs with the same positions and parameters (Q and K), two
// STORE_ROWS with the same positions into caches of one shape (K and V).
constexpr size_t kMaxGroup = 3;
size_t max_group_size(const hetero_node& first);
bool can_join_group(const DeviceInfo& dev, const hetero_node& first, const hetero_node& next, const hetero_tensor_desc* tensors);
// `norm`: the RMSNORM producing the members' x, run inside the dispatch
// (see can_fuse_norm), or null; `swiglu`: the SWIGLU of the two members'
// outputs, likewise (see can_fuse_swiglu), or null.
// Internal f32 activations written by an RMSNORM, an elementwise op or the
// coopmat attention and read only as x by coopmat GEMMs are stored as f16
// instead (the producer's "_h" shader, the GEMMs' "xh" shaders): the GEMMs
// round x to f16 anyway, so results do not change, and every GEMM workgroup
// reads half the bytes and converts nothing. HETERO_VK_XH=0 turns it off.
void store_gemm_inputs_in_f16(const DeviceInfo& dev, const hetero_tensor_desc* tensors, size_t n_tensors, std::vector<Dispatch>& ds);

// `stores`: for a rope pair, the STORE_ROWS pair it also runs (see
// can_fuse_rope_store), or empty.
Dispatch lower_group(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index,
                     const hetero_tensor_desc* tensors, const hetero_node* norm = nullptr, const hetero_node* swiglu = nullptr,
                     const std::vector<hetero_node>& stores = {});

// Can a Q/K rope pair (`ropes`) also store the rotated K rows and V into the
// caches, saving the dispatch of the STORE_ROWS pair (`stores`: K's, then
// V's)? The caller checks that nothing else reads the rotated K.
bool can_fuse_rope_store(const DeviceInfo& dev, const std::vector<hetero_node>& ropes, const std::vector<hetero_node>& stores,
                         const hetero_tensor_desc* tensors);

// Can a decode gate/up pair (`members`) write silu(gate) * up itself, saving
// the dispatch of `swiglu`? The caller checks that nothing else reads the
// members' outputs.
bool can_fuse_swiglu(const std::vector<hetero_node>& members, const hetero_node& swiglu, const hetero_tensor_desc* tensors);

// Can a decode multi-matvec starting with `first` normalise its x itself,
// saving the dispatch of `norm` (the RMSNORM writing that x)? The caller
// checks that nothing else reads the norm's output.
bool can_fuse_norm(const DeviceInfo& dev, const hetero_node& norm, const hetero_node& first, const hetero_tensor_desc* tensors);
// The most output rows (all members together) of a group that normalises its
// own x: on an H100 the Q/K/V group gained (15.0 -> 11.5 us with the norm's
// dispatch) but a gate/up group of 11,264 rows lost (23.1 -> 25.1 us), since
// every workgroup re-reads x and the norm weight; with SwiGLU fused too the
// gate/up group gained in GPU time (23.7 -> 21.4 us) yet decode of a Q8_0
// model measured 3 % slower, so it stays unfused (HETERO_VK_NORM_ROWS).
uint64_t norm_fusion_max_rows();

}  // namespace hetero::vk
