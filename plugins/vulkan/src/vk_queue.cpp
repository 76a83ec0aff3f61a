#include "vk_queue.hpp"

namespace hetero::vk {

Queue::Queue(VkDevice dev, uint32_t family) : dev_(dev) {
    vkGetDeviceQueue(dev_, family, 0, &queue_);
    try {
        VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
        VkSemaphoreCreateInfo si{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        si.pNext = &ti;
        check(vkCreateSemaphore(dev_, &si, nullptr, &timeline_), "vkCreateSemaphore");
        VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pi.queueFamilyIndex = family;
        check(vkCreateCommandPool(dev_, &pi, nullptr, &pending_pool_), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pending_pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        pending_ring_.resize(4);
        for (PendingCb& p : pending_ring_) check(vkAllocateCommandBuffers(dev_, &ai, &p.cb), "vkAllocateCommandBuffers");
    } catch (...) {
        release();
        throw;
    }
}

Queue::~Queue() { release(); }

void Queue::release() noexcept {
    if (pending_pool_) vkDestroyCommandPool(dev_, pending_pool_, nullptr);
    if (timeline_) vkDestroySemaphore(dev_, timeline_, nullptr);
    pending_pool_ = VK_NULL_HANDLE;
    timeline_ = VK_NULL_HANDLE;
}

uint64_t Queue::submit(VkCommandBuffer cb) {
    std::lock_guard<std::mutex> lock(pending_mu_);
    return submit_locked(cb);
}

// Recorded writes go first, in the same vkQueueSubmit: no extra round trip.
uint64_t Queue::submit_locked(VkCommandBuffer cb) {
    const VkCommandBuffer writes = close_pending();
    std::lock_guard<std::mutex> lock(submit_mu_);
    const uint64_t value = last_value_ + 1;
    VkCommandBuffer cbs[2];
    uint32_t n = 0;
    if (writes) cbs[n++] = writes;
    if (cb) cbs[n++] = cb;
    VkTimelineSemaphoreSubmitInfo ti{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    ti.signalSemaphoreValueCount = 1;
    ti.pSignalSemaphoreValues = &value;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.pNext = &ti;
    si.commandBufferCount = n;
    si.pCommandBuffers = cbs;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &timeline_;
    check(vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
    last_value_ = value;
    if (writes) pending_ring_[(pending_next_ + pending_ring_.size() - 1) % pending_ring_.size()].done_at = value;
    return value;
}

VkCommandBuffer Queue::close_pending() {
    if (!pending_) return VK_NULL_HANDLE;
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(pending_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                         &mb, 0, nullptr, 0, nullptr);
    const VkCommandBuffer cb = pending_;
    pending_ = VK_NULL_HANDLE;
    check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    return cb;
}

void Queue::open_pending() {
    PendingCb& p = pending_ring_[pending_next_];
    if (p.done_at) wait(p.done_at);
    pending_next_ = (pending_next_ + 1) % pending_ring_.size();
    check(vkResetCommandBuffer(p.cb, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(p.cb, &bi), "vkBeginCommandBuffer");
    p.done_at = 0;
    pending_ = p.cb;
    // Earlier work may still read or write the targets.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(pending_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

bool Queue::record_small_write(VkBuffer dst, uint64_t offset, const void* src, uint64_t size) {
    // vkCmdUpdateBuffer: 4-byte aligned, at most 64 KiB, data copied into the command buffer.
    if (size == 0 || size > 65536 || size % 4 || offset % 4) return false;
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (!pending_) {
        open_pending();
    } else {
        // Writes within one buffer stay in call order.
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        vkCmdPipelineBarrier(pending_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    }
    vkCmdUpdateBuffer(pending_, dst, offset, size, src);
    return true;
}

void Queue::flush_writes(bool wait_done) {
    uint64_t value = 0;
    {
        std::lock_guard<std::mutex> lock(pending_mu_);
        if (pending_) value = submit_locked(VK_NULL_HANDLE);
    }
    if (value && wait_done) wait(value);
}

void Queue::wait(uint64_t value) {
    VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &timeline_;
    wi.pValues = &value;
    check(vkWaitSemaphores(dev_, &wi, UINT64_MAX), "vkWaitSemaphores");
}

bool Queue::reached(uint64_t value) {
    uint64_t now = 0;
    check(vkGetSemaphoreCounterValue(dev_, timeline_, &now), "vkGetSemaphoreCounterValue");
    return now >= value;
}

void Queue::wait_all() {
    flush_writes();
    uint64_t v;
    {
        std::lock_guard<std::mutex> lock(submit_mu_);
        v = last_value_;
    }
    if (v) wait(v);
}

}  // namespace hetero::vk
