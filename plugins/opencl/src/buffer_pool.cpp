#include "buffer_pool.hpp"

#include <algorithm>

namespace hetero::opencl {

BufferPool::~BufferPool() {
    for (auto& b : blocks_) clReleaseMemObject(b->mem);
}

BufferPool::Range BufferPool::take(uint64_t size, uint64_t max_alloc) {
    if (size == 0 || size >= kOwnAbove) return {};
    const uint64_t rounding = (kDriverPage - size % kDriverPage) % kDriverPage;
    if (rounding * 32 <= size) return {};  // its own allocation wastes little
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t offset = 0;
    for (auto& b : blocks_)
        if (b->free.take(size, kAlign, offset)) return Range{b->mem, offset, b.get()};
    uint64_t pooled = 0;
    for (const auto& b : blocks_) pooled += b->size;
    // A whole number of buffers of this size, rounded up to the driver's
    // page: buffers of one shape (a model's KV caches, its layers' matrices)
    // come in runs, and a block sized for another count would leave a hole
    // none of them fits.
    const uint64_t slot = (size + kAlign - 1) / kAlign * kAlign;
    const uint64_t count = std::max<uint64_t>(1, std::clamp(pooled, kMinBlock, kMaxBlock) / slot);
    uint64_t bytes = (count * slot + kDriverPage - 1) / kDriverPage * kDriverPage;
    if (max_alloc) bytes = std::min(bytes, max_alloc);
    if (bytes < size) return {};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (err != CL_SUCCESS) return {};  // the caller tries an allocation of the buffer's own size
    auto block = std::make_unique<Block>();
    block->mem = mem;
    block->size = bytes;
    block->free = sdk::FreeRanges(bytes);
    block->free.take(size, kAlign, offset);
    blocks_.push_back(std::move(block));
    return Range{mem, offset, blocks_.back().get()};
}

void BufferPool::give_back(const Range& r, uint64_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(blocks_.begin(), blocks_.end(), [&](const auto& b) { return b.get() == r.block; });
    if (it == blocks_.end()) return;
    (*it)->free.give_back(r.offset, size);
    // A model unloaded gives its memory back to the device.
    if ((*it)->free.all_free()) {
        clReleaseMemObject((*it)->mem);
        blocks_.erase(it);
    }
}

}  // namespace hetero::opencl
