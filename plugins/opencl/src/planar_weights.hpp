// Constant Q4_0/Q8_0 weights in the planar layout the decode matvec kernels
// read (see kernels/matvec_planar.cl), and Q6_K weights in 16-byte aligned
// blocks for their int8 form (kquant.cl).
//
// Q4_0/Q8_0 weights in device memory are rewritten in place (the planar
// layout has the bytes of the GGUF one), and every kernel reading them then
// takes the planar layout: decode matvecs, prefill GEMMs, embedding rows,
// conversions. Weights the device reads from host memory (imported, read-
// only file pages) and Q6_K weights (larger when aligned) get a copy instead,
// which only the decode matvecs read; executables of one model share it.
#pragma once

#include "cl_buffer.hpp"

#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace hetero::opencl {

// Bytes of a Q6_K super-block in the aligned copy (Q6K_ALIGNED_BYTES).
inline constexpr uint64_t kQ6KAlignedBytes = 224;

struct PlanarWeights {
    cl_mem mem = nullptr;
    uint64_t bytes = 0;
    PlanarWeights() = default;
    PlanarWeights(const PlanarWeights&) = delete;
    PlanarWeights& operator=(const PlanarWeights&) = delete;
    ~PlanarWeights() {
        if (mem) clReleaseMemObject(mem);
    }
};

// HETERO_CL_PLANAR=0 keeps every kernel on the GGUF layout (for comparisons).
bool planar_weights_enabled();

// Rewrites the [m, k] Q4_0/Q8_0 matrix at `offset` of `buffer` into the
// planar layout, once (enqueued on `queue`, so later work sees it); true
// where the region is planar now. False, changing nothing, where part of it
// already is (a binding over part of rewritten weights): its readers could
// not take either layout.
bool rewrite_planar(ClBuffer& buffer, cl_context context, cl_command_queue queue, cl_program program, uint64_t offset,
                    uint32_t dtype, int64_t m, int64_t k);

// Reads bytes of a buffer as GGUF bytes: planar regions in them are read
// back through their inverse (what a reader of the ABI expects).
void read_gguf(ClBuffer& buffer, cl_context context, cl_command_queue queue, cl_program program, uint64_t offset, void* dst,
               uint64_t size);

class PlanarWeightCache {
public:
    // The planar copy of the [m, k] `dtype` matrix at (src, offset), made now
    // (enqueued on `queue`, so later work on it sees the copy) or shared with
    // an earlier compile. Null where the copy would not fit: larger than one
    // allocation may be, or all live copies would then take more than a
    // third of the device's memory (drivers may allocate lazily, so a failed
    // allocation cannot be relied on to say so); the caller then reads the
    // original.
    std::shared_ptr<const PlanarWeights> get(cl_context context, cl_command_queue queue, cl_program program, uint64_t max_alloc,
                                             uint64_t global_mem, cl_mem src, uint64_t offset, uint32_t dtype, int64_t m, int64_t k);

private:
    using Key = std::tuple<cl_mem, uint64_t, uint32_t, int64_t, int64_t>;
    std::mutex mutex_;
    // Weak: a copy lives as long as some executable uses it. Constants
    // outlive their executables and are never modified, so a live entry's
    // source is unchanged.
    std::map<Key, std::weak_ptr<const PlanarWeights>> entries_;
};

}  // namespace hetero::opencl
