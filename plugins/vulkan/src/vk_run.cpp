// Running an executable: where each tensor lives as a descriptor sees it,
// the descriptors of bound tensors that moved, the command buffer (recorded
// once, again only when an offset the shaders are pushed changed), the
// submission, and the error flag that completes a run (VkEvent).
#include "vk_executable.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace hetero::vk {

namespace {

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Alignment the shaders need for a tensor's first byte.
uint64_t element_alignment(uint32_t dtype) {
    switch (dtype) {
        case HETERO_DTYPE_F32:
        case HETERO_DTYPE_I32: return 4;
        case HETERO_DTYPE_I8: return 1;
        default: return 2;  // f16, bf16 and GGUF blocks are read as 16-bit pieces
    }
}

std::string tensor_label(const sdk::Graph& g, uint32_t t) {
    const char* n = g.tensors[t].name;
    return "tensor " + std::to_string(t) + (n && *n ? " (" + std::string(n) + ")" : "");
}

}  // namespace

void ExecShared::finish(RunState& run) {
    if (run.finished) return;
    run.finished = true;
    try {
        dev.wait(run.value);
    } catch (const sdk::Error& e) {
        run.status = e.status();
        run.message = e.what();
        return;
    }
    if (profiler)
        profiler->collect(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - run.submitted).count());
    const auto* m = reinterpret_cast<const uint32_t*>(meta->mapped());
    if (m[0] != 0) {
        const uint32_t node = m[1];
        const std::string where = node < node_names.size() ? node_names[node] : "node " + std::to_string(node);
        const char* what = m[0] == 1 ? "token id" : "position";
        run.status = HETERO_ERR_INVALID_ARGUMENT;
        run.message = "vulkan: " + where + ": " + what + " " + std::to_string(int32_t(m[2])) + " out of range";
    }
}

void VkEvent::wait() {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->finish(*run_);
    if (run_->status != HETERO_OK) sdk::fail(run_->status, run_->message);
}

bool VkExecutable::place(uint32_t t, const DeviceBuffer& buf, uint64_t offset) {
    const hetero_tensor_desc& desc = graph().tensors[t];
    const uint64_t bytes = sdk::tensor_bytes(desc);
    if (offset % element_alignment(desc.dtype) != 0)
        sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "vulkan: " + tensor_label(graph(), t) + " is bound at offset " + std::to_string(offset) +
                                                   ", which is not a multiple of " + std::to_string(element_alignment(desc.dtype)));
    // Descriptor offsets must be aligned; the shader adds the remainder from the meta buffer.
    const uint64_t align = dev_.info().min_offset_align;
    Slot s;
    s.buffer = buf.handle();
    s.buffer_id = buf.id();
    s.offset = offset;
    s.desc_offset = offset / align * align;
    const uint64_t rem = offset - s.desc_offset;
    s.desc_range = std::min(round_up(rem + bytes, 4), round_up(buf.size(), 16) - s.desc_offset);
    if (rem + bytes > dev_.info().max_storage_range)
        sdk::fail(HETERO_ERR_UNSUPPORTED, "vulkan: " + tensor_label(graph(), t) + " exceeds the device's storage buffer range");
    s.rem = uint32_t(rem);
    const bool moved = slots_[t].rem != s.rem;
    slots_[t] = s;
    return moved;
}

void VkExecutable::write_descriptors(const std::vector<bool>& tensors) {
    std::vector<VkDescriptorBufferInfo> infos;
    infos.reserve(dispatches_.size() * kOperandBindings);
    std::vector<VkWriteDescriptorSet> writes;
    for (size_t i = 0; i < dispatches_.size(); ++i)
        for (uint32_t b = 0; b < kOperandBindings; ++b) {
            const int32_t t = dispatches_[i].operand[b];
            if (t < 0 || !tensors[size_t(t)]) continue;
            infos.push_back(VkDescriptorBufferInfo{slots_[t].buffer, slots_[t].desc_offset, slots_[t].desc_range});
            VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            w.dstSet = sets_[i];
            w.dstBinding = b + 1;
            w.descriptorCount = 1;
            w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            w.pBufferInfo = &infos.back();
            writes.push_back(w);
        }
    if (!writes.empty()) vkUpdateDescriptorSets(dev_.handle(), uint32_t(writes.size()), writes.data(), 0, nullptr);
}

void VkExecutable::record() {
    check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    // Everything submitted earlier (other executables, uploads, host writes) happens first.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    if (shared_->profiler) shared_->profiler->record_start(cmd_);
    for (size_t i = 0; i < dispatches_.size(); ++i) {
        const Dispatch& d = dispatches_[i];
        if (barrier_before_[i]) {
            VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
            b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
            b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
            vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &b, 0,
                                 nullptr, 0, nullptr);
        }
        vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_[i]);
        vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, dev_.pipelines().layout(), 0, 1, &sets_[i], 0, nullptr);
        PushConstants push = d.push;
        for (uint32_t b = 0; b < kOperandBindings; ++b) push.tensor[b] = d.operand[b] >= 0 ? slots_[d.operand[b]].rem : 0u;
        vkCmdPushConstants(cmd_, dev_.pipelines().layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants), &push);
        vkCmdDispatch(cmd_, d.groups[0], d.groups[1], d.groups[2]);
        if (shared_->profiler) shared_->profiler->record_after(cmd_, i);
    }
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                         &mb, 0, nullptr, 0, nullptr);
    check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    recorded_ = true;
}

std::unique_ptr<sdk::Event> VkExecutable::execute(const std::vector<sdk::BoundTensor>& bound, bool want_event) {
    std::shared_ptr<RunState> run;
    {
        std::lock_guard<std::mutex> lock(shared_->mu);
        // The previous run must be done before its descriptors and meta buffer change.
        if (shared_->last) shared_->finish(*shared_->last);
        const uint32_t nt = uint32_t(slots_.size());
        std::vector<bool> changed(nt, false);
        bool any = false, moved = false;
        for (uint32_t t = 0; t < nt; ++t) {
            if (!bound[t].buffer) continue;
            const auto& buf = static_cast<const DeviceBuffer&>(*bound[t].buffer);
            if (slots_[t].buffer_id == buf.id() && slots_[t].offset == bound[t].offset) continue;
            try {
                moved = place(t, buf, bound[t].offset) || moved;
            } catch (...) {
                // Forget half-applied bindings so the next execute places them again.
                for (uint32_t c = 0; c < nt; ++c)
                    if (changed[c]) slots_[c].buffer_id = 0;
                if (moved) recorded_ = false;  // offsets already placed are not in the command buffer yet
                throw;
            }
            changed[t] = any = true;
        }
        if (any) {
            write_descriptors(changed);
            if (!dev_.info().update_after_bind || moved) recorded_ = false;
        }
        if (!recorded_) record();
        std::memset(shared_->meta->mapped(), 0, 4 * kMetaHeaderWords);
        run = std::make_shared<RunState>();
        run->submitted = std::chrono::steady_clock::now();
        run->value = dev_.submit(cmd_);
        shared_->last = run;
    }
    auto ev = std::make_unique<VkEvent>(shared_, run);
    if (!want_event) {
        ev->wait();
        return nullptr;
    }
    return ev;
}

}  // namespace hetero::vk
