#include "planar_weights.hpp"

#include "cl_kernel_signatures.hpp"
#include "cl_util.hpp"

#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

namespace hetero::opencl {

bool planar_weights_enabled() {
    static const bool enabled = !sdk::env_equals("HETERO_CL_PLANAR", "0");
    return enabled;
}

namespace {

uint64_t planar_bytes(uint32_t dtype, int64_t m, int64_t k) { return uint64_t(m) * sdk::row_bytes(dtype, k); }

// Runs `name` (src, src_off, dst, blocks), one work-item per block of a
// weight region (the repack and unpack kernels). Allocation failures map to
// out-of-memory.
void run_block_kernel(cl_command_queue queue, cl_program program, const char* name, cl_mem src, cl_ulong src_off, cl_mem dst,
                      cl_long blocks) {
    cl_int err = CL_SUCCESS;
    const KernelPtr kernel(clCreateKernel(program, name, &err));
    cl_check(err, name, HETERO_ERR_COMPILE_FAILED);
    std::vector<BoundArg> none;  // no graph tensors here
    set_args<BlockRepackParams>(kernel.get(), none, BufferAt{src, src_off}, dst, blocks);
    const size_t global = size_t(blocks);
    cl_check(clEnqueueNDRangeKernel(queue, kernel.get(), 1, nullptr, &global, nullptr, 0, nullptr, nullptr), name);
}

// A scratch device buffer; released when it goes (enqueued work keeps it alive).
struct Scratch {
    cl_mem mem = nullptr;
    Scratch(cl_context context, uint64_t bytes) {
        cl_int err = CL_SUCCESS;
        mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
        cl_check(err, "allocating scratch for a weight layout change", HETERO_ERR_OUT_OF_MEMORY);
    }
    ~Scratch() { clReleaseMemObject(mem); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
};

}  // namespace

bool rewrite_planar(ClBuffer& buffer, cl_context context, cl_command_queue queue, cl_program program, uint64_t offset,
                    uint32_t dtype, int64_t m, int64_t k) {
    const uint64_t bytes = planar_bytes(dtype, m, k);
    std::lock_guard<std::mutex> lock(buffer.layout_mutex());
    auto& regions = buffer.planar_regions();
    for (const PlanarRegion& r : regions)
        if (r.overlaps(offset, bytes)) return r.offset == offset && r.bytes == bytes && r.dtype == dtype;
    // Through a scratch copy: the planes of one block are far apart.
    const cl_long blocks = cl_long(m) * (k / sdk::kQBlock);
    Scratch planar(context, bytes);
    run_block_kernel(queue, program, dtype == HETERO_DTYPE_Q4_0 ? "repack_planar_q4_0" : "repack_planar_q8_0", buffer.mem(),
                     buffer.base() + offset, planar.mem, blocks);
    cl_check(clEnqueueCopyBuffer(queue, planar.mem, buffer.mem(), 0, buffer.base() + offset, bytes, 0, nullptr, nullptr),
             "rewriting weights in the planar layout");
    regions.push_back(PlanarRegion{offset, bytes, dtype});
    return true;
}

void read_gguf(ClBuffer& buffer, cl_context context, cl_command_queue queue, cl_program program, uint64_t offset, void* dst,
               uint64_t size) {
    cl_check(clEnqueueReadBuffer(queue, buffer.mem(), CL_TRUE, buffer.base() + offset, size, dst, 0, nullptr, nullptr), "buffer_read",
             HETERO_ERR_DEVICE_LOST);
    for (const PlanarRegion& r : buffer.planar_regions_overlapping(offset, size)) {
        Scratch gguf(context, r.bytes);
        const cl_long blocks = cl_long(r.bytes / sdk::row_bytes(r.dtype, sdk::kQBlock));
        run_block_kernel(queue, program, r.dtype == HETERO_DTYPE_Q4_0 ? "unpack_planar_q4_0" : "unpack_planar_q8_0", buffer.mem(),
                         buffer.base() + r.offset, gguf.mem, blocks);
        // The overlap of [offset, offset + size) and the region.
        const uint64_t from = std::max(offset, r.offset), to = std::min(offset + size, r.offset + r.bytes);
        cl_check(clEnqueueReadBuffer(queue, gguf.mem, CL_TRUE, from - r.offset, to - from, static_cast<unsigned char*>(dst) + (from - offset),
                                     0, nullptr, nullptr),
                 "buffer_read (planar weights)", HETERO_ERR_DEVICE_LOST);
    }
}

std::shared_ptr<const PlanarWeights> PlanarWeightCache::get(cl_context context, cl_command_queue queue, cl_program program,
                                                            uint64_t max_alloc, uint64_t global_mem, cl_mem src, uint64_t offset,
                                                            uint32_t dtype, int64_t m, int64_t k) {
    if (dtype != HETERO_DTYPE_Q4_0 && dtype != HETERO_DTYPE_Q8_0 && dtype != HETERO_DTYPE_Q6_K) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    const Key key{src, offset, dtype, m, k};
    if (auto it = entries_.find(key); it != entries_.end())
        if (auto live = it->second.lock()) return live;

    // Q6_K: 256-element super-blocks padded from 210 to 224 bytes (16-byte
    // aligned; kernels/kquant.cl). Q4_0/Q8_0: planes of the same bytes.
    const bool q6k = dtype == HETERO_DTYPE_Q6_K;
    const cl_long blocks = cl_long(m) * (k / (q6k ? sdk::kKBlock : sdk::kQBlock));
    const uint64_t bytes = uint64_t(blocks) * (q6k ? kQ6KAlignedBytes : sdk::row_bytes(dtype, sdk::kQBlock));
    if (blocks == 0 || (max_alloc && bytes > max_alloc)) return nullptr;
    // Drop entries whose executables are gone while adding up the live copies.
    uint64_t live = bytes;
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (auto p = it->second.lock()) {
            live += p->bytes;
            ++it;
        } else {
            it = entries_.erase(it);
        }
    }
    if (global_mem && live > global_mem / 3) return nullptr;
    auto planar = std::make_shared<PlanarWeights>();
    planar->bytes = bytes;
    cl_int err = CL_SUCCESS;
    planar->mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (err != CL_SUCCESS) return nullptr;  // no room for a copy: the original serves

    const char* repack = q6k ? "repack_aligned_q6_k" : dtype == HETERO_DTYPE_Q4_0 ? "repack_planar_q4_0" : "repack_planar_q8_0";
    run_block_kernel(queue, program, repack, src, offset, planar->mem, blocks);

    entries_[key] = planar;
    return planar;
}

}  // namespace hetero::opencl
