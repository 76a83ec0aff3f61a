// What each of the provider's programs is built from, and what building it
// costs. A device has a base program (every kernel but the tensor-core
// attention), built before its first executable, and, where prefill
// attention runs on tensor cores, one program per instance of
// kMmaAttentionKernels, built when an executable first needs that padded
// head dim (attention_programs.hpp). Each is cached on disk on its own
// (program_cache.hpp), keyed by its source, options and device.
#pragma once

#include "cl_device.hpp"
#include "program.hpp"

#include <CL/cl.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hetero::opencl {

struct ProgramRecipe {
    std::string label;  // "base", "attention_mma_hd64": names its cache file and its log lines
    std::string_view source;
    std::string options;
    std::vector<const char*> kernels;  // what the built program must hold
    double cold_build_seconds = 0;     // a build from source on this kind of device (figures in the .cpp)
};

// The base program: OpenCL C 1.2 plus the device's GEMM tiling; `mma`
// compiles the tensor-core GEMMs, `ptx` the inline PTX (their mma
// instructions, warp shuffles); mma without ptx is the emulation.
ProgramRecipe base_recipe(const DeviceInfo& info, const GemmConfig& gemm, bool mma, bool ptx);
// One tensor-core attention instance, with inline PTX or emulated as the
// base program was built.
ProgramRecipe attention_recipe(const DeviceInfo& info, const MmaAttentionKernel& kernel, bool ptx);

// The key the program cache files a device's programs under (with the
// source and the build options): platform, device name, driver version.
std::string program_device_key(const DeviceInfo& info);

// Seconds build_program_from() would take now: a binary load when
// `cache_dir` holds the program, else the recipe's cold build.
double seconds_to_build(const ProgramRecipe& recipe, const std::string& device_key, const std::string& cache_dir);

// Builds the recipe's program (or loads it from the cache in `cache_dir`)
// and checks its kernels; logs (info) which it was and how long it took.
// Throws sdk::Error naming the program when it does not build.
std::unique_ptr<Program> build_program_from(const ProgramRecipe& recipe, cl_context context, const DeviceInfo& info, cl_device_id device,
                                            const std::string& cache_dir, GemmConfig gemm = {}, bool mma = false);

}  // namespace hetero::opencl
