// What the profiler measures with (private to core/profile): one device's
// share of a profile run (the model's weights there, compiles, timed runs,
// cache eviction), a measurement's scratch buffers and executables, and the
// one-node and few-node graphs cut out of the model graph.
#pragma once

#include <hetero/error.hpp>
#include <hetero/profile/profile.hpp>
#include <hetero/runtime/model_graph.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace hetero::profiler_detail {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The median of a sample (0 when empty).
double median(std::vector<double> v);

inline constexpr uint64_t kEvictBytes = 64u << 20;  // per buffer; see DeviceWork::evict()

// A graph of one node (the profiler measures nodes one at a time).
struct NodeGraph {
    std::vector<hetero_tensor_desc> tensors;
    std::vector<int32_t> model_ids;  // local tensor id -> model graph tensor id
    hetero_node node{};

    hetero_graph view() const {
        hetero_graph g{};
        g.struct_size = sizeof(hetero_graph);
        g.abi_version = HETERO_ABI_VERSION;
        g.n_tensors = uint32_t(tensors.size());
        g.n_nodes = 1;
        g.tensors = tensors.data();
        g.nodes = &node;
        return g;
    }
};

// y = a + b (b broadcast over a's rows): the profiler's filler work.
inline NodeGraph add_graph(const hetero_tensor_desc& a, const hetero_tensor_desc& b) {
    NodeGraph g;
    g.tensors = {a, b, a};
    g.node.op = HETERO_OP_ADD;
    g.node.n_inputs = 2;
    g.node.inputs[0] = 0;
    g.node.inputs[1] = 1;
    g.node.output = 2;
    return g;
}

// What one profile run holds on a device; everything is released when it goes.
class DeviceWork {
public:
    explicit DeviceWork(const DeviceRef& d) : d_(d), p_(*d.provider), api_(p_.api()), ep_(p_.ep()) {}
    ~DeviceWork() {
        if (evict_exe_) api_.executable_release(ep_, evict_exe_);
        for (const hetero_binding& b : evict_bound_) api_.buffer_release(ep_, b.buffer);
        for (hetero_buffer* b : weight_buffers_) api_.buffer_release(ep_, b);
    }
    DeviceWork(const DeviceWork&) = delete;
    DeviceWork& operator=(const DeviceWork&) = delete;

    const DeviceRef& device() const { return d_; }
    Provider& provider() { return p_; }
    const hetero_ep_api& api() const { return api_; }
    hetero_ep* ep() const { return ep_; }

    // The model's own bytes: imported where the device shares host memory,
    // else copied once. Shared by every family of the run.
    hetero_buffer* weight(const WeightView& w) {
        if (auto it = weights_.find(w.name); it != weights_.end()) return it->second;
        hetero_buffer* b = nullptr;
        if (d_.props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY) {
            // Constants are never written, so read-only mapped pages are fine.
            if (api_.buffer_import_host(ep_, d_.index, const_cast<uint8_t*>(w.data), w.bytes, &b) != HETERO_OK) b = nullptr;
        }
        if (!b) {
            p_.check(api_.buffer_alloc(ep_, d_.index, w.bytes, &b), fmt::format("allocating {} ({} bytes)", w.name, w.bytes));
            weight_buffers_.push_back(b);
            p_.check(api_.buffer_write(ep_, b, 0, w.data, w.bytes), "uploading " + w.name);
        } else {
            weight_buffers_.push_back(b);
        }
        weights_[w.name] = b;
        return b;
    }

    // Compiles, recording how long it took (the first compile of the run is
    // kept apart: it pays the provider's kernel builds).
    hetero_executable* compile(const hetero_graph& g, const std::vector<hetero_binding>& constants, const std::string& what,
                               bool record = true) {
        if (std::string e = sdk::check_graph(g); !e.empty()) throw Error("profiler built a bad graph for " + what + ": " + e);
        hetero_executable* exe = nullptr;
        const auto t0 = Clock::now();
        p_.check(api_.compile(ep_, d_.index, &g, constants.data(), constants.size(), &exe), "compiling " + what);
        if (record) compile_times.push_back(since(t0));
        return exe;
    }

    // One execute and the wait for it: what a host that needs the result pays.
    double run(hetero_executable* exe, const std::vector<hetero_binding>& bound, const std::string& what) {
        const auto t0 = Clock::now();
        hetero_event* ev = nullptr;
        const hetero_status st = api_.execute(ep_, exe, bound.data(), bound.size(), &ev);
        hetero_status wst = HETERO_OK;
        if (ev) {
            wst = api_.event_wait(ep_, ev);
            api_.event_release(ep_, ev);
        }
        p_.check(st, "running " + what);
        p_.check(wst, "running " + what);
        return since(t0);
    }

    // One warm-up, then runs until they add up to `target` seconds or
    // max_runs (at least min_runs); the median. With `cold`, the device's
    // caches are evicted before each timed run (see evict()).
    double median_run(hetero_executable* exe, const std::vector<hetero_binding>& bound, const std::string& what, double target,
                      int min_runs, int max_runs, bool cold = false) {
        run(exe, bound, what);
        std::vector<double> t;
        double timed = 0;
        while (int(t.size()) < max_runs && (int(t.size()) < min_runs || timed < target)) {
            if (cold) evict();
            t.push_back(run(exe, bound, what));
            timed += t.back();
        }
        return median(t);
    }

    // Streams kEvictBytes through the device (an ADD, in and out) so that a
    // node's weights or KV cache are no longer in its caches. In a forward
    // pass those were last touched a layer or a whole model ago; re-running
    // one node on cache-hot weights times a memory-bound decode matmul
    // several times too fast (2-3x on a 32 MiB-L3 CPU).
    void evict() {
        if (!evict_exe_) make_evict();
        run(evict_exe_, evict_bound_, "the cache eviction");
    }

    std::vector<double> compile_times;

private:
    void make_evict() {
        constexpr int64_t kWidth = 4096;
        uint64_t bytes = kEvictBytes;
        if (d_.props.memory_bytes) bytes = std::min<uint64_t>(bytes, d_.props.memory_bytes / 8);
        const int64_t rows = std::max<int64_t>(1, int64_t(bytes / (kWidth * 4)));
        hetero_tensor_desc big{}, row{};
        big.dtype = row.dtype = HETERO_DTYPE_F32;
        big.kind = row.kind = HETERO_TENSOR_BOUND;
        big.ndim = 2;
        big.shape[0] = rows;
        big.shape[1] = kWidth;
        row.ndim = 1;
        row.shape[0] = kWidth;
        NodeGraph g = add_graph(big, row);
        const std::vector<uint8_t> zeros(uint64_t(rows) * kWidth * 4);  // zeros: no denormal slow paths
        for (int32_t t = 0; t < 3; ++t) {
            const uint64_t n = sdk::tensor_bytes(g.tensors[size_t(t)]);
            hetero_buffer* b = nullptr;
            p_.check(api_.buffer_alloc(ep_, d_.index, n, &b), fmt::format("allocating the cache eviction buffer ({} bytes)", n));
            evict_bound_.push_back({t, 0, b, 0});
            p_.check(api_.buffer_write(ep_, b, 0, zeros.data(), n), "writing the cache eviction buffer");
        }
        evict_exe_ = compile(g.view(), {}, "the cache eviction", false);
    }

    const DeviceRef& d_;
    Provider& p_;
    const hetero_ep_api& api_;
    hetero_ep* ep_;
    std::map<std::string, hetero_buffer*> weights_;
    std::vector<hetero_buffer*> weight_buffers_;
    hetero_executable* evict_exe_ = nullptr;
    std::vector<hetero_binding> evict_bound_;
};

// Buffers and executables of one measurement, released when it goes out of scope.
class Scratch {
public:
    explicit Scratch(DeviceWork& w) : w_(w) {}
    ~Scratch() {
        for (hetero_executable* e : exes_) w_.api().executable_release(w_.ep(), e);
        for (hetero_buffer* b : buffers_) w_.api().buffer_release(w_.ep(), b);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;

    hetero_buffer* alloc(uint64_t bytes, const std::string& what) {
        hetero_buffer* b = nullptr;
        w_.provider().check(w_.api().buffer_alloc(w_.ep(), w_.device().index, std::max<uint64_t>(bytes, 4), &b),
                            fmt::format("allocating {} ({} bytes)", what, bytes));
        buffers_.push_back(b);
        return b;
    }
    void write(hetero_buffer* b, const void* data, uint64_t bytes, const std::string& what) {
        w_.provider().check(w_.api().buffer_write(w_.ep(), b, 0, data, bytes), "writing " + what);
    }
    hetero_executable* compile(const hetero_graph& g, const std::vector<hetero_binding>& constants, const std::string& what) {
        hetero_executable* e = w_.compile(g, constants, what);
        exes_.push_back(e);
        return e;
    }
    void release(hetero_executable* e) {
        exes_.erase(std::find(exes_.begin(), exes_.end(), e));
        w_.api().executable_release(w_.ep(), e);
    }

private:
    DeviceWork& w_;
    std::vector<hetero_buffer*> buffers_;
    std::vector<hetero_executable*> exes_;
};

// Small random floats, tiled from one block (filling a 100 MB activation
// element by element from a generator would cost more than measuring it).
inline void fill_random(std::vector<uint8_t>& bytes, uint32_t dtype, int64_t row_width) {
    static const std::vector<float> block = [] {
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> u(-0.5f, 0.5f);
        std::vector<float> b(size_t(1) << 14);
        for (float& f : b) f = u(rng);
        return b;
    }();
    const uint64_t rb = sdk::row_bytes(dtype, row_width);
    if (rb == 0) return;
    std::vector<float> row(static_cast<size_t>(row_width));
    for (uint64_t off = 0, r = 0; off + rb <= bytes.size(); off += rb, ++r) {
        for (size_t i = 0; i < row.size(); ++i) row[i] = block[(size_t(r) * 7919 + i) % block.size()];
        sdk::row_from_f32(dtype, row.data(), bytes.data() + off, row_width);
    }
}

inline bool is_cache(TensorUse u) { return u == TensorUse::k_cache || u == TensorUse::v_cache; }

// One node of the model graph as a graph of its own with `rows` rows:
// weights CONSTANT, everything else BOUND; caches keep their n_ctx rows.
inline NodeGraph node_graph(const ModelGraph& mg, size_t i, int64_t rows) {
    NodeGraph ng;
    ng.node = mg.nodes[i].node;
    auto local = [&](int32_t id) {
        for (size_t j = 0; j < ng.model_ids.size(); ++j)
            if (ng.model_ids[j] == id) return int32_t(j);
        const ModelTensor& t = mg.tensors[size_t(id)];
        hetero_tensor_desc d = t.desc;
        if (t.use == TensorUse::weight) {
            d.kind = HETERO_TENSOR_CONSTANT;
        } else {
            d.kind = HETERO_TENSOR_BOUND;
            if (!is_cache(t.use)) d.shape[0] = rows;
        }
        ng.tensors.push_back(d);
        ng.model_ids.push_back(id);
        return int32_t(ng.tensors.size() - 1);
    };
    for (uint32_t k = 0; k < ng.node.n_inputs; ++k) ng.node.inputs[k] = local(ng.node.inputs[k]);
    ng.node.output = local(ng.node.output);
    return ng;
}

// Nodes `nodes` of the model graph as one executable at `rows` tokens:
// tensors made and used only inside are the provider's scratch.
struct SubGraph {
    std::vector<hetero_tensor_desc> tensors;
    std::vector<int32_t> model_ids;
    std::vector<hetero_node> nodes;

    hetero_graph view() const {
        hetero_graph g{};
        g.struct_size = sizeof(hetero_graph);
        g.abi_version = HETERO_ABI_VERSION;
        g.n_tensors = uint32_t(tensors.size());
        g.n_nodes = uint32_t(nodes.size());
        g.tensors = tensors.data();
        g.nodes = nodes.data();
        return g;
    }
};

inline SubGraph sub_graph(const ModelGraph& mg, const std::vector<size_t>& nodes, int64_t rows) {
    std::map<int32_t, int> made, read_outside;  // model tensor id -> producer node / readers outside `nodes`
    std::set<size_t> inside(nodes.begin(), nodes.end());
    for (size_t i : nodes) made[mg.nodes[i].node.output] = int(i);
    for (size_t i = 0; i < mg.nodes.size(); ++i)
        if (!inside.count(i))
            for (uint32_t k = 0; k < mg.nodes[i].node.n_inputs; ++k) read_outside[mg.nodes[i].node.inputs[k]] += 1;
    SubGraph sg;
    std::map<int32_t, int32_t> local;
    auto map = [&](int32_t id) {
        if (auto it = local.find(id); it != local.end()) return it->second;
        const ModelTensor& t = mg.tensors[size_t(id)];
        hetero_tensor_desc d = t.desc;
        if (t.use == TensorUse::weight) {
            d.kind = HETERO_TENSOR_CONSTANT;
        } else {
            const bool scratch = made.count(id) && !read_outside.count(id) && !is_cache(t.use);
            d.kind = scratch ? HETERO_TENSOR_INTERNAL : HETERO_TENSOR_BOUND;
            if (!is_cache(t.use)) d.shape[0] = rows;
        }
        sg.tensors.push_back(d);
        sg.model_ids.push_back(id);
        return local[id] = int32_t(sg.tensors.size() - 1);
    };
    for (size_t i : nodes) {
        hetero_node n = mg.nodes[i].node;
        for (uint32_t k = 0; k < n.n_inputs; ++k) n.inputs[k] = map(n.inputs[k]);
        n.output = map(n.output);
        sg.nodes.push_back(n);
    }
    return sg;
}

}  // namespace hetero::profiler_detail
