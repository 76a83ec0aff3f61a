// The emulated NPU's clock: modelled seconds of nodes, executes and graph
// builds from the SoC profile (profiles/soc/SCHEMA.md, "Time of one matmul";
// HeteroLLM §3: stage, order- and shape-sensitive performance). Nothing here
// sleeps: the times are reported, never spent.
#pragma once

#include "npu_profile.hpp"

#include <hetero/ep_api.h>

#include <string>

namespace hetero::npu {

// The profile's name for what the NPU would run for this node
// ("matmul_w8a8", "matmul_f16", "attention", ...).
std::string profile_op(const hetero_node& node, const hetero_tensor_desc* tensors);

// Whether a matmul with this weight dtype runs in int8 (W8A8) here.
bool runs_w8a8(uint32_t weight_dtype);

// Modelled seconds of one matmul node, launch excluded.
double matmul_seconds(const NpuProfile& p, const hetero_node& node, const hetero_tensor_desc* tensors);

// Work of a graph in MFLOP (its matmuls), which graph builds grow with.
double graph_mflop(const hetero_graph& graph);

// Modelled seconds of building a static-shape graph of this much work.
double compile_seconds(const NpuProfile& p, double mflop);

}  // namespace hetero::npu
