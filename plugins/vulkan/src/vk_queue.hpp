// Command submission and its synchronisation: the device's compute queue, a
// timeline semaphore that every submission signals (an execute's event is
// its value), and small writes recorded into command buffers
// (vkCmdUpdateBuffer) that go to the GPU with the next submission instead of
// a blocking round trip of their own. Thread-safe.
#pragma once

#include "vk_common.hpp"

#include <mutex>
#include <vector>

namespace hetero::vk {

class Queue {
public:
    Queue(VkDevice dev, uint32_t family);
    ~Queue();
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;

    // Submits `cb` (may be null) after everything submitted before, with
    // the recorded writes first; returns the timeline value that signals its
    // completion.
    uint64_t submit(VkCommandBuffer cb);
    void wait(uint64_t value);
    bool reached(uint64_t value);
    // Waits for every submission so far (host access to device memory).
    void wait_all();
    // Submits recorded small writes now and, with `wait`, waits for them
    // (before a buffer they may target goes away).
    void flush_writes(bool wait = false);
    // Records a write of `size` bytes from `src` (copied now) to `offset` of
    // `dst`; false, recording nothing, when vkCmdUpdateBuffer cannot take it
    // (more than 64 KiB, or not 4-byte aligned).
    bool record_small_write(VkBuffer dst, uint64_t offset, const void* src, uint64_t size);

private:
    void release() noexcept;
    // Opens a command buffer of the ring for recorded writes; call with pending_mu_ held.
    void open_pending();
    // Closes the open write buffer; returns it (or null). Call with pending_mu_ held.
    VkCommandBuffer close_pending();
    uint64_t submit_locked(VkCommandBuffer cb);

    VkDevice dev_;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    std::mutex submit_mu_;
    uint64_t last_value_ = 0;

    // Recorded small writes: a ring of command buffers, each reusable once
    // the timeline passes the value of its last submission.
    struct PendingCb { VkCommandBuffer cb = VK_NULL_HANDLE; uint64_t done_at = 0; };
    std::mutex pending_mu_;  // taken before submit_mu_
    VkCommandPool pending_pool_ = VK_NULL_HANDLE;
    std::vector<PendingCb> pending_ring_;
    size_t pending_next_ = 0;
    VkCommandBuffer pending_ = VK_NULL_HANDLE;  // open, holding unsubmitted writes
};

}  // namespace hetero::vk
