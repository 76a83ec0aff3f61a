// Blocking copies between the host and device buffers, and between device
// buffers: through the mapping where a buffer is mapped (unified memory),
// else small writes recorded for the next submission (Queue) and the rest
// through a host-visible staging buffer, a piece at a time.
#pragma once

#include "vk_buffer.hpp"

#include <memory>
#include <mutex>

namespace hetero::vk {

class Device;

class Transfers {
public:
    explicit Transfers(Device& dev);
    ~Transfers();
    Transfers(const Transfers&) = delete;
    Transfers& operator=(const Transfers&) = delete;

    void write(DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t size);
    void read(DeviceBuffer& src, uint64_t offset, void* dst, uint64_t size);
    void copy(DeviceBuffer& src, uint64_t src_offset, DeviceBuffer& dst, uint64_t dst_offset, uint64_t size);

private:
    // Runs `record` in a one-off command buffer and waits for it; call with mu_ held.
    template <class F>
    void run(F&& record);
    // The staging buffer, made on first use; call with mu_ held.
    DeviceBuffer& staging();

    Device& dev_;
    std::mutex mu_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cb_ = VK_NULL_HANDLE;
    std::unique_ptr<DeviceBuffer> staging_;
};

}  // namespace hetero::vk
