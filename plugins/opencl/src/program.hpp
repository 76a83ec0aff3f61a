// A built program of the provider on one device (cl_program), with the
// work-group limit of every kernel it was checked to hold: the base program
// (every kernel but the tensor-core attention) or one tensor-core attention
// instance (program_recipes.hpp says what each is built from).
#pragma once

#include <CL/cl.h>

#include <map>
#include <string>
#include <vector>

namespace hetero::opencl {

// Tile shape of the GEMM kernels (see kernels/gemm.cl): lx x ly work-items,
// each computing tm (along M) x tn (along N) outputs; tm and tn multiples of 4.
struct GemmConfig {
    int lx = 16, ly = 8, tm = 4, tn = 8;
    int bm() const { return lx * tm; }
    int bn() const { return ly * tn; }
    int wg() const { return lx * ly; }
};

class Program {
public:
    // Takes ownership of `p`. Throws sdk::Error(HETERO_ERR_COMPILE_FAILED)
    // naming a kernel of `kernels` that the program lacks (and releases `p`).
    // `gemm` and `mma` describe the base program (unused for others).
    Program(cl_program p, cl_device_id dev, const std::vector<const char*>& kernels, bool from_cache, GemmConfig gemm = {},
            bool mma = false);
    ~Program();
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    cl_program get() const { return program_; }
    const GemmConfig& gemm() const { return gemm_; }
    bool from_cache() const { return from_cache_; }
    // Whether the program has the tensor-core GEMMs (gemm_mma_*), which then
    // take quantized prefill GEMMs, and whether prefill attention may take
    // the tensor-core instances (AttentionPrograms).
    bool mma() const { return mma_; }
    // Largest power-of-two work-group size <= min(cap, the kernel's limit).
    size_t group_size(const char* kernel, size_t cap) const;

private:
    cl_program program_;
    GemmConfig gemm_;
    bool mma_;
    bool from_cache_;
    std::map<std::string, size_t> kernel_wg_;
};

}  // namespace hetero::opencl
