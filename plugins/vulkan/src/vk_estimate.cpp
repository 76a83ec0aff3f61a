#include "vk_estimate.hpp"

#include "vk_lowering.hpp"

#include <hetero/sdk/device_resource.hpp>
#include <hetero/sdk/host_cpu.hpp>
#include <hetero/sdk/kernel_estimate.hpp>

#include <cstdlib>
#include <filesystem>

namespace hetero::vk {
namespace {

constexpr uint32_t kVendorNvidia = 0x10de;

// f32 lanes of a CPU implementation's vectors: llvmpipe names its width
// ("llvmpipe (LLVM 15.0.6, 256 bits)"); 8 (256 bits) otherwise.
double cpu_lanes(const std::string& name) {
    const size_t at = name.find(" bits)");
    if (at != std::string::npos) {
        size_t b = at;
        while (b > 0 && name[b - 1] >= '0' && name[b - 1] <= '9') --b;
        const int bits = std::atoi(name.c_str() + b);
        if (bits >= 128) return bits / 32.0;
    }
    return 8.0;
}

std::string resource_of(const DeviceInfo& d) {
    if (d.kind == HETERO_DEVICE_CPU) return sdk::kHostResource;
    const char* kind = d.kind == HETERO_DEVICE_GPU ? "gpu" : "device";
    std::string r = sdk::resource_from_uuid(d.device_uuid, kind);
    if (r.empty() && d.has_pci) r = sdk::resource_from_pci(d.pci_domain, d.pci_bus, d.pci_device, d.pci_function, kind);
    if (r.empty()) r = sdk::resource_from_name(d.vendor_id, d.name, kind);
    return r;
}

// Host seconds of one execute + wait of a one-dispatch executable on an idle
// device, medians of 200 with bench_op_estimates on 2026-11-24: lavapipe
// 28-56 us (2-core AMD EPYC VM), NVIDIA H100 (driver 580.159.04) 44-55 us.
constexpr double kLaunchSecondsCpu = 40e-6;
constexpr double kLaunchSecondsGpu = 50e-6;

// Pipeline creation before the first token. lavapipe: `hetero run` of the
// default model spent ~0.39 s more in its first execute with empty shader
// caches (hetero's and Mesa's) than with warm ones (2026-11-24). H100: the
// first compiles of bench_op_estimates' cases, which between them use the
// shaders a model does, added up to ~2.1 s with an empty cache. Whether the
// cache is warm is judged from the provider's pipeline cache file: lavapipe
// stores nothing in it (32 bytes; Mesa keeps its own cache beside it, written
// in the same runs), so there the file's existence counts; a GPU's holds
// every pipeline built (1.4 MB on the H100 after the conformance kit), so it
// counts from 256 KiB, a guess at a model's share.
constexpr double kPipelinesColdCpu = 0.4;
constexpr double kPipelinesColdGpu = 2.0;
constexpr double kPipelinesWarm = 0.05;
constexpr uintmax_t kWarmGpuCacheBytes = 256 * 1024;

// lavapipe (Mesa 22.3.6, LLVM 15; the provider's compact shaders) on the
// 2-core AMD EPYC (Zen 5) VM, props peak 166 GFLOP/s and bandwidth 50 GB/s,
// measured with bench_op_estimates (bench/op_estimates.cpp) on 2026-11-24 at
// TinyLlama shapes (M = K = 2048; 32 heads of 64, 4 KV heads). GFLOP/s
// reached: matvec (N = 1, weights streaming from DRAM) Q4_0 3.3, Q8_0 2.3,
// F16 1.5, F32 1.3; GEMM (N = 128; N = 16 costs as much as 64) 4.8-5.2 for
// every weight type (an earlier, busier run: F32 2.4); attention 0.5-0.6
// (one query), 1.15 (128 queries); SwiGLU 1.8; RoPE 1.6; RMSNorm and add
// moved 2.6 and 3.5 GB/s. Each further dispatch of an executable cost 15-45
// us (chains of 9 tiny adds, two runs).
constexpr sdk::KernelFactors kCpuDevice = {
    {0.0079, 0.0088, 0.0088, 0.0136, 0.0199},
    {1.0, 1.0, 1.0, 1.0, 1.0},
    {0.029, 0.030, 0.030, 0.031, 0.031},
    {0.031, 0.031, 0.031, 0.031, 0.031},  // the coopmat GEMM, every weight type it takes
    0.0,
    0.0034, 0.0069, 0.0069,
    0.0098, 0.0107,
    0.07, 0.051,
    25e-6,
};

// GPUs. NVIDIA H100 80GB HBM3 (driver 580.159.04, Vulkan 1.4; props peak
// 50.7 TFLOP/s from 132 SMs at the assumed 1.5 GHz, bandwidth by the SDK's
// rule peak / 20 = 2.5 TB/s), bench_op_estimates on two machines,
// 2026-11-24, at the shapes above: one-token matmuls 6.6-9.3 us (F32 streamed
// 1.85 TB/s, F16 0.9, Q8_0 0.67, Q4_0 0.27; BENCHMARKS.md's decode streams
// Q4_0 gate/up at 713 GB/s); GEMM N = 128 on the coopmat shaders 14-17 (Q4_0)
// and 12-14 (Q8_0) TFLOP/s (BENCHMARKS: ~71 at the 1.1B model's N = 512),
// the f32 GEMM for F16/F32 weights 5.2-5.9; attention with 128 queries
// 0.5-1.8 TFLOP/s (f32 caches), 2.3-2.9 (f16 caches, coopmat); RMSNorm,
// SwiGLU and add over 128 x 2048-5632 moved 226-330, 915-1,034 and 373-677
// GB/s, RoPE 6.7-9.4 us; each further dispatch 0.8-2.4 us. Timings near the
// launch's own noise (~10 us) are rough. Other GPUs were not measured and
// get the same factors.
constexpr sdk::KernelFactors kGpuDevice = {
    {0.5, 0.5, 0.5, 0.5, 0.5},
    {0.7, 0.4, 0.4, 0.27, 0.2},
    {0.11, 0.11, 0.11, 0.11, 0.11},
    {0.6, 0.6, 0.6, 0.6, 0.6},  // the coopmat GEMM, every weight type it takes
    0.0,
    0.003, 0.02, 0.05,
    0.005, 0.3,
    0.2, 0.1,
    2e-6,
};

}  // namespace

void fill_performance_hints(const DeviceInfo& info, hetero_device_props& p) {
    sdk::set_resource(p, resource_of(info));
    const bool cpu = info.kind == HETERO_DEVICE_CPU;
    if (cpu) {
        // A CPU implementation runs on the host's cores (lavapipe: one thread
        // per core): their f32 FMA rate, two FMA pipes assumed, and the
        // host's bandwidth hint.
        const int cores = sdk::host_cores();
        p.compute_units = uint32_t(cores);
        p.peak_gflops = double(cores) * cpu_lanes(info.name) * 2.0 * 2.0 * sdk::host_cpu_mhz() / 1000.0;
        p.peak_bandwidth_gbs = sdk::host_bandwidth_gbs_hint(cores);
    } else if (info.vendor_id == kVendorNvidia && info.sm_count) {
        // Vulkan reports no clock: 128 f32 lanes per SM (Ampere and later) at
        // an assumed 1.5 GHz, a hint (an H100 SXM boosts to 1.98 GHz).
        p.compute_units = info.sm_count;
        p.peak_gflops = double(info.sm_count) * 256.0 * 1.5;
    }
    // Neither API reports memory bandwidth: GPUs leave it 0 (unknown).
    p.launch_seconds_hint = cpu ? kLaunchSecondsCpu : kLaunchSecondsGpu;
    const std::string cache = pipeline_cache_path(info.uuid, info.driver_version);
    std::error_code ec;
    const uintmax_t bytes = cache.empty() ? 0 : std::filesystem::file_size(cache, ec);
    const bool warm = !ec && !cache.empty() && (cpu || bytes >= kWarmGpuCacheBytes);
    p.compile_seconds_hint = warm ? kPipelinesWarm : cpu ? kPipelinesColdCpu : kPipelinesColdGpu;
}

double estimate_seconds(const DeviceInfo& info, const hetero_device_props& props, const hetero_node& node,
                        const hetero_tensor_desc* t) {
    sdk::KernelChoice choice;
    if (node.op == HETERO_OP_MATMUL) {
        // The matvec shaders up to kMatvecMaxRows tokens, each reading the
        // weights again; above, the GEMM in whole kGemmTile-row tiles.
        choice.matvec = t[node.inputs[0]].shape[0] <= kMatvecMaxRows;
        choice.gemm_tile = kGemmTile;
        choice.tensor_cores = !choice.matvec && info.coopmat_f16 && coop_gemm_weights(t[node.inputs[1]].dtype);
    } else if (node.op == HETERO_OP_ATTENTION || node.op == HETERO_OP_ATTENTION_EXT) {  // ATTENTION_SEQS: the per-row kernel
        choice.tensor_cores = info.coopmat_f16 && t[node.inputs[1]].dtype == HETERO_DTYPE_F16;
    }
    return sdk::kernel_estimate_seconds(info.kind == HETERO_DEVICE_CPU ? kCpuDevice : kGpuDevice, props, choice, node, t);
}

}  // namespace hetero::vk
