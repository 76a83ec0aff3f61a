// Building blocks for providers whose devices compute on host memory (CPU,
// NPU emulation): host buffers, zero-copy import, and a static memory plan for
// a graph's internal tensors that reuses space once a tensor is dead.
#pragma once

#include <hetero/sdk/provider.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hetero::sdk {

inline constexpr uint64_t kHostAlign = 64;

class HostBuffer : public Buffer {
public:
    // Owned, 64-byte aligned allocation.
    HostBuffer(uint32_t device, uint64_t size) : Buffer(device, size) {
        data_ = std::aligned_alloc(kHostAlign, (size + kHostAlign - 1) / kHostAlign * kHostAlign);
        if (!data_) fail(HETERO_ERR_OUT_OF_MEMORY, "cannot allocate " + std::to_string(size) + " bytes of host memory");
        owned_ = true;
    }
    // Wraps caller memory without a copy.
    HostBuffer(uint32_t device, void* ptr, uint64_t size) : Buffer(device, size), data_(ptr), owned_(false) {}
    ~HostBuffer() override {
        if (owned_) std::free(data_);
    }
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    uint8_t* data() const { return static_cast<uint8_t*>(data_); }

private:
    void* data_ = nullptr;
    bool owned_ = false;
};

inline uint8_t* host_data(const BoundTensor& b) { return static_cast<HostBuffer*>(b.buffer)->data() + b.offset; }

// Buffer handling shared by host-memory providers.
class HostMemoryProvider : public Provider {
public:
    std::unique_ptr<Buffer> alloc(uint32_t device, uint64_t size) override { return std::make_unique<HostBuffer>(device, size); }
    std::unique_ptr<Buffer> import_host(uint32_t device, void* ptr, uint64_t size) override {
        return std::make_unique<HostBuffer>(device, ptr, size);
    }
    void* host_ptr(Buffer& b) override { return static_cast<HostBuffer&>(b).data(); }
    void write(Buffer& dst, uint64_t offset, const void* src, uint64_t size) override {
        std::memmove(static_cast<HostBuffer&>(dst).data() + offset, src, size);
    }
    void read(Buffer& src, uint64_t offset, void* dst, uint64_t size) override {
        std::memmove(dst, static_cast<HostBuffer&>(src).data() + offset, size);
    }
    void copy(Buffer& src, uint64_t so, Buffer& dst, uint64_t d, uint64_t size) override {
        std::memmove(static_cast<HostBuffer&>(dst).data() + d, static_cast<HostBuffer&>(src).data() + so, size);
    }
};

// Offsets of internal tensors inside one scratch arena. Each internal tensor
// lives from the node that writes it to the last node that reads it; a tensor
// takes the lowest offset not overlapping any tensor alive at the same time.
struct MemoryPlan {
    std::vector<uint64_t> offset;  // per tensor; meaningful for internal tensors
    uint64_t arena_bytes = 0;
};

inline MemoryPlan plan_internal_memory(const Graph& g) {
    const size_t nt = g.tensors.size();
    std::vector<int64_t> first(nt, -1), last(nt, -1);
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        const hetero_node& node = g.nodes[n];
        for (uint32_t i = 0; i < node.n_inputs; ++i) last[size_t(node.inputs[i])] = int64_t(n);
        const size_t o = size_t(node.output);
        if (first[o] < 0) first[o] = int64_t(n);
        last[o] = std::max(last[o], int64_t(n));
    }
    MemoryPlan plan;
    plan.offset.assign(nt, 0);
    struct Placed { uint64_t off, size; int64_t from, to; };
    std::vector<Placed> placed;
    for (size_t t = 0; t < nt; ++t) {
        if (g.tensors[t].kind != HETERO_TENSOR_INTERNAL || first[t] < 0) continue;
        const uint64_t size = (tensor_bytes(g.tensors[t]) + kHostAlign - 1) / kHostAlign * kHostAlign;
        std::vector<std::pair<uint64_t, uint64_t>> busy;  // ranges alive at the same time
        for (const auto& p : placed)
            if (!(p.to < first[t] || last[t] < p.from)) busy.emplace_back(p.off, p.off + p.size);
        std::sort(busy.begin(), busy.end());
        uint64_t off = 0;
        for (const auto& [lo, hi] : busy) {
            if (off + size <= lo) break;
            off = std::max(off, hi);
        }
        plan.offset[t] = off;
        plan.arena_bytes = std::max(plan.arena_bytes, off + size);
        placed.push_back({off, size, first[t], last[t]});
    }
    return plan;
}

// A compiled graph for a host-memory device: constants resolved at compile,
// internals placed in an arena, bound tensors filled in per execute.
class HostExecutable : public Executable {
public:
    HostExecutable(uint32_t device, Graph graph, const std::vector<BoundTensor>& constants)
        : Executable(device, std::move(graph)), plan_(plan_internal_memory(this->graph())) {
        arena_ = std::make_unique<HostBuffer>(device, std::max<uint64_t>(plan_.arena_bytes, kHostAlign));
        ptrs_.assign(this->graph().tensors.size(), nullptr);
        for (size_t t = 0; t < ptrs_.size(); ++t) {
            if (this->graph().tensors[t].kind == HETERO_TENSOR_CONSTANT) ptrs_[t] = host_data(constants[t]);
            else if (this->graph().tensors[t].kind == HETERO_TENSOR_INTERNAL) ptrs_[t] = arena_->data() + plan_.offset[t];
        }
    }
    // Pointer per tensor for this execution.
    const std::vector<uint8_t*>& pointers(const std::vector<BoundTensor>& bound) {
        for (size_t t = 0; t < ptrs_.size(); ++t)
            if (bound[t].buffer) ptrs_[t] = host_data(bound[t]);
        return ptrs_;
    }
    uint64_t arena_bytes() const { return plan_.arena_bytes; }

private:
    MemoryPlan plan_;
    std::unique_ptr<HostBuffer> arena_;
    std::vector<uint8_t*> ptrs_;
};

}  // namespace hetero::sdk
