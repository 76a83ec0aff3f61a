// The estimate rule of providers whose kernels are measured per op family
// (OpenCL, Vulkan): sdk::node_work's flops and bytes on sdk::roofline_from_props'
// device, each op family at the fractions of peak and bandwidth its kernels
// were measured to reach. The factors are the provider's, per device class;
// which kernel runs a node (matvec or GEMM, its tile, tensor cores) is the
// provider's choice too, passed in.
#pragma once

#include <hetero/ep_api.h>
#include <hetero/sdk/roofline.hpp>

#include <cstdint>

namespace hetero::sdk {

// What a provider's kernels reach, as fractions of the props' peak_gflops
// (compute) and of the bandwidth the roofline uses (props, else the SDK's
// default). Per weight type arrays are indexed by weight_type_slot.
struct KernelFactors {
    // Matmul through the matvec kernels: compute and weight streaming.
    double matvec_compute[5];
    double matvec_stream[5];
    // Matmul through the GEMM (work counted in whole tiles of activation
    // rows), and through the GEMM on tensor cores.
    double gemm[5];
    double gemm_tensor[5];
    double gemm_tensor_fixed_seconds;  // per tensor-core GEMM (activation staging, tails)
    double attention_decode, attention_prefill, attention_tensor;  // compute
    double rope, swiglu;                                           // compute
    double add_mul, other_stream;  // element-wise ops: bandwidth
    double dispatch_seconds;       // one more kernel inside an executable
};

// The kernel a provider runs a matmul or attention node with.
struct KernelChoice {
    bool matvec = false;              // matmul: the matvec kernels, one pass over the weights per activation row
    int64_t gemm_tile = 1;            // matmul through the GEMM: activation rows per tile
    bool tensor_cores = false;        // the GEMM or the prefill attention on tensor cores
    double attention_flops_scale = 1;  // attention work the kernel does beyond node_work's (padding)
};

// Seconds of `node` over `t` with the kernel `choice` on the device of `props`.
inline double kernel_estimate_seconds(const KernelFactors& f, const hetero_device_props& props, const KernelChoice& choice,
                                      const hetero_node& node, const hetero_tensor_desc* t) {
    Roofline r = roofline_from_props(props);
    r.dispatch_seconds = f.dispatch_seconds;
    NodeWork w = node_work(node, t);
    switch (node.op) {
        case HETERO_OP_MATMUL: {
            const hetero_tensor_desc& wt = t[node.inputs[1]];
            const size_t slot = weight_type_slot(wt.dtype);
            const int64_t n = t[node.inputs[0]].shape[0];
            if (choice.matvec) {
                w.bytes += double(n - 1) * double(tensor_bytes(wt));
                r.compute_efficiency = f.matvec_compute[slot];
                r.bandwidth_efficiency = f.matvec_stream[slot];
                break;
            }
            const int64_t tile = choice.gemm_tile;
            w.flops *= double((n + tile - 1) / tile * tile) / double(n);
            r.compute_efficiency = choice.tensor_cores ? f.gemm_tensor[slot] : f.gemm[slot];
            if (choice.tensor_cores) r.dispatch_seconds += f.gemm_tensor_fixed_seconds;
            break;
        }
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: {
            // Rows of stacked sequences each read their own rows, as decode does.
            const bool decode = t[node.inputs[0]].shape[0] == 1 || node.op == HETERO_OP_ATTENTION_SEQS;
            w.flops *= choice.attention_flops_scale;
            r.compute_efficiency = decode ? f.attention_decode : choice.tensor_cores ? f.attention_tensor : f.attention_prefill;
            break;
        }
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: r.compute_efficiency = f.rope; break;
        case HETERO_OP_SWIGLU:
        case HETERO_OP_GEGLU: r.compute_efficiency = f.swiglu; break;
        case HETERO_OP_ADD:
        case HETERO_OP_MUL: r.bandwidth_efficiency = f.add_mul; break;
        default: r.bandwidth_efficiency = f.other_stream; break;
    }
    return roofline_seconds(w, r);
}

}  // namespace hetero::sdk
