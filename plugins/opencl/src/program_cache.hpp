// Builds one of the provider's programs for a device, reusing program
// binaries cached on disk. Entries are keyed by device name, driver version,
// build options and a hash of the source, so a changed source, option or
// driver builds anew; an unreadable or corrupted entry is ignored and rebuilt
// from source. Each file is named <label>-<key>.bin, the label saying which
// program it holds ("base", "attention_mma_hd64").
#pragma once

#include <CL/cl.h>

#include <string>
#include <string_view>

namespace hetero::opencl {

// $XDG_CACHE_HOME/hetero/opencl, else ~/.cache/hetero/opencl, else "" (no cache).
std::string default_cache_dir();

struct BuiltProgram {
    cl_program program = nullptr;
    bool from_cache = false;
};

// Whether `cache_dir` holds an entry for this program (header checked; the
// payload is verified only when build_program loads it).
bool program_cached(const std::string& label, std::string_view source, const std::string& options, const std::string& device_key,
                    const std::string& cache_dir);

// Throws sdk::Error(HETERO_ERR_COMPILE_FAILED) with the build log when the
// source does not build. `cache_dir` empty disables the cache.
BuiltProgram build_program(cl_context ctx, cl_device_id dev, const std::string& label, std::string_view source,
                           const std::string& options, const std::string& device_key, const std::string& cache_dir);

}  // namespace hetero::opencl
