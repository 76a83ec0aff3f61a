// Device buffers carved from a few large OpenCL allocations. NVIDIA's
// driver rounds every large clCreateBuffer up to 2 MiB (a 24.2 MiB Llama-7B
// FFN matrix takes 26 MiB), which over a model's ~300 weights is ~300 MiB;
// carving them from shared blocks loses only the last block's free tail.
// Blocks grow from kMinBlock, each as large as the blocks so far, up to
// kMaxBlock; buffers of kOwnAbove bytes or more get an allocation of their own.
#pragma once

#include <CL/cl.h>
#include <hetero/sdk/free_ranges.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace hetero::opencl {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
public:
    static constexpr uint64_t kMinBlock = uint64_t(16) << 20;
    static constexpr uint64_t kMaxBlock = uint64_t(64) << 20;
    static constexpr uint64_t kOwnAbove = uint64_t(32) << 20;
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
