// Large host-to-device writes (a model's weights, once per session) through
// two pinned staging buffers: while the device copies one chunk over the
// bus, the host copies the next into the other. A blocking write straight
// from pageable (memory-mapped) pages makes the driver stage every byte
// itself, one chunk at a time with nothing overlapped.
#pragma once

#include "cl_util.hpp"

#include <hetero/sdk/parallel_copy.hpp>

#include <CL/cl.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace hetero::opencl {

class PinnedUploads {
public:
    static constexpr uint64_t kMinBytes = 4u << 20;    // smaller writes go straight through
    static constexpr uint64_t kSlotBytes = 16u << 20;  // per staging buffer

    PinnedUploads() = default;
    PinnedUploads(const PinnedUploads&) = delete;
    PinnedUploads& operator=(const PinnedUploads&) = delete;
    ~PinnedUploads() {
        for (Slot& s : slots_) {
            if (s.busy) {
                clWaitForEvents(1, &s.busy);
                clReleaseEvent(s.busy);
            }
            if (s.host && queue_) clEnqueueUnmapMemObject(queue_, s.mem, s.host, 0, nullptr, nullptr);
            if (queue_) clFinish(queue_);
            if (s.mem) clReleaseMemObject(s.mem);
        }
    }

    // Writes and waits until the bytes are on the device; false (nothing
    // written) when pinned memory cannot be had, for the caller's plain write.
    bool write(cl_context ctx, cl_command_queue q, cl_mem dst, uint64_t offset, const void* src, uint64_t size) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!ready(ctx, q)) return false;
        const auto* from = static_cast<const unsigned char*>(src);
        int i = 0;
        for (uint64_t done = 0; done < size; done += kSlotBytes, i ^= 1) {
            Slot& s = slots_[i];
            retire(s);
            const uint64_t n = std::min(kSlotBytes, size - done);
            sdk::copy_in_parallel(s.host, from + done, n);
            cl_check(clEnqueueWriteBuffer(q, dst, CL_FALSE, offset + done, n, s.host, 0, nullptr, &s.busy), "buffer_write (pinned)",
                     HETERO_ERR_DEVICE_LOST);
        }
        for (Slot& s : slots_) retire(s);
        return true;
    }

private:
    struct Slot {
        cl_mem mem = nullptr;
        void* host = nullptr;
        cl_event busy = nullptr;  // the device's copy out of this slot
    };

    void retire(Slot& s) {
        if (!s.busy) return;
        const cl_int err = clWaitForEvents(1, &s.busy);
        clReleaseEvent(s.busy);
        s.busy = nullptr;
        cl_check(err, "buffer_write (pinned, wait)", HETERO_ERR_DEVICE_LOST);
    }

    // Allocates and maps the slots on first use; a driver that refuses is
    // not asked again.
    bool ready(cl_context ctx, cl_command_queue q) {
        if (queue_) return true;
        if (failed_) return false;
        for (Slot& s : slots_) {
            cl_int err = CL_SUCCESS;
            s.mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, kSlotBytes, nullptr, &err);
            if (err == CL_SUCCESS)
                s.host = clEnqueueMapBuffer(q, s.mem, CL_TRUE, CL_MAP_WRITE, 0, kSlotBytes, 0, nullptr, nullptr, &err);
            if (err != CL_SUCCESS || !s.host) {
                for (Slot& r : slots_) {
                    if (r.host) clEnqueueUnmapMemObject(q, r.mem, r.host, 0, nullptr, nullptr);
                    clFinish(q);
                    if (r.mem) clReleaseMemObject(r.mem);
                    r = Slot{};
                }
                failed_ = true;
                return false;
            }
        }
        queue_ = q;
        return true;
    }

    std::mutex mutex_;
    Slot slots_[2];
    cl_command_queue queue_ = nullptr;  // the slots are mapped on it
    bool failed_ = false;
};

}  // namespace hetero::opencl
