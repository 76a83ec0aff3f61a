// One Vulkan device opened for compute (Device: the logical device with its
// queue, memory allocator, pipelines and transfers), and the device as the
// provider lists it, opened on first use (LazyDevice). The parts live apart:
//
//   vk_device_info.hpp  DeviceInfo: what discovery reads (vk_discovery.cpp)
//   vk_queue.hpp        submission, timeline semaphore, recorded small writes
//   vk_memory.hpp       the allocator of VkDeviceMemory blocks
//   vk_buffer.hpp       DeviceBuffer: a VkBuffer carved out of the allocator
//   vk_transfer.hpp     blocking host <-> device and device copies (staging)
//   vk_pipelines.hpp    pipelines and the pipeline cache on disk
#pragma once

#include "vk_buffer.hpp"
#include "vk_common.hpp"
#include "vk_device_info.hpp"
#include "vk_memory.hpp"
#include "vk_pipelines.hpp"
#include "vk_queue.hpp"
#include "vk_transfer.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace hetero::vk {

class Device {
public:
    Device(const DeviceInfo& info, uint32_t index);
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    const DeviceInfo& info() const { return info_; }
    uint32_t index() const { return index_; }
    VkDevice handle() const { return dev_; }
    uint32_t queue_family() const { return family_; }
    Queue& queue() { return *queue_; }
    MemoryAllocator& memory() { return *memory_; }
    Pipelines& pipelines() { return *pipelines_; }

    // Submission and its timeline (Queue). Thread-safe.
    uint64_t submit(VkCommandBuffer cb) { return queue_->submit(cb); }
    void wait(uint64_t value) { queue_->wait(value); }
    bool reached(uint64_t value) { return queue_->reached(value); }
    void wait_all() { queue_->wait_all(); }
    void flush_writes(bool wait = false) { queue_->flush_writes(wait); }

    // Blocking transfers (Transfers); small writes go with the next submission.
    void write(DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t size) { transfers_->write(dst, offset, src, size); }
    void read(DeviceBuffer& src, uint64_t offset, void* dst, uint64_t size) { transfers_->read(src, offset, dst, size); }
    void copy(DeviceBuffer& src, uint64_t src_offset, DeviceBuffer& dst, uint64_t dst_offset, uint64_t size) {
        transfers_->copy(src, src_offset, dst, dst_offset, size);
    }

private:
    void release() noexcept;

    DeviceInfo info_;
    uint32_t index_;
    VkDevice dev_ = VK_NULL_HANDLE;
    uint32_t family_ = 0;
    std::unique_ptr<Queue> queue_;
    std::unique_ptr<Transfers> transfers_;
    std::unique_ptr<MemoryAllocator> memory_;
    std::unique_ptr<Pipelines> pipelines_;
};

// A device as the provider lists it: described at discovery, opened (VkDevice,
// queue, allocator, pipeline cache...) by the first call that needs it, so
// listing devices stays cheap. Thread-safe.
class LazyDevice {
public:
    LazyDevice(const DeviceInfo& info, uint32_t index) : info_(info), index_(index) {}
    LazyDevice(const LazyDevice&) = delete;
    LazyDevice& operator=(const LazyDevice&) = delete;

    const DeviceInfo& info() const { return info_; }
    // The opened device; the first call creates it. A failure throws
    // sdk::Error and leaves the device closed, so a later call tries again.
    Device& open();

private:
    DeviceInfo info_;
    uint32_t index_;
    std::mutex open_mu_;
    std::atomic<Device*> opened_{nullptr};  // set once `device_` is complete
    std::unique_ptr<Device> device_;
};

}  // namespace hetero::vk
