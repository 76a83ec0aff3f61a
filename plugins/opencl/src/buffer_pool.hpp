// Device buffers carved from a few large OpenCL allocations. NVIDIA's
// driver rounds every large clCreateBuffer up to 2 MiB (measured on an H100:
// 200 buffers of 9 MiB take 2,000 MiB, of 24.2 MiB 5,200), which over a 7B
// model's weights and caches is ~400 MiB. A buffer that rounding would cost
// more than 1/32 of its size is carved from a shared block instead (best fit;
// a new block holds a whole number of buffers of the size that asked for it,
// about as many bytes as the blocks so far, from kMinBlock up to kMaxBlock);
// others, and those of kOwnAbove bytes or more, get an allocation of their own.
#pragma once

#include <CL/cl.h>
#include <hetero/sdk/free_ranges.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace hetero::opencl {

class BufferPool {
public:
    static constexpr uint64_t kMinBlock = uint64_t(16) << 20;
    static constexpr uint64_t kMaxBlock = uint64_t(256) << 20;
    static constexpr uint64_t kOwnAbove = uint64_t(128) << 20;
    static constexpr uint64_t kDriverPage = uint64_t(2) << 20;
    // Offsets keep the alignment kernels rely on (16-byte vector loads) and
    // more, like a fresh allocation's.
    static constexpr uint64_t kAlign = 256;

    explicit BufferPool(cl_context context) : context_(context) {}
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    struct Range {
        cl_mem mem = nullptr;
        uint64_t offset = 0;
        void* block = nullptr;  // for give_back
    };
    // `size` bytes in a block; a null mem where the buffer should have an
    // allocation of its own (large, or the device refuses the block).
    Range take(uint64_t size, uint64_t max_alloc);
    void give_back(const Range& r, uint64_t size);

private:
    struct Block {
        cl_mem mem = nullptr;
        uint64_t size = 0;
        sdk::FreeRanges free{0};
    };
    cl_context context_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace hetero::opencl
