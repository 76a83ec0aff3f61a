#include "vk_memory.hpp"

#include <algorithm>

namespace hetero::vk {

MemoryAllocator::MemoryAllocator(VkPhysicalDevice phys, VkDevice dev, bool unified) : dev_(dev), unified_(unified) {
    vkGetPhysicalDeviceMemoryProperties(phys, &props_);
}

MemoryAllocator::~MemoryAllocator() {
    for (auto& b : blocks_) {
        if (b->mapped) vkUnmapMemory(dev_, b->memory);
        vkFreeMemory(dev_, b->memory, nullptr);
    }
}

uint32_t MemoryAllocator::pick_type(uint32_t bits, MemoryUse use) const {
    constexpr VkMemoryPropertyFlags kDL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    constexpr VkMemoryPropertyFlags kHV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    // Preference lists: the first memory type matching any entry wins.
    std::vector<VkMemoryPropertyFlags> wants;
    if (use == MemoryUse::Device) {
        // Unified memory: map the device memory itself so no staging copies are needed.
        if (unified_) wants = {kDL | kHV | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, kDL | kHV, kDL};
        else wants = {kDL, kHV};
    } else if (use == MemoryUse::Shared) {
        // Every dispatch reads the meta buffer: keep it in VRAM (BAR) on discrete GPUs.
        wants = {kDL | kHV, kHV};
    } else {
        wants = {kHV | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, kHV};
    }
    // Discrete GPUs: plain VRAM first, so tensors do not eat the small host-visible BAR window.
    if (use == MemoryUse::Device && !unified_)
        for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
            const VkMemoryPropertyFlags f = props_.memoryTypes[i].propertyFlags;
            if ((bits & (1u << i)) && (f & kDL) && !(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) return i;
        }
    for (VkMemoryPropertyFlags want : wants)
        for (uint32_t i = 0; i < props_.memoryTypeCount; ++i)
            if ((bits & (1u << i)) && (props_.memoryTypes[i].propertyFlags & want) == want) return i;
    sdk::fail(HETERO_ERR_OUT_OF_MEMORY, "vulkan: no memory type fits the buffer");
}

MemoryAllocator::Block* MemoryAllocator::new_block(uint32_t type, VkDeviceSize size, bool dedicated) {
    VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    info.allocationSize = size;
    info.memoryTypeIndex = type;
    auto b = std::make_unique<Block>();
    VkResult r = vkAllocateMemory(dev_, &info, nullptr, &b->memory);
    if (r != VK_SUCCESS)
        sdk::fail(HETERO_ERR_OUT_OF_MEMORY, "vulkan: cannot allocate " + std::to_string(size >> 20) + " MiB of device memory (" +
                                                result_name(r) + ")");
    b->size = size;
    b->type = type;
    b->dedicated = dedicated;
    if (props_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        void* p = nullptr;
        r = vkMapMemory(dev_, b->memory, 0, VK_WHOLE_SIZE, 0, &p);
        if (r != VK_SUCCESS) {
            vkFreeMemory(dev_, b->memory, nullptr);
            check(r, "vkMapMemory");
        }
        b->mapped = static_cast<uint8_t*>(p);
    }
    b->free = sdk::FreeRanges(size);
    blocks_.push_back(std::move(b));
    return blocks_.back().get();
}

void MemoryAllocator::release_block(Block* b) {
    if (b->mapped) vkUnmapMemory(dev_, b->memory);
    vkFreeMemory(dev_, b->memory, nullptr);
    blocks_.erase(std::find_if(blocks_.begin(), blocks_.end(), [&](const auto& p) { return p.get() == b; }));
}

Allocation MemoryAllocator::allocate(const VkMemoryRequirements& req, MemoryUse use) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint32_t type = pick_type(req.memoryTypeBits, use);
    if (use == MemoryUse::Device && (props_.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        device_mapped_ = true;
    const VkDeviceSize align = std::max<VkDeviceSize>(req.alignment, 16);
    const VkDeviceSize size = std::max<VkDeviceSize>(req.size, 16);
    Block* block = nullptr;
    VkDeviceSize offset = 0;
    if (size >= kDedicatedAbove) {
        block = new_block(type, size, true);
        block->free.clear();
    } else {
        for (auto& b : blocks_)
            if (!b->dedicated && b->type == type && b->free.take(size, align, offset)) { block = b.get(); break; }
        if (!block) {
            const VkDeviceSize heap = props_.memoryHeaps[props_.memoryTypes[type].heapIndex].size;
            VkDeviceSize pooled = 0;
            for (const auto& b : blocks_)
                if (!b->dedicated && b->type == type) pooled += b->size;
            const VkDeviceSize grow = std::clamp(pooled, kMinBlock, kMaxBlock);
            block = new_block(type, std::max(size, std::min(grow, heap / 4)), false);
            if (!block->free.take(size, align, offset)) sdk::fail(HETERO_ERR_INTERNAL, "vulkan: fresh memory block too small");
        }
    }
    return Allocation{block->memory, offset, size, block->mapped ? block->mapped + offset : nullptr, block};
}

void MemoryAllocator::free(const Allocation& a) {
    if (!a.block) return;
    std::lock_guard<std::mutex> lock(mu_);
    Block* b = static_cast<Block*>(a.block);
    if (b->dedicated) { release_block(b); return; }
    b->free.give_back(a.offset, a.size);
    if (b->free.all_free()) release_block(b);
}

}  // namespace hetero::vk
