// The roofline estimate of one node, written once for everyone who predicts
// time without measuring it: providers (op_supported's est_seconds) and the
// core's prior cost model. A node's time is the larger of its arithmetic at
// the device's peak and its memory traffic at the device's bandwidth, each
// scaled by how close the provider's kernels come to them, plus a fixed cost
// per dispatched node.
//
// The work and traffic come from the node's descriptors alone. Attention
// cannot see its positions (they are data), so it is costed as if the query
// rows attended to (C + 1) / 2 cache rows on average, C being the cache's
// rows: the mean over positions spread evenly across the cache. A caller who
// knows the mean attended rows `a` gets that by passing a cache of 2a - 1 rows.
#pragma once

#include <hetero/ep_api.h>
#include <hetero/sdk/graph_check.hpp>

#include <algorithm>
#include <cstdint>

namespace hetero::sdk {

struct NodeWork {
    double flops = 0;  // arithmetic operations (a multiply-add counts 2)
    double bytes = 0;  // bytes read and written in device memory, weights included
};

// Mean cache rows one attention query reads, for a cache of `cache_rows` rows
// (see the header comment).
inline double attention_mean_rows(int64_t cache_rows) { return (double(cache_rows) + 1.0) / 2.0; }

// Flops and bytes of one well-formed node (check_node passed) over `t`, the
// graph's descriptors. The element-wise figures are nominal per element (a
// transcendental counts as a few flops): those ops are bound by bytes on
// every device the project runs on.
inline NodeWork node_work(const hetero_node& node, const hetero_tensor_desc* t) {
    auto bytes_of = [&](int32_t id) { return double(tensor_bytes(t[id])); };
    const hetero_tensor_desc& out = t[node.output];
    const double out_elems = double(element_count(out));
    NodeWork w;
    switch (node.op) {
        case HETERO_OP_EMBEDDING: {
            // Reads only the looked-up rows of the table.
            const hetero_tensor_desc& table = t[node.inputs[0]];
            const double rows = double(t[node.inputs[1]].shape[0]);
            w.flops = out_elems;  // dequantize
            w.bytes = bytes_of(node.inputs[1]) + rows * double(row_bytes(table.dtype, table.shape[1])) + bytes_of(node.output);
            return w;
        }
        case HETERO_OP_MATMUL: {
            const hetero_tensor_desc& x = t[node.inputs[0]];
            const hetero_tensor_desc& wt = t[node.inputs[1]];
            w.flops = 2.0 * double(x.shape[0]) * double(row_width(x)) * double(wt.shape[0]);
            if (node.n_inputs == 3) w.flops += out_elems;
            for (uint32_t i = 0; i < node.n_inputs; ++i) w.bytes += bytes_of(node.inputs[i]);
            w.bytes += bytes_of(node.output);
            return w;
        }
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: {
            const hetero_tensor_desc& q = t[node.inputs[0]];
            const hetero_tensor_desc& k = t[node.inputs[1]];
            const double n = double(q.shape[0]), heads = double(q.shape[1]), hd = double(q.shape[2]);
            const double cache_rows = double(k.shape[0]);
            // ATTENTION_SEQS: each row attends to its own sequence of iparams[1] rows.
            const bool seqs = node.op == HETERO_OP_ATTENTION_SEQS;
            const double attended = attention_mean_rows(seqs ? std::max<int64_t>(1, node.iparams[1]) : k.shape[0]);
            // Scores q.k and the weighted sum of v: 2 flops each per head dim;
            // the softmax ~5 per score.
            w.flops = n * heads * attended * (4.0 * hd + 5.0);
            // Every cache row some query attends to is read (at least) once:
            // for queries at consecutive positions, the mean plus half the
            // spread of the chunk, at most the whole cache; rows of stacked
            // sequences each read their own.
            const double rows_read = seqs ? n * attended : std::min(cache_rows, attended + (n - 1.0) / 2.0);
            const double cache_row_bytes = double(row_bytes(k.dtype, row_width(k)));
            w.bytes = bytes_of(node.inputs[0]) + bytes_of(node.inputs[3]) + 2.0 * rows_read * cache_row_bytes + bytes_of(node.output);
            return w;
        }
        case HETERO_OP_STORE_ROWS: {
            // Writes only the stored rows of the cache.
            const double rows = double(t[node.inputs[0]].shape[0]);
            w.flops = out.dtype == HETERO_DTYPE_F32 ? 0.0 : rows * double(row_width(out));  // rounding to f16
            w.bytes = bytes_of(node.inputs[0]) + bytes_of(node.inputs[1]) + rows * double(row_bytes(out.dtype, row_width(out)));
            return w;
        }
        case HETERO_OP_RMSNORM: w.flops = 4.0 * out_elems; break;   // square, sum, scale, weight
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: w.flops = 6.0 * out_elems; break;  // angle, sin/cos per pair, 2x2 rotation
        case HETERO_OP_SWIGLU: w.flops = 6.0 * out_elems; break;    // exp, add, divide, two multiplies
        case HETERO_OP_GEGLU: w.flops = 9.0 * out_elems; break;     // cube, tanh, four multiplies, add
        case HETERO_OP_SOFTCAP: w.flops = 3.0 * out_elems; break;   // divide, tanh, multiply
        case HETERO_OP_SOFTMAX: w.flops = 5.0 * out_elems; break;   // scale, max, exp, sum, divide
        case HETERO_OP_CONVERT: w.flops = 3.0 * out_elems; break;   // block max / scale / round
        case HETERO_OP_ADD:
        case HETERO_OP_MUL: w.flops = out_elems; break;
        default: break;
    }
    for (uint32_t i = 0; i < node.n_inputs; ++i) w.bytes += bytes_of(node.inputs[i]);
    w.bytes += bytes_of(node.output);
    return w;
}

// Index of a weight dtype in a provider's per-type efficiency tables:
// f32 0, f16 1, bf16 2, q8_0 3, q4_0 4 (other dtypes share slot 0).
inline size_t weight_type_slot(uint32_t dtype) {
    switch (dtype) {
        case HETERO_DTYPE_F16: return 1;
        case HETERO_DTYPE_BF16: return 2;
        case HETERO_DTYPE_Q8_0: return 3;
        case HETERO_DTYPE_Q4_0: return 4;
        default: return 0;
    }
}

// What a provider's kernels reach on one device.
struct Roofline {
    double peak_gflops = 0;            // f32 peak (hetero_device_props.peak_gflops)
    double bandwidth_gbs = 0;          // memory bandwidth (hetero_device_props.peak_bandwidth_gbs)
    // The rates the provider's kernels reach, as fractions of the two above.
    // Usually at most 1; above 1 where the hint undersells the kernel (int8
    // dot products against an f32 peak, activations served from cache).
    double compute_efficiency = 1.0;
    double bandwidth_efficiency = 1.0;
    double dispatch_seconds = 0;       // fixed cost of one node inside an executable (a kernel launch)
};

// Seconds of `w` on `r`: the slower of compute and memory, plus the dispatch.
inline double roofline_seconds(const NodeWork& w, const Roofline& r) {
    const double compute = w.flops / (std::max(r.peak_gflops, 1e-3) * 1e9 * std::max(r.compute_efficiency, 1e-6));
    const double memory = w.bytes / (std::max(r.bandwidth_gbs, 1e-3) * 1e9 * std::max(r.bandwidth_efficiency, 1e-6));
    return std::max(compute, memory) + r.dispatch_seconds;
}

// Figures for a device that reports 0 (unknown) peak or bandwidth, by
// hetero_device_kind: deliberately modest, so an unknown device is not
// preferred over one that reports real figures.
//   CPU: 100 GFLOP/s, 20 GB/s (a few cores of a desktop or server CPU)
//   GPU: 5,000 GFLOP/s, 200 GB/s (a small discrete or a large integrated GPU)
//   NPU: 1,000 GFLOP/s, 30 GB/s (f32 work on a phone NPU; its int8 rate is higher)
//   other: 50 GFLOP/s, 10 GB/s
// Neither OpenCL nor Vulkan reports a GPU's memory bandwidth, so a GPU that
// reports its peak gets peak / 20 GB/s instead (GPUs are built with 10-80
// flops per byte: H100 SXM 67 TFLOP/s f32 / 3.35 TB/s = 20, A100 13,
// RTX 4090 82, integrated GPUs 8-40), at least 25 GB/s.
inline double default_peak_gflops(uint32_t kind) {
    switch (kind) {
        case HETERO_DEVICE_CPU: return 100.0;
        case HETERO_DEVICE_GPU: return 5000.0;
        case HETERO_DEVICE_NPU: return 1000.0;
        default: return 50.0;
    }
}
inline double default_bandwidth_gbs(uint32_t kind) {
    switch (kind) {
        case HETERO_DEVICE_CPU: return 20.0;
        case HETERO_DEVICE_GPU: return 200.0;
        case HETERO_DEVICE_NPU: return 30.0;
        default: return 10.0;
    }
}

// The device's own peak and bandwidth, or the defaults above where it
// reports 0; efficiencies 1 and no dispatch cost (the caller sets those).
inline Roofline roofline_from_props(const hetero_device_props& p) {
    Roofline r;
    r.peak_gflops = p.peak_gflops > 0 ? p.peak_gflops : default_peak_gflops(p.kind);
    if (p.peak_bandwidth_gbs > 0) r.bandwidth_gbs = p.peak_bandwidth_gbs;
    else if (p.kind == HETERO_DEVICE_GPU && p.peak_gflops > 0) r.bandwidth_gbs = std::max(p.peak_gflops / 20.0, 25.0);
    else r.bandwidth_gbs = default_bandwidth_gbs(p.kind);
    return r;
}

}  // namespace hetero::sdk
