// Pinned host memory for the executables' error flags. Every execute ends by
// reading its 16-byte flag back; into pageable memory NVIDIA's driver stages
// that read, so the host waited for the queue to drain once per executable
// (a server's batched step runs three executables a layer). Slots of one
// buffer allocated with CL_MEM_ALLOC_HOST_PTR and kept mapped are pinned, and
// a read into them is an asynchronous DMA.
#pragma once

#include <CL/cl.h>

#include <mutex>
#include <vector>

namespace hetero::opencl {

class PinnedFlagSlots {
public:
    static constexpr size_t kSlotInts = 4;  // one flag: cl_int[4]
    PinnedFlagSlots() = default;
    PinnedFlagSlots(const PinnedFlagSlots&) = delete;
    PinnedFlagSlots& operator=(const PinnedFlagSlots&) = delete;
    // A free slot, the buffer made on first need; null when none is free or
    // the driver refused the buffer (the caller keeps the flag itself).
    cl_int* acquire(cl_context context, cl_command_queue queue);
    void release(cl_int* slot);
    // Unmaps and frees the buffer; before the queue and context go.
    void close(cl_command_queue queue);

private:
    static constexpr size_t kSlots = 1024;
    std::mutex mutex_;
    bool tried_ = false;
    cl_mem buffer_ = nullptr;
    cl_int* base_ = nullptr;
    std::vector<cl_int*> free_;
};

}  // namespace hetero::opencl
