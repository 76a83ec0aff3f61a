// A buffer of one OpenCL device. Imported host memory keeps its pointer so
// the host can reach the bytes without a map.
#pragma once

#include "buffer_pool.hpp"

#include <CL/cl.h>
#include <hetero/sdk/provider.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

namespace hetero::opencl {

// Bytes [offset, offset + bytes) of a buffer holding constant Q4_0/Q8_0
// weights that the provider rewrote in its planar layout (same size; see
// kernels/matvec_planar.cl).
struct PlanarRegion {
    uint64_t offset = 0, bytes = 0;
    uint32_t dtype = 0;
    bool overlaps(uint64_t off, uint64_t size) const { return off < offset + bytes && offset < off + size; }
};

class ClBuffer final : public sdk::Buffer {
public:
    // A buffer owning `mem`.
    ClBuffer(uint32_t device, uint64_t size, cl_mem mem, void* host) : sdk::Buffer(device, size), mem_(mem), host_(host) {}
    // Bytes carved from a pool's block, given back when the buffer goes.
    ClBuffer(uint32_t device, uint64_t size, std::shared_ptr<BufferPool> pool, const BufferPool::Range& range)
        : sdk::Buffer(device, size), mem_(range.mem), host_(nullptr), base_(range.offset), pool_(std::move(pool)), range_(range) {}
    ~ClBuffer() override {
        if (pool_) pool_->give_back(range_, size());
        else clReleaseMemObject(mem_);
    }
    ClBuffer(const ClBuffer&) = delete;
    ClBuffer& operator=(const ClBuffer&) = delete;
    // The buffer's bytes are mem() from byte base() on: every kernel
    // argument and transfer adds base() to its offset.
    cl_mem mem() const { return mem_; }
    uint64_t base() const { return base_; }
    void* host() const { return host_; }

    // Planar regions; guarded by layout_mutex(), which a rewrite holds from
    // its check to its record.
    std::mutex& layout_mutex() const { return layout_mutex_; }
    std::vector<PlanarRegion>& planar_regions() { return planar_regions_; }
    std::vector<PlanarRegion> planar_regions_overlapping(uint64_t off, uint64_t size) const {
        std::lock_guard<std::mutex> lock(layout_mutex_);
        std::vector<PlanarRegion> found;
        for (const PlanarRegion& r : planar_regions_)
            if (r.overlaps(off, size)) found.push_back(r);
        return found;
    }
    // New bytes written over a region are GGUF bytes again.
    void forget_planar(uint64_t off, uint64_t size) {
        std::lock_guard<std::mutex> lock(layout_mutex_);
        std::erase_if(planar_regions_, [&](const PlanarRegion& r) { return r.overlaps(off, size); });
    }

private:
    cl_mem mem_;
    void* host_;
    uint64_t base_ = 0;
    std::shared_ptr<BufferPool> pool_;
    BufferPool::Range range_;
    mutable std::mutex layout_mutex_;
    std::vector<PlanarRegion> planar_regions_;
};

inline const ClBuffer& cl_buffer(const sdk::Buffer* b) { return *static_cast<const ClBuffer*>(b); }

}  // namespace hetero::opencl
