#include "pinned_flags.hpp"

namespace hetero::opencl {

cl_int* PinnedFlagSlots::acquire(cl_context context, cl_command_queue queue) {
    std::lock_guard lock(mutex_);
    if (!tried_) {
        tried_ = true;
        const size_t bytes = kSlots * kSlotInts * sizeof(cl_int);
        cl_int err = CL_SUCCESS;
        buffer_ = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
        if (err == CL_SUCCESS && buffer_)
            base_ = static_cast<cl_int*>(clEnqueueMapBuffer(queue, buffer_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr, &err));
        if (err != CL_SUCCESS || !base_) {
            if (buffer_) clReleaseMemObject(buffer_);
            buffer_ = nullptr;
            base_ = nullptr;
        } else {
            for (size_t i = kSlots; i-- > 0;) free_.push_back(base_ + i * kSlotInts);
        }
    }
    if (free_.empty()) return nullptr;
    cl_int* slot = free_.back();
    free_.pop_back();
    return slot;
}

void PinnedFlagSlots::release(cl_int* slot) {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
}

void PinnedFlagSlots::close(cl_command_queue queue) {
    std::lock_guard lock(mutex_);
    if (!buffer_) return;
    if (queue) {
        clEnqueueUnmapMemObject(queue, buffer_, base_, 0, nullptr, nullptr);
        clFinish(queue);
    }
    clReleaseMemObject(buffer_);
    buffer_ = nullptr;
    base_ = nullptr;
    free_.clear();
}

}  // namespace hetero::opencl
