#include "vk_transfer.hpp"

#include "vk_device.hpp"

#include <hetero/sdk/parallel_copy.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

namespace hetero::vk {

namespace {
constexpr uint64_t kStagingBytes = uint64_t(32) << 20;
}

Transfers::Transfers(Device& dev) : dev_(dev) {
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = dev.queue_family();
    check(vkCreateCommandPool(dev.handle(), &pi, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    if (const VkResult r = vkAllocateCommandBuffers(dev.handle(), &ai, &cb_); r != VK_SUCCESS) {
        vkDestroyCommandPool(dev.handle(), pool_, nullptr);
        check(r, "vkAllocateCommandBuffers");
    }
}

Transfers::~Transfers() {
    staging_.reset();
    vkDestroyCommandPool(dev_.handle(), pool_, nullptr);
}

DeviceBuffer& Transfers::staging() {
    if (!staging_) staging_ = std::make_unique<DeviceBuffer>(dev_, dev_.index(), kStagingBytes, MemoryUse::Host);
    return *staging_;
}

template <class F>
void Transfers::run(F&& record) {
    check(vkResetCommandBuffer(cb_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cb_, &bi), "vkBeginCommandBuffer");
    // Order against compute work submitted earlier and make host writes visible.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    record(cb_);
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         0, 1, &mb, 0, nullptr, 0, nullptr);
    check(vkEndCommandBuffer(cb_), "vkEndCommandBuffer");
    dev_.wait(dev_.submit(cb_));
}

void Transfers::write(DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t size) {
    if (dst.mapped()) {
        dev_.wait_all();  // earlier executions may still read or write these bytes
        std::memcpy(dst.mapped() + offset, src, size);
        return;
    }
    if (dev_.queue().record_small_write(dst.handle(), offset, src, size)) return;
    std::lock_guard<std::mutex> lock(mu_);
    DeviceBuffer& stage = staging();
    const auto* s = static_cast<const uint8_t*>(src);
    for (uint64_t done = 0; done < size; done += kStagingBytes) {
        const uint64_t n = std::min(kStagingBytes, size - done);
        sdk::copy_in_parallel(stage.mapped(), s + done, n);
        run([&](VkCommandBuffer cb) {
            VkBufferCopy c{0, offset + done, n};
            vkCmdCopyBuffer(cb, stage.handle(), dst.handle(), 1, &c);
        });
    }
}

void Transfers::read(DeviceBuffer& src, uint64_t offset, void* dst, uint64_t size) {
    if (src.mapped()) {
        dev_.wait_all();
        std::memcpy(dst, src.mapped() + offset, size);
        return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    DeviceBuffer& stage = staging();
    auto* d = static_cast<uint8_t*>(dst);
    for (uint64_t done = 0; done < size; done += kStagingBytes) {
        const uint64_t n = std::min(kStagingBytes, size - done);
        run([&](VkCommandBuffer cb) {
            VkBufferCopy c{offset + done, 0, n};
            vkCmdCopyBuffer(cb, src.handle(), stage.handle(), 1, &c);
        });
        sdk::copy_in_parallel(d + done, stage.mapped(), n);
    }
}

void Transfers::copy(DeviceBuffer& src, uint64_t src_offset, DeviceBuffer& dst, uint64_t dst_offset, uint64_t size) {
    if (&src == &dst && src_offset < dst_offset + size && dst_offset < src_offset + size) {
        // vkCmdCopyBuffer forbids overlapping regions: bounce through the host.
        std::vector<uint8_t> tmp(size);
        read(src, src_offset, tmp.data(), size);
        write(dst, dst_offset, tmp.data(), size);
        return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    run([&](VkCommandBuffer cb) {
        VkBufferCopy c{src_offset, dst_offset, size};
        vkCmdCopyBuffer(cb, src.handle(), dst.handle(), 1, &c);
    });
}

}  // namespace hetero::vk
