#include "vk_buffer.hpp"

#include "vk_device.hpp"

#include <atomic>

namespace hetero::vk {

namespace {
std::atomic<uint64_t> g_buffer_ids{1};
}

DeviceBuffer::DeviceBuffer(Device& dev, uint32_t index, uint64_t size, MemoryUse use)
    : sdk::Buffer(index, size), dev_(dev), id_(g_buffer_ids.fetch_add(1)) {
    // Refuse before vkCreateBuffer: sizes beyond the device's limits are undefined behaviour there.
    if (dev.info().memory_bytes && size > dev.info().memory_bytes)
        sdk::fail(HETERO_ERR_OUT_OF_MEMORY, "vulkan: " + std::to_string(size) + " bytes exceed the " +
                                                std::to_string(dev.info().memory_bytes) + " bytes of " + dev.info().name);
    VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    // Whole 32-bit words, so shaders reading a tensor's last word stay inside the buffer.
    ci.size = (size + 15) / 16 * 16;
    ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(dev.handle(), &ci, nullptr, &buffer_), "vkCreateBuffer");
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(dev.handle(), buffer_, &req);
    try {
        alloc_ = dev.memory().allocate(req, use);
        check(vkBindBufferMemory(dev.handle(), buffer_, alloc_.memory, alloc_.offset), "vkBindBufferMemory");
    } catch (...) {
        dev.memory().free(alloc_);
        vkDestroyBuffer(dev.handle(), buffer_, nullptr);
        throw;
    }
}

DeviceBuffer::~DeviceBuffer() {
    dev_.flush_writes(true);  // a recorded write must not outlive its buffer
    vkDestroyBuffer(dev_.handle(), buffer_, nullptr);
    dev_.memory().free(alloc_);
}

}  // namespace hetero::vk
