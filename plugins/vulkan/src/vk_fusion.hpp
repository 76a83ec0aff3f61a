// Fusions of the Vulkan provider: which consecutive nodes one dispatch runs
// (node groups, with the RMSNORM before, the SWIGLU after or the K/V stores
// after them), and the f16 hand-over of a coopmat GEMM's input. The shared
// analysis (uses, residual ADDs, keeping inputs alive) is sdk/fusion.hpp;
// HETERO_VK_GROUP=0 turns node groups off.
#pragma once

#include "vk_lowering.hpp"

#include <vector>

namespace hetero::vk {

// Consecutive independent nodes of one kind that one dispatch can run
// together, which saves the fixed cost of a dispatch (large for decode):
// up to three MATMULs reading the same activations with quantized
// weights of one type and row width (the Q, K and V projections; gate and
// up; multi-matvec for decode, a multi coopmat GEMM for prefill), two ROPEs with the same positions and parameters (Q and K), two
// STORE_ROWS with the same positions into caches of one shape (K and V).
constexpr size_t kMaxGroup = 3;
size_t max_group_size(const hetero_node& first);
bool can_join_group(const DeviceInfo& dev, const hetero_node& first, const hetero_node& next, const hetero_tensor_desc* tensors);

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

// Node groups of a graph: per node, the size of the group of nodes starting
// there that one dispatch runs (1 = none; see can_join_group), outside
// residual fusions; for a group, the RMSNORM before it, the SWIGLU after it
// and the first of the STORE_ROWS pair after it that it also runs (-1 =
// none; see can_fuse_norm, can_fuse_swiglu, can_fuse_rope_store); per node,
// whether another node's dispatch runs it.
struct Groups {
    std::vector<size_t> size;
    std::vector<int64_t> norm, swiglu, stores;
    std::vector<bool> absorbed;
};

// `uses`: sdk::count_uses(g); `fusions`: the residual ADDs fused into
// matmuls. `planned` keeps the members' inputs (and a fused norm's) alive
// through each group.
Groups find_groups(const DeviceInfo& dev, const sdk::Graph& g, const std::vector<uint32_t>& uses, const std::vector<ResidualFusion>& fusions,
                   sdk::Graph& planned);

// Internal f32 activations written by an RMSNORM, an elementwise op or the
// coopmat attention and read only as x by coopmat GEMMs are stored as f16
// instead (the producer's "_h" shader, the GEMMs' "xh" shaders): the GEMMs
// round x to f16 anyway, so results do not change, and every GEMM workgroup
// reads half the bytes and converts nothing. HETERO_VK_XH=0 turns it off.
void store_gemm_inputs_in_f16(const DeviceInfo& dev, const hetero_tensor_desc* tensors, size_t n_tensors, std::vector<Dispatch>& ds);

}  // namespace hetero::vk
