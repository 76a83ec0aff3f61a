#include "program_recipes.hpp"

#include "cl_util.hpp"
#include "kernel_source.hpp"
#include "program_cache.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace hetero::opencl {
namespace {

// Cold builds (compile_seconds_hint), seconds, from an empty program cache
// and an empty PoCL or NVIDIA compute cache. The hint adds the base program
// and one attention instance, each while neither built nor cached.
//
// PoCL's CPU device (2-core AMD EPYC VM): the base program without the
// tensor-core kernels took 62 s (bench_op_estimates, 2026-11-24; 70-77 s in
// earlier runs). With the emulated tensor-core GEMMs (HETERO_CL_MMA=emulate,
// a test mode) it took 517 s of CPU (26.6 min of wall time on the VM shared
// with other builds), and each emulated attention instance 2.5-4.7 s of CPU
// (6-13 s of wall time), 2026-11-28, compiling one graph per program
// (BENCHMARKS history, 2026-11).
constexpr double kBaseBuildSecondsCpu = 70.0;
constexpr double kBaseMmaBuildSecondsCpu = 520.0;
constexpr double kAttentionBuildSecondsCpu = 5.0;
// NVIDIA H100 (driver 580), not yet measured program by program: the one
// program holding all five attention instances took ~267 s (2026-11-27
// 23:30), and with two instances of the earlier head-dim-specific kernel
// 45-61 s that day. The base program is taken as 45 s (at most what that
// build took) and an instance as (267 - 45) / 5, about 45 s.
constexpr double kBaseBuildSecondsGpu = 45.0;
constexpr double kAttentionBuildSecondsGpu = 45.0;

// Loading a program from the program cache instead (context, binary, kernel
// checks): 19-23 ms on PoCL's CPU device and on the H100 (bench_op_estimates,
// 2026-11-24).
constexpr double kCachedProgramSeconds = 0.05;

bool cpu_device(const DeviceInfo& info) { return (info.type & CL_DEVICE_TYPE_CPU) != 0; }

// The options every program takes: OpenCL C 1.2 and exact division (the
// quantizers divide by the block maximum; exact division makes them round like
// the reference).
std::string common_options(const DeviceInfo& info) {
    std::string o = "-cl-std=CL1.2";
    if (info.correctly_rounded_div_sqrt) o += " -cl-fp32-correctly-rounded-divide-sqrt";
    return o;
}

// Extra compiler options from the environment, last so that they win.
std::string extra_options(const char* variable) {
    const char* extra = std::getenv(variable);
    return extra && *extra ? std::string(" ") + extra : std::string();
}

constexpr const char* kKernelNames[] = {
    "embedding",   "rmsnorm",     "rope",       "rope_scaled", "rope_store", "geglu", "softcap",       "swiglu",        "binary",        "softmax",   "store_rows",
    "convert_to_f32", "convert_from_f32", "quantize_q8_0", "quantize_q4_0", "matvec_q4_0", "matvec_q8_0",
    "matvec_f32",  "matvec_f16",  "matvec_bf16", "matvec_swiglu_q4_0", "matvec_swiglu_q8_0", "matvec_norm_q4_0", "matvec_norm_q8_0",
    "matvec_swiglu_norm_q4_0", "matvec_swiglu_norm_q8_0", "gemm_f32",     "gemm_f16",      "gemm_bf16", "gemm_q8_0",
    "gemm_q4_0",   "attention",   "attention_tiled", "repack_planar_q4_0", "repack_planar_q8_0", "matvec_planar_q4_0",
    "matvec_planar_q8_0", "matvec_norm_planar_q4_0", "matvec_norm_planar_q8_0", "matvec_swiglu_planar_q4_0",
    "matvec_swiglu_planar_q8_0", "matvec_swiglu_norm_planar_q4_0", "matvec_swiglu_norm_planar_q8_0",
    "matvec_norm_planar_rope_q4_0", "matvec_norm_planar_rope_q8_0",
    // K-quants (kernels/kquant.cl)
    "matvec_q4_k", "matvec_q5_k", "matvec_q6_k", "matvec_swiglu_q4_k", "matvec_swiglu_q5_k", "matvec_swiglu_q6_k",
    "matvec_norm_q4_k", "matvec_norm_q5_k", "matvec_norm_q6_k", "matvec_swiglu_norm_q4_k", "matvec_swiglu_norm_q5_k",
    "matvec_swiglu_norm_q6_k", "gemm_q4_k", "gemm_q5_k", "gemm_q6_k", "matvec_planar_q4_k", "matvec_norm_planar_q4_k",
    "matvec_swiglu_planar_q4_k", "matvec_swiglu_norm_planar_q4_k", "matvec_norm_planar_rope_q4_k", "repack_aligned_q6_k",
    "matvec_planar_q6_k", "matvec_norm_planar_q6_k", "matvec_swiglu_planar_q6_k", "matvec_swiglu_norm_planar_q6_k",
    "matvec_norm_planar_rope_q6_k", "matvec_planar_q5_k", "matvec_norm_planar_q5_k", "matvec_swiglu_planar_q5_k",
    "matvec_swiglu_norm_planar_q5_k", "matvec_norm_planar_rope_q5_k", "gemm_planar_q4_0", "gemm_planar_q8_0",
    "unpack_planar_q4_0", "unpack_planar_q8_0",
    // GGUF's other block types (kernels/quant_other.cl)
    "matvec_q4_1", "matvec_q5_0", "matvec_q5_1", "matvec_iq4_nl", "matvec_q2_k", "matvec_q3_k", "gemm_q4_1", "gemm_q5_0",
    "gemm_q5_1", "gemm_iq4_nl", "gemm_q2_k", "gemm_q3_k", "matvec_norm_q4_1", "matvec_norm_q5_0", "matvec_norm_q5_1",
    "matvec_norm_iq4_nl", "matvec_norm_q2_k", "matvec_norm_q3_k", "matvec_swiglu_q4_1", "matvec_swiglu_q5_0", "matvec_swiglu_q5_1",
    "matvec_swiglu_iq4_nl", "matvec_swiglu_q2_k", "matvec_swiglu_q3_k", "matvec_swiglu_norm_q4_1", "matvec_swiglu_norm_q5_0",
    "matvec_swiglu_norm_q5_1", "matvec_swiglu_norm_iq4_nl", "matvec_swiglu_norm_q2_k", "matvec_swiglu_norm_q3_k",
    // hetero's E0M4 (the same file)
    "matvec_e0m4", "gemm_e0m4", "matvec_norm_e0m4", "matvec_swiglu_e0m4", "matvec_swiglu_norm_e0m4"};
// Only in base programs built with the tensor-core kernels.
constexpr const char* kMmaKernelNames[] = {"gemm_mma_q4_0",      "gemm_mma_q8_0",
                                           "gemm_mma_q4_k",      "gemm_mma_q5_k", "gemm_mma_q6_k",
                                           "gemm_mma_aligned_q6_k", "gemm_mma_q4_1", "gemm_mma_q5_0", "gemm_mma_q5_1",
                                           "gemm_mma_iq4_nl", "gemm_mma_q2_k", "gemm_mma_q3_k", "gemm_mma_e0m4", "gemm_mma_planar_q4_0", "gemm_mma_planar_q8_0", "stage_x_f16"};


}  // namespace

ProgramRecipe base_recipe(const DeviceInfo& info, const GemmConfig& g, bool mma, bool ptx) {
    ProgramRecipe r;
    r.label = "base";
    r.source = kBaseSource;
    std::string& o = r.options;
    o = common_options(info);
    o += " -DGEMM_LX=" + std::to_string(g.lx) + " -DGEMM_LY=" + std::to_string(g.ly) + " -DGEMM_TM=" + std::to_string(g.tm) +
         " -DGEMM_TN=" + std::to_string(g.tn) + " -DATTN_CHUNK=" + std::to_string(kAttentionChunk) +
         " -DATTN_TILE_KEYS=" + std::to_string(kAttentionTileKeys) + " -DATTN_SLICE=" + std::to_string(kAttentionSlice);
    if (mma) {
        const MmaTiling& t = mma_tiling();
        o += " -DMMA_KERNELS -DMMA_WARPS_N=" + std::to_string(t.warps_n) + " -DMMA_WARPS_M=" + std::to_string(t.warps_m) +
             " -DMMA_FRAGS_N=" + std::to_string(t.frags_n) + " -DMMA_FRAGS_M=" + std::to_string(t.frags_m);
        if (mma_n_fastest()) o += " -DMMA_N_FASTEST";
    }
    if (ptx) o += " -DNV_PTX";
    if (ptx && sdk::env_equals("HETERO_CL_LDMATRIX", "0")) o += " -DMMA_WORD_LOADS";
    // Extra compiler options for tuning (e.g. NVIDIA's -cl-nv-verbose, whose
    // register counts HETERO_LOG=debug shows, or -cl-nv-maxrregcount=N).
    o += extra_options("HETERO_CL_BUILD_OPTIONS");
    r.kernels.assign(std::begin(kKernelNames), std::end(kKernelNames));
    if (mma) r.kernels.insert(r.kernels.end(), std::begin(kMmaKernelNames), std::end(kMmaKernelNames));
    r.cold_build_seconds = cpu_device(info) ? (mma ? kBaseMmaBuildSecondsCpu : kBaseBuildSecondsCpu) : kBaseBuildSecondsGpu;
    return r;
}

ProgramRecipe attention_recipe(const DeviceInfo& info, const MmaAttentionKernel& k, bool ptx) {
    ProgramRecipe r;
    r.label = k.name;
    r.source = kMmaAttentionSource;
    r.options = common_options(info) + " -DMMA_KERNELS -DAM_HD=" + std::to_string(k.head_dim) + " -DAM_ROWS=" + std::to_string(k.rows) +
                " -DAM_KEYS=" + std::to_string(k.keys);
    if (ptx) r.options += " -DNV_PTX";
    // HETERO_CL_ATTN_BUILD_OPTIONS: options for these programs alone (a
    // register limit for the attention but not the GEMMs, say).
    r.options += extra_options("HETERO_CL_BUILD_OPTIONS") + extra_options("HETERO_CL_ATTN_BUILD_OPTIONS");
    r.kernels = {k.name};
    r.cold_build_seconds = cpu_device(info) ? kAttentionBuildSecondsCpu : kAttentionBuildSecondsGpu;
    return r;
}

std::string program_device_key(const DeviceInfo& info) {
    return info.platform_name + "|" + info.platform_version + "|" + info.name + "|" + info.driver_version;
}

double seconds_to_build(const ProgramRecipe& recipe, const std::string& device_key, const std::string& cache_dir) {
    if (!cache_dir.empty() && program_cached(recipe.label, recipe.source, recipe.options, device_key, cache_dir)) return kCachedProgramSeconds;
    return recipe.cold_build_seconds;
}

std::unique_ptr<Program> build_program_from(const ProgramRecipe& recipe, cl_context context, const DeviceInfo& info, cl_device_id device,
                                            const std::string& cache_dir, GemmConfig gemm, bool mma) {
    const auto t0 = std::chrono::steady_clock::now();
    const BuiltProgram built = build_program(context, device, recipe.label, recipe.source, recipe.options, program_device_key(info), cache_dir);
    auto program = std::make_unique<Program>(built.program, device, recipe.kernels, built.from_cache, gemm, mma);
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    sdk::log(HETERO_LOG_INFO, "opencl",
             info.name + ": program " + recipe.label + (built.from_cache ? " loaded from the program cache in " : " built from source in ") + seconds);
    return program;
}

}  // namespace hetero::opencl
