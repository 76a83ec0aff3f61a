// Small host-to-device writes (token ids, positions) that return before the
// copy lands: the bytes are copied into memory owned here and enqueued
// without blocking. The queue is in order, so every later kernel or read on
// it sees them, and the caller's memory is free at once as the ABI promises;
// a blocking write would cost a round trip to the device per call.
#pragma once

#include "cl_util.hpp"

#include <CL/cl.h>

#include <cstring>
#include <list>
#include <mutex>
#include <vector>

namespace hetero::opencl {

class StagedWrites {
public:
    static constexpr uint64_t kMaxBytes = 64 * 1024;  // larger writes block: copying them twice would cost more

    StagedWrites() = default;
    StagedWrites(const StagedWrites&) = delete;
    StagedWrites& operator=(const StagedWrites&) = delete;
    ~StagedWrites() {
        for (Pending& p : pending_) {
            clWaitForEvents(1, &p.done);
            clReleaseEvent(p.done);
        }
    }

    void write(cl_command_queue q, cl_mem dst, uint64_t offset, const void* src, uint64_t size) {
        std::lock_guard<std::mutex> lock(mutex_);
        retire_finished();
        Pending& p = pending_.emplace_back();
        p.bytes.resize(size);
        std::memcpy(p.bytes.data(), src, size);
        const cl_int err = clEnqueueWriteBuffer(q, dst, CL_FALSE, offset, size, p.bytes.data(), 0, nullptr, &p.done);
        if (err != CL_SUCCESS) {
            pending_.pop_back();
            cl_check(err, "buffer_write", HETERO_ERR_DEVICE_LOST);
        }
    }

private:
    struct Pending {
        std::vector<unsigned char> bytes;
        cl_event done = nullptr;
    };

    // Frees the copies that have landed; reports a copy that failed.
    void retire_finished() {
        for (auto it = pending_.begin(); it != pending_.end();) {
            cl_int status = CL_QUEUED;
            clGetEventInfo(it->done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
            if (status > CL_COMPLETE) {
                ++it;
                continue;
            }
            clReleaseEvent(it->done);
            it = pending_.erase(it);
            if (status < 0) sdk::fail(HETERO_ERR_DEVICE_LOST, std::string("buffer_write failed on the device: ") + cl_error_name(status));
        }
    }

    std::mutex mutex_;
    std::list<Pending> pending_;
};

}  // namespace hetero::opencl
