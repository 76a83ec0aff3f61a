// The scalar reference of every op of the C ABI: plain loops written for
// clarity and exactness (double accumulation), no SIMD. Providers and the core
// are checked against it; it defines what each op computes.
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>

namespace hetero::reference {

// Runs one node. `tensors` is the graph's descriptor array and tensor_data[i]
// points at tensor i's bytes (dense, row-major, dtype-encoded). The node must
// be well formed (hetero::sdk::check_node); data-dependent problems (an
// embedding id or a position out of range) throw hetero::sdk::Error with
// HETERO_ERR_INVALID_ARGUMENT before anything is written.
void run_node(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* tensor_data);

// Checks the graph (hetero::sdk::check_graph, throwing on a malformed one) and
// runs its nodes in order. Every tensor, internal ones included, needs memory.
void run_graph(const hetero_graph& graph, uint8_t* const* tensor_data);

// The W8A8 matmul of an int8 NPU, defined exactly: x [n, k] f32 times W^T,
// W [m, k] of any weight dtype. Steps s = max|.|/127 in f32 over each W row
// (over all of W when w_per_tensor) and over all of x; q(v) =
// clamp(round-half-away(v / s), -127, 127), 0 when s = 0; y = f32(int32 sum
// of q(x) q(w)) * (s_x * s_w). Not part of run_node: the ABI's matmul is a
// float op and an int8 device answers it within the W8A8 error bound.
void matmul_w8a8(const float* x, int64_t n, const hetero_tensor_desc& w, const uint8_t* w_data, bool w_per_tensor, float* y);

}  // namespace hetero::reference
