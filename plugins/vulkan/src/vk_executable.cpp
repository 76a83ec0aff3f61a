// Compiling a subgraph: every node checked and lowered to dispatches (node
// groups and fused residual ADDs included), the pipelines built, internal
// tensors placed in one arena by the static memory plan, the barriers
// between dispatches planned, and a descriptor set per dispatch.
#include "vk_executable.hpp"
#include "vk_fusion.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

namespace hetero::vk {

namespace {

using sdk::count_uses;
using sdk::find_residual_fusions;
using sdk::keep_inputs_alive;

// The profiler of HETERO_VK_PROFILE=1: each dispatch labelled with its
// shader and operand shapes, and the bytes its operands take.
std::unique_ptr<DispatchProfiler> dispatch_profiler(Device& dev, const sdk::Graph& g, const std::vector<Dispatch>& dispatches) {
    std::vector<std::string> labels;
    std::vector<uint64_t> bytes;
    for (const Dispatch& d : dispatches) {
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
    return std::make_unique<DispatchProfiler>(dev, std::move(labels), std::move(bytes));
}

// Barriers only where a dispatch touches memory an earlier one (since the
// last barrier) wrote, or writes memory one of them read. Bound tensors may
// alias each other, so they all count as one region; the scratch area
// (kScratchOperand) is the arena's bytes [scratch_lo, scratch_hi). Returns,
// per dispatch, whether a barrier goes before it.
std::vector<bool> plan_barriers(const sdk::Graph& g, const sdk::MemoryPlan& plan, const std::vector<Dispatch>& dispatches,
                                uint64_t scratch_lo, uint64_t scratch_hi) {
    struct Region { bool external; uint64_t lo, hi; };
    auto region = [&](int32_t t) -> std::optional<Region> {
        if (t == kScratchOperand) return Region{false, scratch_lo, scratch_hi};
        if (t < 0 || g.tensors[t].kind == HETERO_TENSOR_CONSTANT) return std::nullopt;
        if (g.tensors[t].kind == HETERO_TENSOR_BOUND) return Region{true, 0, 0};
        return Region{false, plan.offset[t], plan.offset[t] + sdk::tensor_bytes(g.tensors[t])};
    };
    auto overlap = [](const Region& a, const Region& b) {
        if (a.external || b.external) return a.external && b.external;
        return a.lo < b.hi && b.lo < a.hi;
    };
    std::vector<bool> before;
    std::vector<Region> written, read;
    for (const Dispatch& d : dispatches) {
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
        before.push_back(need);
        if (need) { written.clear(); read.clear(); }
        read.insert(read.end(), reads.begin(), reads.end());
        written.insert(written.end(), writes.begin(), writes.end());
    }
    return before;
}

}  // namespace

VkExecutable::VkExecutable(Device& dev, uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants)
    : sdk::Executable(device, std::move(graph)), dev_(dev), shared_(std::make_shared<ExecShared>(dev)) {
    try {
        check_nodes();
        const sdk::MemoryPlan plan = lower_graph();
        std::vector<Pipelines::Key> keys;
        for (const Dispatch& d : dispatches_) keys.emplace_back(d.shader, d.spec);
        pipelines_ = dev.pipelines().get_all(keys);
        if (profiling_enabled()) shared_->profiler = dispatch_profiler(dev, this->graph(), dispatches_);
        place_tensors(plan, constants);
        barrier_before_ = plan_barriers(this->graph(), plan, dispatches_, scratch_offset_, scratch_offset_ + scratch_bytes_);
        create_descriptor_sets();
        create_command_buffer();
        // With update-after-bind descriptors the command buffer never needs re-recording.
        if (dev.info().update_after_bind) record();
        dev.pipelines().save_cache();
    } catch (...) {
        release();
        throw;
    }
}

void VkExecutable::check_nodes() {
    const sdk::Graph& g = graph();
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
        const hetero_node& node = g.nodes[n];
        shared_->node_names.push_back("node " + std::to_string(n) + " (" + sdk::op_name(node.op) + ")");
        try {
            check_node_supported(dev_.info(), node, g.tensors.data());
        } catch (const sdk::Error& e) {
            sdk::fail(e.status(), "vulkan: cannot compile node " + std::to_string(n) + ": " + e.what());
        }
    }
}

sdk::MemoryPlan VkExecutable::lower_graph() {
    const sdk::Graph& g = graph();
    // Internal tensors share one arena laid out by the static memory plan.
    // A fused matmul writes the ADD's output while still reading its own
    // input, so the plan keeps that input alive through the ADD.
    const std::vector<uint32_t> uses = count_uses(g);
    std::vector<ResidualFusion> fusions = find_residual_fusions(g, uses);
    sdk::Graph planned = g;
    for (size_t n = 0; n + 1 < g.nodes.size(); ++n)
        if (fusions[n].residual >= 0 && !keep_inputs_alive(g, n, 2, planned)) fusions[n] = ResidualFusion{};
    const Groups groups = find_groups(dev_.info(), g, uses, fusions, planned);
    sdk::MemoryPlan plan = sdk::plan_internal_memory(planned);
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
        if (n > 0 && fusions[n - 1].residual >= 0) continue;  // this ADD runs inside the matmul before it
        if (groups.absorbed[n]) continue;                       // a node its group's dispatch runs (norm, swiglu, stores)
        if (groups.size[n] > 1) {
            const std::vector<hetero_node> members(g.nodes.begin() + n, g.nodes.begin() + n + groups.size[n]);
            const hetero_node* norm = groups.norm[n] >= 0 ? &g.nodes[size_t(groups.norm[n])] : nullptr;
            const hetero_node* swiglu = groups.swiglu[n] >= 0 ? &g.nodes[size_t(groups.swiglu[n])] : nullptr;
            std::vector<hetero_node> stores;
            if (groups.stores[n] >= 0) stores.assign(g.nodes.begin() + groups.stores[n], g.nodes.begin() + groups.stores[n] + 2);
            dispatches_.push_back(lower_group(dev_.info(), members, n, g.tensors.data(), norm, swiglu, stores));
            n += uint32_t(groups.size[n] - 1);
            continue;
        }
        for (Dispatch& d : lower_node(dev_.info(), g.nodes[n], n, g.tensors.data(), fusions[n])) dispatches_.push_back(std::move(d));
    }
    store_gemm_inputs_in_f16(dev_.info(), g.tensors.data(), g.tensors.size(), dispatches_);
    return plan;
}

void VkExecutable::place_tensors(const sdk::MemoryPlan& plan, const std::vector<sdk::BoundTensor>& constants) {
    const sdk::Graph& g = graph();
    const uint32_t nt = uint32_t(g.tensors.size());
    // The scratch area after the tensors, at an offset a descriptor can start at.
    const uint64_t align = dev_.info().min_offset_align;
    scratch_offset_ = (plan.arena_bytes + align - 1) / align * align;
    for (const Dispatch& d : dispatches_) scratch_bytes_ = std::max(scratch_bytes_, d.scratch_bytes);
    arena_ = std::make_unique<DeviceBuffer>(dev_, device(), std::max<uint64_t>(scratch_offset_ + scratch_bytes_, 64), MemoryUse::Device);
    shared_->meta = std::make_unique<DeviceBuffer>(dev_, device(), 4 * kMetaHeaderWords, MemoryUse::Shared);
    std::memset(shared_->meta->mapped(), 0, shared_->meta->size());
    slots_.resize(nt);
    for (uint32_t t = 0; t < nt; ++t) {
        if (g.tensors[t].kind == HETERO_TENSOR_INTERNAL) place(t, *arena_, plan.offset[t]);
        else if (g.tensors[t].kind == HETERO_TENSOR_CONSTANT) place(t, static_cast<DeviceBuffer&>(*constants[t].buffer), constants[t].offset);
    }
}

// One descriptor set per dispatch: the meta buffer and unused bindings now
// (the meta buffer stands in for the latter), then every tensor already
// placed; bound tensors are written at each execute.
void VkExecutable::create_descriptor_sets() {
    const uint32_t nsets = std::max<uint32_t>(1, uint32_t(dispatches_.size()));
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nsets * (kOperandBindings + 1)};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.flags = dev_.info().update_after_bind ? VK_DESCRIPTOR_POOL_CREATE_UPDATE_AFTER_BIND_BIT : 0;
    pi.maxSets = nsets;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &ps;
    check(vkCreateDescriptorPool(dev_.handle(), &pi, nullptr, &pool_), "vkCreateDescriptorPool");
    if (!dispatches_.empty()) {
        std::vector<VkDescriptorSetLayout> layouts(dispatches_.size(), dev_.pipelines().set_layout());
        sets_.resize(dispatches_.size());
        VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        ai.descriptorPool = pool_;
        ai.descriptorSetCount = uint32_t(layouts.size());
        ai.pSetLayouts = layouts.data();
        check(vkAllocateDescriptorSets(dev_.handle(), &ai, sets_.data()), "vkAllocateDescriptorSets");
    }
    VkDescriptorBufferInfo meta{shared_->meta->handle(), 0, VK_WHOLE_SIZE};
    VkDescriptorBufferInfo scratch{arena_->handle(), scratch_offset_, std::max<uint64_t>(scratch_bytes_, 4)};
    std::vector<VkWriteDescriptorSet> writes;
    for (size_t i = 0; i < dispatches_.size(); ++i)
        for (uint32_t b = 0; b <= kOperandBindings; ++b) {
            const int32_t t = b > 0 ? dispatches_[i].operand[b - 1] : -1;
            if (t >= 0) continue;
            VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            w.dstSet = sets_[i];
            w.dstBinding = b;
            w.descriptorCount = 1;
            w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            w.pBufferInfo = t == kScratchOperand ? &scratch : &meta;
            writes.push_back(w);
        }
    if (!writes.empty()) vkUpdateDescriptorSets(dev_.handle(), uint32_t(writes.size()), writes.data(), 0, nullptr);
    const sdk::Graph& g = graph();
    std::vector<bool> known(g.tensors.size());
    for (size_t t = 0; t < g.tensors.size(); ++t) known[t] = g.tensors[t].kind != HETERO_TENSOR_BOUND;
    write_descriptors(known);
}

void VkExecutable::create_command_buffer() {
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = dev_.queue_family();
    check(vkCreateCommandPool(dev_.handle(), &ci, nullptr, &cmd_pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = cmd_pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(dev_.handle(), &cai, &cmd_), "vkAllocateCommandBuffers");
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

}  // namespace hetero::vk
