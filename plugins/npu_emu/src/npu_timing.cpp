#include "npu_timing.hpp"

#include <hetero/sdk/graph_check.hpp>

#include <algorithm>

namespace hetero::npu {

namespace {

int64_t round_up(int64_t v, int64_t to) { return to > 1 ? (v + to - 1) / to * to : v; }

}  // namespace

bool runs_w8a8(uint32_t weight_dtype) { return weight_dtype != HETERO_DTYPE_F16 && weight_dtype != HETERO_DTYPE_BF16; }

std::string profile_op(const hetero_node& node, const hetero_tensor_desc* tensors) {
    if (node.op == HETERO_OP_MATMUL) return runs_w8a8(tensors[node.inputs[1]].dtype) ? "matmul_w8a8" : "matmul_f16";
    return sdk::op_name(node.op);
}

double matmul_seconds(const NpuProfile& p, const hetero_node& node, const hetero_tensor_desc* t) {
    const hetero_tensor_desc& x = t[node.inputs[0]];
    const hetero_tensor_desc& w = t[node.inputs[1]];
    const int64_t n = x.shape[0], k = sdk::row_width(x), m = w.shape[0];
    // Stage performance: the systolic array works in whole tiles.
    const int64_t nt = round_up(n, p.tile_rows), mt = round_up(m, p.tile_cols);
    // Order: few activation rows against a large weight reload weight tiles
    // (a one-row GEMV streams the weight once). Shape: k > m (FFN-down) keeps
    // less of the weight stationary.
    const double order = n == 1 ? 1.0 : std::clamp(p.order_knee_rows / double(n), 1.0, p.order_penalty_max);
    const double shape = std::clamp(double(k) / double(std::max<int64_t>(1, m)), 1.0, p.shape_penalty_max);
    const bool int8 = runs_w8a8(w.dtype);
    const double rate = (int8 ? p.int8_gops : p.fp16_gflops) * 1e9;
    const double compute = rate > 0 ? 2.0 * double(nt) * double(k) * double(mt) * order * shape / rate : 1e30;
    const double weight_bytes = double(m) * double(k) * (int8 ? 1.0 : 2.0);
    const double bytes = weight_bytes + double(n) * double(k + m) * 4.0;
    return std::max(compute, bytes / (p.bandwidth_gbs * 1e9));
}

double graph_mflop(const hetero_graph& g) {
    double flop = 0;
    for (uint32_t i = 0; i < g.n_nodes; ++i) {
        const hetero_node& nd = g.nodes[i];
        if (nd.op != HETERO_OP_MATMUL) continue;
        const hetero_tensor_desc& x = g.tensors[nd.inputs[0]];
        const hetero_tensor_desc& w = g.tensors[nd.inputs[1]];
        flop += 2.0 * double(x.shape[0]) * double(sdk::row_width(x)) * double(w.shape[0]);
    }
    return flop / 1e6;
}

double compile_seconds(const NpuProfile& p, double mflop) { return (p.compile_ms_base + p.compile_ms_per_mflop * mflop) / 1000.0; }

}  // namespace hetero::npu
