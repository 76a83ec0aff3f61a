#include "cl_estimate.hpp"

#include <hetero/sdk/kernel_estimate.hpp>

namespace hetero::opencl {
namespace {

// PoCL 3.1 (LLVM 15) on the 2-core AMD EPYC (Zen 5) VM, props peak 166
// GFLOP/s and bandwidth 50 GB/s, measured with bench_op_estimates
// (bench/op_estimates.cpp) on 2026-11-24 at TinyLlama shapes (M = K = 2048;
// 32 heads of 64, 4 KV heads), the fastest of four runs: the VM is shared,
// and with one core taken by another process rows took twice as long.
// GFLOP/s reached: matvec (N = 1, weights streaming from DRAM) Q4_0 and Q8_0
// 7.3, F16 2.9, F32 6.5; GEMM (N = 128; N = 16 costs as much as 64, the
// tile) Q4_0/Q8_0 17.1-17.5, F16 15.9, F32 15.9-17; attention 2.7-2.8 (one
// query) and 6.0 (128 queries); SwiGLU 12-13; RoPE 0.16 (sin/cos); RMSNorm
// moved 10 GB/s, add 147-235 GB/s (activations in cache). The CPU provider
// runs the same matmuls 7-70x faster (see plugins/cpu/src/cpu_estimate.cpp).
constexpr sdk::KernelFactors kCpuDevice = {
    {0.039, 0.018, 0.018, 0.044, 0.044},
    {1.0, 1.0, 1.0, 1.0, 1.0},
    {0.10, 0.096, 0.096, 0.104, 0.104},
    {0.104, 0.104, 0.104, 0.104, 0.104},
    0.0,
    0.017, 0.036, 0.036,
    0.001, 0.075,
    2.9, 0.2,
    1e-6,  // measured 0.8-1.6 us per further kernel of a chain of tiny adds
};

// GPUs. NVIDIA H100 80GB HBM3 (CUDA 13.0 OpenCL, driver 580.159.04; props
// peak 66.9 TFLOP/s, bandwidth from the SDK's rule for GPUs, peak / 20 =
// 3.35 TB/s), bench_op_estimates on two machines, 2026-11-24, at the shapes
// above. One-token matmuls took 15-35 us at 2048 x 2048 (launch-bound; the
// round trip they are measured against moved between 30 and 53 us), F32
// streaming ~1.1 TB/s; BENCHMARKS.md's 8192 x 8192 matvecs stream Q4_0 at
// 576 GB/s, Q8_0 996, F16 1,400. GEMM N = 128 on tensor cores 18-29 (Q4_0)
// and 16-24 (Q8_0) TFLOP/s (BENCHMARKS: 58-72 at the 1.1B model's N = 512),
// the f32 GEMM for F16/F32 weights 5.1-6.0. Attention with 128 queries:
// 1.3-1.6 TFLOP/s (f32 caches), 3.1-6.5 (f16 caches, tensor cores). Each
// further kernel of an executable: 4.6-7.5 us (the enqueue). Other GPUs were
// not measured and get the same factors.
// 2026-11-25, same H100, bench_op_estimates with prefill sizes: tensor-core
// GEMMs take a fixed ~44 us plus their work at ~100 TFLOP/s (Q4_0: 1.49 x the
// f32 peak) or ~80 (Q8_0: 1.2): 2048 x 2048 at N = 16/128/512/2048 55/54/84/
// 223 us (Q4_0), 62/66/101/286 (Q8_0); 11008 x 4096 Q4_0 at N = 128/512/4096
// 176/533/3,718 us (66-99 TFLOP/s). The earlier single factor (0.6, no fixed
// part) over-predicted N >= 512 by 1.4-2.5x. One-token Q4_0 matvecs now
// stream 11008 x 4096 at 1,150 GB/s (22 us; 0.17 of the bandwidth rule
// assumed 570): 0.30. Inside an executable the enqueue of the next kernel
// overlaps the running one, so a decode layer pays the GPU's gap between
// dependent kernels (2-3 us), not the 6 us a chain of empty kernels costs
// the host: with 6 us the 1.1B model's decode was predicted at 3.5 ms/token
// for 1.5 measured, and the a-priori plan chose Vulkan (0.81x / 0.66x).
constexpr sdk::KernelFactors kGpuDevice = {
    {0.5, 0.5, 0.5, 0.5, 0.5},
    {0.4, 0.42, 0.4, 0.30, 0.30},
    {0.1, 0.1, 0.1, 0.1, 0.1},
    {0.6, 0.6, 0.6, 1.2, 1.49},
    44e-6,
    0.01, 0.022, 0.07,
    0.3, 0.3,
    0.3, 0.3,
    2.5e-6,
};

}  // namespace

double estimate_seconds(const ClDevice& device, const hetero_device_props& props, const GemmConfig& gemm, bool mma,
                        const hetero_node& node, const hetero_tensor_desc* t) {
    const bool cpu = device.info().type & CL_DEVICE_TYPE_CPU;
    sdk::KernelChoice choice;
    if (node.op == HETERO_OP_MATMUL) {
        const uint32_t wtype = t[node.inputs[1]].dtype;
        choice.matvec = t[node.inputs[0]].shape[0] == 1;
        // The GEMM runs whole tiles of activation rows (cl_matmul.cpp).
        choice.tensor_cores = !choice.matvec && mma && mma_weight_type(wtype);
        choice.gemm_tile = choice.tensor_cores ? mma_tiling().tile_n() : gemm.bn();
    } else if (node.op == HETERO_OP_ATTENTION || node.op == HETERO_OP_ATTENTION_EXT) {
        const hetero_tensor_desc& q = t[node.inputs[0]];
        // Tensor cores take prefill over f16 caches at every head dim up
        // to 256 (cl_attention.cpp; unless that instance failed to
        // build), computing whole 16-column steps of it: 4 flops a score
        // per head dim (q.k and p v) of the dim rounded up, where
        // sdk::node_work counts the real one.
        const int64_t hd = q.shape[2];
        const MmaAttentionKernel* kernel = mma_attention_kernel(hd);
        choice.tensor_cores = mma && q.shape[0] > 1 && t[node.inputs[1]].dtype == HETERO_DTYPE_F16 && kernel &&
                              device.attention_program_usable(*kernel);
        if (choice.tensor_cores) choice.attention_flops_scale = (4.0 * double((hd + 15) / 16 * 16) + 5.0) / (4.0 * double(hd) + 5.0);
    }
    return sdk::kernel_estimate_seconds(cpu ? kCpuDevice : kGpuDevice, props, choice, node, t);
}

}  // namespace hetero::opencl
