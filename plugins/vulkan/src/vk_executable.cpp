#include "vk_executable.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace hetero::vk {

namespace {

using sdk::count_uses;
using sdk::find_residual_fusions;
using sdk::keep_inputs_alive;
using sdk::read_elsewhere;

constexpr uint32_t kMetaHeaderWords = 4;  // err_code, err_node, err_value, pad

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

// Node groups: per node, the size of the group of nodes starting there that
// one dispatch runs (1 = none; see can_join_group), outside residual fusions;
// for a group, the RMSNORM before it, the SWIGLU after it and the first of the
// STORE_ROWS pair after it that it also runs (-1 = none; see can_fuse_norm,
// can_fuse_swiglu, can_fuse_rope_store); per node, whether another node's
// dispatch runs it.
struct Groups {
    std::vector<size_t> size;
    std::vector<int64_t> norm, swiglu, stores;
    std::vector<bool> absorbed;
};

// `planned` keeps the members' inputs (and a fused norm's) alive through each group.
Groups find_groups(const DeviceInfo& dev, const sdk::Graph& g, const std::vector<uint32_t>& uses, const std::vector<ResidualFusion>& fusions,
                   sdk::Graph& planned) {
    const size_t nn = g.nodes.size();
    Groups out{std::vector<size_t>(nn, 1), std::vector<int64_t>(nn, -1), std::vector<int64_t>(nn, -1), std::vector<int64_t>(nn, -1),
               std::vector<bool>(nn, false)};
    std::vector<size_t>& group = out.size;
    static const bool enabled = !sdk::env_equals("HETERO_VK_GROUP", "0");
    if (!enabled) return out;
    auto fused = [&](size_t n) { return fusions[n].residual >= 0 || (n > 0 && fusions[n - 1].residual >= 0); };
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        if (fused(n)) continue;
        const size_t most = std::min(max_group_size(g.nodes[n]), kMaxGroup);
        size_t len = 1;
        while (len < most && n + len < g.nodes.size() && !fused(n + len)) {
            bool ok = true;
            for (size_t m = n; m < n + len && ok; ++m) ok = can_join_group(dev, g.nodes[m], g.nodes[n + len], g.tensors.data());
            if (!ok) break;
            ++len;
        }
        if (len < 2) continue;
        const std::vector<hetero_node> members(g.nodes.begin() + n, g.nodes.begin() + n + len);
        uint64_t rows = 0;
        for (const hetero_node& m : members) rows += uint64_t(g.tensors[m.inputs[1]].shape[0]);
        const bool norm = n > 0 && group[n - 1] == 1 && !fused(n - 1) && !out.absorbed[n - 1] && rows <= norm_fusion_max_rows() &&
                          can_fuse_norm(dev, g.nodes[n - 1], g.nodes[n], g.tensors.data()) &&
                          !read_elsewhere(g, uses, g.nodes[n - 1].output, n - 1, len + 1);
        const bool swiglu = n + len < nn && !fused(n + len) && can_fuse_swiglu(members, g.nodes[n + len], g.tensors.data()) &&
                            !read_elsewhere(g, uses, members[0].output, n, len + 1) && !read_elsewhere(g, uses, members[1].output, n, len + 1);
        bool stores = false;
        if ((members[0].op == HETERO_OP_ROPE || members[0].op == HETERO_OP_ROPE_SCALED) && n + len + 1 < nn && !fused(n + len) && !fused(n + len + 1)) {
            const std::vector<hetero_node> st(g.nodes.begin() + n + len, g.nodes.begin() + n + len + 2);
            stores = can_join_group(dev, st[0], st[1], g.tensors.data()) && can_fuse_rope_store(dev, members, st, g.tensors.data()) &&
                     !read_elsewhere(g, uses, members[1].output, n, len + 2);
        }
        const size_t first = norm ? n - 1 : n, after = (swiglu ? 1 : 0) + (stores ? 2 : 0);
        if (!keep_inputs_alive(g, first, len + (norm ? 1 : 0) + after, planned)) continue;
        group[n] = len;
        if (stores) {
            out.stores[n] = int64_t(n + len);
            out.absorbed[n + len] = out.absorbed[n + len + 1] = true;
        }
        if (norm) {
            out.norm[n] = int64_t(n - 1);
            out.absorbed[n - 1] = true;
        }
        if (swiglu) {
            out.swiglu[n] = int64_t(n + len);
            out.absorbed[n + len] = true;
        }
        n += len - 1 + after;
    }
    return out;
}

}  // namespace

// ------------------------------------------------------------------ runs

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

// ------------------------------------------------------------------ compile

VkExecutable::VkExecutable(Device& dev, uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants)
    : sdk::Executable(device, std::move(graph)), dev_(dev), shared_(std::make_shared<ExecShared>(dev)) {
    const sdk::Graph& g = this->graph();
    const uint32_t nt = uint32_t(g.tensors.size());
    try {
        for (uint32_t n = 0; n < g.nodes.size(); ++n) {
            const hetero_node& node = g.nodes[n];
            shared_->node_names.push_back("node " + std::to_string(n) + " (" + sdk::op_name(node.op) + ")");
            try {
                check_node_supported(dev.info(), node, g.tensors.data());
            } catch (const sdk::Error& e) {
                sdk::fail(e.status(), "vulkan: cannot compile node " + std::to_string(n) + ": " + e.what());
            }
        }
        // Internal tensors share one arena laid out by the static memory plan.
        // A fused matmul writes the ADD's output while still reading its own
        // input, so the plan keeps that input alive through the ADD.
        const std::vector<uint32_t> uses = count_uses(g);
        std::vector<ResidualFusion> fusions = find_residual_fusions(g, uses);
        sdk::Graph planned = g;
        for (size_t n = 0; n + 1 < g.nodes.size(); ++n)
            if (fusions[n].residual >= 0 && !keep_inputs_alive(g, n, 2, planned)) fusions[n] = ResidualFusion{};
        const Groups groups = find_groups(dev.info(), g, uses, fusions, planned);
        const std::vector<size_t>& group = groups.size;
        const sdk::MemoryPlan plan = sdk::plan_internal_memory(planned);
        for (uint32_t n = 0; n < g.nodes.size(); ++n) {
            if (n > 0 && fusions[n - 1].residual >= 0) continue;  // this ADD runs inside the matmul before it
            if (groups.absorbed[n]) continue;                       // a node its group's dispatch runs (norm, swiglu, stores)
            if (group[n] > 1) {
                const std::vector<hetero_node> members(g.nodes.begin() + n, g.nodes.begin() + n + group[n]);
                const hetero_node* norm = groups.norm[n] >= 0 ? &g.nodes[size_t(groups.norm[n])] : nullptr;
                const hetero_node* swiglu = groups.swiglu[n] >= 0 ? &g.nodes[size_t(groups.swiglu[n])] : nullptr;
                std::vector<hetero_node> stores;
                if (groups.stores[n] >= 0) stores.assign(g.nodes.begin() + groups.stores[n], g.nodes.begin() + groups.stores[n] + 2);
                dispatches_.push_back(lower_group(dev.info(), members, n, g.tensors.data(), norm, swiglu, stores));
                n += uint32_t(group[n] - 1);
                continue;
            }
            for (Dispatch& d : lower_node(dev.info(), g.nodes[n], n, g.tensors.data(), fusions[n])) dispatches_.push_back(std::move(d));
        }
        store_gemm_inputs_in_f16(dev.info(), g.tensors.data(), g.tensors.size(), dispatches_);
        std::vector<Pipelines::Key> keys;
        for (const Dispatch& d : dispatches_) keys.emplace_back(d.shader, d.spec);
        pipelines_ = dev.pipelines().get_all(keys);
        if (profiling_enabled()) {
            std::vector<std::string> labels;
            std::vector<uint64_t> bytes;
            for (const Dispatch& d : dispatches_) {
                std::string l = d.shader;
                uint64_t b = 0;
                for (uint32_t i = 0; i < kOperandBindings; ++i) {
                    const int32_t t = d.operand[i];
                    if (t < 0) continue;
                    b += sdk::tensor_bytes(g.tensors[t]);
                    l += i == 0 ? " " : i == kFirstOutput ? " -> " : i == kFirstOutput + kOutputs ? " with " : ", ";
                    l += sdk::shape_label(g.tensors[t]);
                }
                labels.push_back(l);
                bytes.push_back(b);
            }
            shared_->profiler = std::make_unique<DispatchProfiler>(dev, std::move(labels), std::move(bytes));
        }

        arena_ = std::make_unique<DeviceBuffer>(dev, device, std::max<uint64_t>(plan.arena_bytes, 64), MemoryUse::Device);
        shared_->meta = std::make_unique<DeviceBuffer>(dev, device, 4 * kMetaHeaderWords, MemoryUse::Shared);
        std::memset(shared_->meta->mapped(), 0, shared_->meta->size());
        slots_.resize(nt);
        for (uint32_t t = 0; t < nt; ++t) {
            if (g.tensors[t].kind == HETERO_TENSOR_INTERNAL) place(t, *arena_, plan.offset[t]);
            else if (g.tensors[t].kind == HETERO_TENSOR_CONSTANT) place(t, static_cast<DeviceBuffer&>(*constants[t].buffer), constants[t].offset);
        }

        // Barriers only where a dispatch touches memory an earlier one (since
        // the last barrier) wrote, or writes memory one of them read. Bound
        // tensors may alias each other, so they all count as one region.
        struct Region { bool external; uint64_t lo, hi; };
        auto region = [&](int32_t t) -> std::optional<Region> {
            if (t < 0 || g.tensors[t].kind == HETERO_TENSOR_CONSTANT) return std::nullopt;
            if (g.tensors[t].kind == HETERO_TENSOR_BOUND) return Region{true, 0, 0};
            return Region{false, plan.offset[t], plan.offset[t] + sdk::tensor_bytes(g.tensors[t])};
        };
        auto overlap = [](const Region& a, const Region& b) {
            if (a.external || b.external) return a.external && b.external;
            return a.lo < b.hi && b.lo < a.hi;
        };
        std::vector<Region> written, read;
        for (const Dispatch& d : dispatches_) {
            std::vector<Region> reads, writes;
            for (uint32_t b = 0; b < kOperandBindings; ++b)
                if (auto r = region(d.operand[b])) (is_output_operand(b) ? writes : reads).push_back(*r);
            bool need = false;
            for (const Region& r : reads)
                for (const Region& x : written) need = need || overlap(r, x);
            for (const Region& w : writes) {
                for (const Region& x : written) need = need || overlap(w, x);
                for (const Region& x : read) need = need || overlap(w, x);
            }
            barrier_before_.push_back(need);
            if (need) { written.clear(); read.clear(); }
            read.insert(read.end(), reads.begin(), reads.end());
            written.insert(written.end(), writes.begin(), writes.end());
        }

        // One descriptor set per dispatch.
        const uint32_t nsets = std::max<uint32_t>(1, uint32_t(dispatches_.size()));
        VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nsets * (kOperandBindings + 1)};
        VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        pi.flags = dev.info().update_after_bind ? VK_DESCRIPTOR_POOL_CREATE_UPDATE_AFTER_BIND_BIT : 0;
        pi.maxSets = nsets;
        pi.poolSizeCount = 1;
        pi.pPoolSizes = &ps;
        check(vkCreateDescriptorPool(dev.handle(), &pi, nullptr, &pool_), "vkCreateDescriptorPool");
        if (!dispatches_.empty()) {
            std::vector<VkDescriptorSetLayout> layouts(dispatches_.size(), dev.pipelines().set_layout());
            sets_.resize(dispatches_.size());
            VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
            ai.descriptorPool = pool_;
            ai.descriptorSetCount = uint32_t(layouts.size());
            ai.pSetLayouts = layouts.data();
            check(vkAllocateDescriptorSets(dev.handle(), &ai, sets_.data()), "vkAllocateDescriptorSets");
        }
        // Meta buffer and unused bindings now, then every tensor already placed.
        {
            VkDescriptorBufferInfo meta{shared_->meta->handle(), 0, VK_WHOLE_SIZE};
            std::vector<VkWriteDescriptorSet> writes;
            for (size_t i = 0; i < dispatches_.size(); ++i)
                for (uint32_t b = 0; b <= kOperandBindings; ++b) {
                    if (b > 0 && dispatches_[i].operand[b - 1] >= 0) continue;
                    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
                    w.dstSet = sets_[i];
                    w.dstBinding = b;
                    w.descriptorCount = 1;
                    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
                    w.pBufferInfo = &meta;
                    writes.push_back(w);
                }
            if (!writes.empty()) vkUpdateDescriptorSets(dev.handle(), uint32_t(writes.size()), writes.data(), 0, nullptr);
        }
        std::vector<bool> known(nt);
        for (uint32_t t = 0; t < nt; ++t) known[t] = g.tensors[t].kind != HETERO_TENSOR_BOUND;
        write_descriptors(known);

        VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        ci.queueFamilyIndex = dev.queue_family();
        check(vkCreateCommandPool(dev.handle(), &ci, nullptr, &cmd_pool_), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        cai.commandPool = cmd_pool_;
        cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        cai.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(dev.handle(), &cai, &cmd_), "vkAllocateCommandBuffers");
        // With update-after-bind descriptors the command buffer never needs re-recording.
        if (dev.info().update_after_bind) record();
        dev.pipelines().save_cache();
    } catch (...) {
        release();
        throw;
    }
}

VkExecutable::~VkExecutable() {
    {
        std::lock_guard<std::mutex> lock(shared_->mu);
        if (shared_->last) shared_->finish(*shared_->last);
        if (shared_->profiler) shared_->profiler->report();
        shared_->profiler.reset();
    }
    release();
}

void VkExecutable::release() noexcept {
    if (cmd_pool_) vkDestroyCommandPool(dev_.handle(), cmd_pool_, nullptr);
    if (pool_) vkDestroyDescriptorPool(dev_.handle(), pool_, nullptr);
    cmd_pool_ = VK_NULL_HANDLE;
    pool_ = VK_NULL_HANDLE;
    arena_.reset();
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

// ------------------------------------------------------------------ execute

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
