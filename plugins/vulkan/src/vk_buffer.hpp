// The provider's buffer handle: a VkBuffer bound to memory carved out of
// the device's allocator (vk_memory.hpp), mapped where that memory is
// host-visible.
#pragma once

#include "vk_memory.hpp"

#include <hetero/sdk/provider.hpp>

namespace hetero::vk {

class Device;

class DeviceBuffer final : public sdk::Buffer {
public:
    DeviceBuffer(Device& dev, uint32_t index, uint64_t size, MemoryUse use);
    ~DeviceBuffer() override;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    VkBuffer handle() const { return buffer_; }
    uint8_t* mapped() const { return alloc_.mapped; }
    // Unique for the process's lifetime (a handle may be reused; an id is not).
    uint64_t id() const { return id_; }

private:
    Device& dev_;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    Allocation alloc_;
    uint64_t id_;
};

}  // namespace hetero::vk
