// Device memory: few large VkDeviceMemory blocks carved up by a best-fit free
// list (drivers limit the number of allocations and each one is slow), with
// dedicated allocations for huge buffers.
#pragma once

#include "vk_common.hpp"

#include <hetero/sdk/free_ranges.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace hetero::vk {

enum class MemoryUse {
    Device,  // tensors: device-local (host-visible too on unified-memory devices)
    Host,    // staging: host-visible and coherent, preferably host-cached
    Shared   // small buffers both sides touch often (meta): device-local and host-visible where possible
};

struct Allocation {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;
    VkDeviceSize size = 0;
    uint8_t* mapped = nullptr;  // host address of `offset`, or null
    void* block = nullptr;      // owning block, for free()
};

class MemoryAllocator {
public:
    MemoryAllocator(VkPhysicalDevice phys, VkDevice dev, bool unified);
    ~MemoryAllocator();
    MemoryAllocator(const MemoryAllocator&) = delete;
    MemoryAllocator& operator=(const MemoryAllocator&) = delete;

    Allocation allocate(const VkMemoryRequirements& req, MemoryUse use);
    void free(const Allocation& a);
    bool device_memory_is_mapped() const { return device_mapped_; }

    // Blocks of a memory type grow from kMinBlock, each as large as the
    // type's blocks so far, up to kMaxBlock: a small model pins little
    // memory, a large one few allocations (a 7B model's weights: ~30).
    static constexpr VkDeviceSize kMinBlock = VkDeviceSize(16) << 20;
    static constexpr VkDeviceSize kMaxBlock = VkDeviceSize(128) << 20;
    static constexpr VkDeviceSize kDedicatedAbove = VkDeviceSize(32) << 20;

private:
    struct Block {
        VkDeviceMemory memory = VK_NULL_HANDLE;
        VkDeviceSize size = 0;
        uint32_t type = 0;
        uint8_t* mapped = nullptr;
        bool dedicated = false;
        sdk::FreeRanges free{0};
    };
    uint32_t pick_type(uint32_t type_bits, MemoryUse use) const;
    Block* new_block(uint32_t type, VkDeviceSize size, bool dedicated);
    void release_block(Block* b);

    VkDevice dev_;
    VkPhysicalDeviceMemoryProperties props_{};
    bool unified_;
    bool device_mapped_ = false;
    std::mutex mu_;
    std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace hetero::vk
