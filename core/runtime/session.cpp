#include <hetero/progress.hpp>
#include <hetero/runtime/cost_model.hpp>
#include <hetero/runtime/graph_builder.hpp>
#include <hetero/runtime/model_graph.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/runtime/trace.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace hetero {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Host memory for tensors that cross devices, page-aligned so devices that
// share the host's memory can import it without a copy.
struct HostBlock {
    uint8_t* data = nullptr;
    uint64_t bytes = 0;
    explicit HostBlock(uint64_t n) : bytes(n) {
        data = static_cast<uint8_t*>(std::aligned_alloc(4096, (n + 4095) / 4096 * 4096));
        if (!data) throw Error(fmt::format("out of host memory ({} bytes for a hand-over buffer)", n));
    }
    ~HostBlock() { std::free(data); }
    HostBlock(const HostBlock&) = delete;
    HostBlock& operator=(const HostBlock&) = delete;
};

// Thrown inside a worker when another worker failed: unwinds quietly.
struct Aborted {};

}  // namespace

int32_t context_length(const LlamaHParams& hp, int32_t requested) {
    return requested > 0 ? requested : int32_t(std::clamp<int64_t>(hp.n_ctx_train, 512, 4096));
}

// One device of the plan: its buffers, uploaded weights, KV caches and worker thread.
struct Session::Device {
    size_t index = 0;
    DeviceRef ref;
    Provider* p = nullptr;
    const hetero_ep_api* api = nullptr;
    uint32_t dev = 0;
    std::vector<hetero_buffer*> buffers;            // released in the destructor
    std::map<std::string, hetero_buffer*> weights;  // "name rows a-b" -> uploaded or imported rows
    SegmentStats stats;

    // Worker: runs `job` once per `go` increment.
    std::thread thread;
    std::mutex mu;
    std::condition_variable cv;
    uint64_t go = 0;
    bool quit = false;
    std::function<void()> job;

    ~Device() {
        if (thread.joinable()) {
            {
                std::lock_guard<std::mutex> lock(mu);
                quit = true;
            }
            cv.notify_all();
            thread.join();
        }
        for (hetero_buffer* b : buffers) api->buffer_release(p->ep(), b);
    }

    bool unified() const { return ref.props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY; }

    // Provider::check, with a failure reported as this device's fault.
    void check(hetero_status s, const std::string& what) const {
        if (s == HETERO_OK) return;
        try {
            p->check(s, what);
        } catch (const ProviderError& e) {
            throw DeviceFault(index, stats.label, e);
        }
    }

    hetero_buffer* alloc(uint64_t bytes, const std::string& what) {
        hetero_buffer* b = nullptr;
        check(api->buffer_alloc(p->ep(), dev, bytes, &b), fmt::format("allocating {} ({} bytes)", what, bytes));
        buffers.push_back(b);
        stats.allocated_bytes += bytes;
        return b;
    }

    // Host memory imported without a copy where the device shares it; nullptr otherwise.
    hetero_buffer* import(void* ptr, uint64_t bytes) {
        if (!unified()) return nullptr;
        hetero_buffer* b = nullptr;
        if (api->buffer_import_host(p->ep(), dev, ptr, bytes, &b) != HETERO_OK) return nullptr;
        buffers.push_back(b);
        return b;
    }

    // Rows [r0, r1) of a weight (all rows of a vector): mapped from the file
    // where the device shares host memory, else copied to the device once.
    hetero_buffer* weight(const WeightView& w, int64_t r0, int64_t r1) {
        const std::string key = fmt::format("{} rows {}-{}", w.name, r0, r1);
        auto it = weights.find(key);
        if (it != weights.end()) return it->second;
        const uint64_t row_bytes = w.bytes / uint64_t(w.shape[0]);
        const uint64_t offset = uint64_t(r0) * row_bytes, bytes = uint64_t(r1 - r0) * row_bytes;
        // Constants are never written, so read-only mapped pages are fine.
        hetero_buffer* b = import(const_cast<uint8_t*>(w.data + offset), bytes);
        if (!b) {
            b = alloc(bytes, w.name);
            check(api->buffer_write(p->ep(), b, 0, w.data + offset, bytes), "uploading " + w.name);
        }
        weights[key] = b;
        return b;
    }

    void start_worker() {
        thread = std::thread([this] {
            uint64_t seen = 0;
            for (;;) {
                std::function<void()> j;
                {
                    std::unique_lock<std::mutex> lock(mu);
                    cv.wait(lock, [&] { return quit || go != seen; });
                    if (quit) return;
                    seen = go;
                    j = job;
                }
                j();
            }
        });
    }
};

// A tensor handed from one task to others: host memory, plus its binding on
// every device that touches it.
struct Exchange {
    std::string name;
    uint64_t bytes = 0;
    std::unique_ptr<HostBlock> host;
    long producer = -1;  // device index; -1 = the host (inputs, merged splits)
    struct OnDevice {
        hetero_buffer* buffer = nullptr;
        uint64_t offset = 0;
        bool imported = false;     // the buffer is `host` itself
        uint64_t delivered = 0;    // forward generation it was last written in
    };
    std::map<size_t, OnDevice> on_device;
    bool needs_host = false;  // read on another device or by the host
    // For last_hidden: bound on the producer at an offset of this exchange.
    int alias_of = -1;
    uint64_t alias_offset = 0;
    std::atomic<uint64_t> ready{0};  // forward generation in which `host` became valid
    // Seconds after the forward starts, smoothed (fast sync). Written by the
    // producer as it publishes, read by waiters that may not have seen
    // `ready` yet: atomic (relaxed: it is only a hint for the sleep).
    std::atomic<double> expected_ready{0};
};

struct Task {
    enum Kind { execute, merge } kind = execute;
    size_t device = 0;
    std::string name;
    std::vector<size_t> nodes;  // model graph nodes it runs (execute)
    hetero_executable* exe = nullptr;
    std::vector<hetero_binding> bindings;
    std::vector<int> inputs, outputs;  // exchanges
    // merge: parts (exchange, rows [r0, r1)) into `merged` of width `width`
    std::vector<std::pair<int, Share>> parts;
    int merged = -1;
    int64_t width = 0;
    // execute of one share of a split: which share, and the merge task that collects it
    int share = -1;
    int64_t share_rows = 0;
    size_t merge_task = 0;
};

struct Session::Program {
    int32_t n = 0;
    int phase = kPrefill;
    ModelGraph graph;
    std::vector<std::unique_ptr<Exchange>> exchanges;
    std::vector<Task> tasks;
    std::map<size_t, std::vector<size_t>> per_device;  // device -> its tasks, in order
    int tokens = -1, positions = -1, logits = -1;
    // One forward's shared state.
    uint64_t generation = 0;
    Clock::time_point started;
    std::atomic<bool> failed{false};
    std::mutex mu;
    std::condition_variable cv;  // ready flags (block mode) and worker completion
    int running = 0;
    std::exception_ptr error;  // the first worker's failure
};

Session::Session(const ModelFile& model, const Plan& plan, const SessionOptions& options)
    : model_(model), plan_(plan), options_(options) {
    const LlamaHParams& hp = model.hparams;
    n_ctx_ = context_length(hp, options.n_ctx);
    if (options_.max_batch < 1) throw Error("max_batch must be at least 1");
    options_.max_batch = std::min(options_.max_batch, n_ctx_);
    // A static-shape device builds one graph per chunk size: prompts are cut
    // into the chunks it is built for, so every full chunk shares its graphs.
    for (size_t d : plan_.used_devices())
        if (d < plan_.devices.size()) {
            const hetero_device_props& p = plan_.devices[d].props;
            if ((p.flags & HETERO_DEVICE_FLAG_STATIC_SHAPES) && HETERO_HAS_FIELD(hetero_device_props, &p, chunk_tokens) && p.chunk_tokens > 0)
                options_.max_batch = std::min(options_.max_batch, int32_t(p.chunk_tokens));
        }
    if (plan_.layers.size() != size_t(hp.n_layer + 1))
        throw Error(fmt::format("the plan has {} layer entries, the model needs {}", plan_.layers.size(), hp.n_layer + 1));
    devices_.resize(plan_.devices.size());
    const std::vector<size_t> used = plan_.used_devices();
    for (size_t d : used) {
        if (d >= plan_.devices.size()) throw Error("the plan names a device it does not list");
        auto dv = std::make_unique<Device>();
        dv->index = d;
        dv->ref = plan_.devices[d];
        dv->p = dv->ref.provider;
        dv->api = &dv->p->api();
        dv->dev = dv->ref.index;
        dv->stats.label = dv->ref.label();
        if (used.size() > 1) dv->start_worker();
        devices_[d] = std::move(dv);
    }
    const uint64_t kv_dim = uint64_t(hp.n_head_kv * hp.head_dim);
    for (int l = 0; l < int(hp.n_layer); ++l) {
        Device& dv = *devices_[plan_.layers[size_t(l)].home];
        const uint64_t bytes = uint64_t(n_ctx_) * kv_dim * (cache_dtype(options_.cache_type, dv.ref.props) == HETERO_DTYPE_F16 ? 2 : 4);
        kv_caches_.push_back({dv.alloc(bytes, fmt::format("layer {} K cache", l)), dv.alloc(bytes, fmt::format("layer {} V cache", l))});
    }
    logits_.resize(size_t(hp.n_vocab));
}

Session::~Session() {
    for (auto& [n, prog] : programs_)
        for (Task& t : prog->tasks)
            if (t.exe) devices_[t.device]->api->executable_release(devices_[t.device]->p->ep(), t.exe);
    // Buffers (some wrap the programs' host memory) go before that memory does.
    devices_.clear();
}

std::vector<SegmentStats> Session::stats() const {
    std::vector<SegmentStats> out;
    for (const auto& d : devices_)
        if (d) out.push_back(d->stats);
    return out;
}

// Cuts the model graph into tasks and compiles them.
Session::Program& Session::program(int32_t n) {
    auto found = programs_.find(n);
    if (found != programs_.end()) return *found->second;
    const LlamaHParams& hp = model_.hparams;
    auto prog = std::make_unique<Program>();
    Program& P = *prog;
    P.n = n;
    P.phase = n > 1 ? kPrefill : kDecode;
    std::vector<uint32_t> cache(size_t(hp.n_layer));
    for (int l = 0; l < int(hp.n_layer); ++l) cache[size_t(l)] = cache_dtype(options_.cache_type, plan_.devices[plan_.layers[size_t(l)].home].props);
    P.graph = build_model_graph(model_, n, n_ctx_, cache, true, options_.all_logits);
    const ModelGraph& g = P.graph;

    // 1. Tasks: runs of consecutive nodes on one device; a split matmul is one
    //    task per share plus a merge on its layer's home; the head starts a task.
    std::vector<long> producer_task(g.tensors.size(), -1);
    std::vector<std::vector<size_t>> reader_tasks(g.tensors.size());
    std::vector<std::vector<Share>> node_shares(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const ModelNode& mn = g.nodes[i];
        const size_t home = plan_.layers[size_t(mn.layer)].home;
        if (mn.node.op == HETERO_OP_MATMUL && is_matmul_role(mn.role)) {
            const int64_t rows = g.tensors[size_t(mn.node.inputs[1])].desc.shape[0];
            node_shares[i] = plan_.shares(mn.layer, mn.role, P.phase, rows);
        } else {
            node_shares[i] = {Share{home, 0, 0}};
        }
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const ModelNode& mn = g.nodes[i];
        const std::vector<Share>& sh = node_shares[i];
        const bool split = sh.size() > 1;
        Task* last = P.tasks.empty() ? nullptr : &P.tasks.back();
        const bool head_starts = mn.layer == g.n_layer && (i == 0 || g.nodes[i - 1].layer != g.n_layer);
        const bool last_was_split = last && (last->kind == Task::merge || node_shares[last->nodes.back()].size() > 1);
        if (!split && last && last->kind == Task::execute && last->device == sh[0].device && !head_starts && !last_was_split) {
            last->nodes.push_back(i);
            continue;
        }
        if (!split) {
            Task t;
            t.device = sh[0].device;
            t.nodes = {i};
            P.tasks.push_back(std::move(t));
            continue;
        }
        for (size_t s = 0; s < sh.size(); ++s) {
            Task t;
            t.device = sh[s].device;
            t.nodes = {i};
            t.share = int(s);
            t.merge_task = P.tasks.size() + sh.size() - s;
            P.tasks.push_back(std::move(t));
        }
        Task m;
        m.kind = Task::merge;
        m.device = plan_.layers[size_t(mn.layer)].home;
        m.nodes = {i};
        P.tasks.push_back(std::move(m));
    }
    // Who produces and who reads every tensor (merge tasks produce split outputs).
    for (size_t ti = 0; ti < P.tasks.size(); ++ti) {
        const Task& t = P.tasks[ti];
        for (size_t i : t.nodes) {
            const hetero_node& nd = g.nodes[i].node;
            if (t.kind == Task::merge) {
                producer_task[size_t(nd.output)] = long(ti);
                continue;
            }
            for (uint32_t k = 0; k < nd.n_inputs; ++k) reader_tasks[size_t(nd.inputs[k])].push_back(ti);
            if (node_shares[i].size() == 1) producer_task[size_t(nd.output)] = long(ti);
        }
    }
    producer_task[size_t(g.last_hidden)] = producer_task[size_t(g.final_hidden)];

    // 2. Exchanges: tensors read outside the task that writes them, plus the
    //    inputs and the logits.
    std::vector<int> exchange_of(g.tensors.size(), -1);
    auto new_exchange = [&](const std::string& name, uint64_t bytes, long producer) {
        auto e = std::make_unique<Exchange>();
        e->name = name;
        e->bytes = bytes;
        e->host = std::make_unique<HostBlock>(bytes);
        e->producer = producer;
        P.exchanges.push_back(std::move(e));
        return int(P.exchanges.size() - 1);
    };
    auto task_device = [&](long ti) { return ti < 0 ? -1L : long(P.tasks[size_t(ti)].device); };
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        const ModelTensor& mt = g.tensors[t];
        if (mt.use == TensorUse::weight || mt.use == TensorUse::k_cache || mt.use == TensorUse::v_cache) continue;
        const long prod = producer_task[t];
        bool crosses = mt.use != TensorUse::activation;
        for (size_t r : reader_tasks[t]) crosses = crosses || long(r) != prod;
        if (t == size_t(g.final_hidden)) crosses = true;  // the head reads its last row
        if (!crosses) continue;
        exchange_of[t] = new_exchange(g.name(int32_t(t)), sdk::tensor_bytes(mt.desc), task_device(prod));
        Exchange& e = *P.exchanges.back();
        e.needs_host = mt.use == TensorUse::logits;
        if (prod >= 0 && P.tasks[size_t(prod)].kind == Task::merge) e.producer = -1;  // merged on the host
        for (size_t r : reader_tasks[t])
            if (long(P.tasks[r].device) != e.producer) e.needs_host = true;
    }
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        if (g.tensors[t].use == TensorUse::tokens) P.tokens = exchange_of[t];
        if (g.tensors[t].use == TensorUse::positions) P.positions = exchange_of[t];
        if (g.tensors[t].use == TensorUse::logits) P.logits = exchange_of[t];
    }
    {
        Exchange& lh = *P.exchanges[size_t(exchange_of[size_t(g.last_hidden)])];
        lh.alias_of = exchange_of[size_t(g.final_hidden)];
        lh.alias_offset = uint64_t(n - g.head_rows) * uint64_t(hp.n_embd) * 4;
    }
    // A device's binding of an exchange: imported host memory, or its own buffer.
    auto bind_on = [&](int x, size_t d) -> Exchange::OnDevice& {
        Exchange& e = *P.exchanges[size_t(x)];
        auto it = e.on_device.find(d);
        if (it != e.on_device.end()) return it->second;
        Exchange::OnDevice od;
        if (e.alias_of >= 0 && long(d) == e.producer) {
            Exchange::OnDevice& base = P.exchanges[size_t(e.alias_of)]->on_device.at(d);
            od.buffer = base.buffer;
            od.offset = base.offset + e.alias_offset;
            od.imported = base.imported;
        } else {
            Device& dv = *devices_[d];
            od.buffer = dv.import(e.host->data, e.bytes);
            od.imported = od.buffer != nullptr;
            if (!od.buffer) od.buffer = dv.alloc(e.bytes, e.name);
        }
        return e.on_device.emplace(d, od).first->second;
    };

    // 3. One graph per execute task, compiled on its device. When one fails,
    //    those compiled so far are released.
    struct ReleaseOnFailure {
        Session& s;
        Program& P;
        bool done = false;
        ~ReleaseOnFailure() {
            if (done) return;
            for (Task& t : P.tasks)
                if (t.exe) s.devices_[t.device]->api->executable_release(s.devices_[t.device]->p->ep(), t.exe);
        }
    } release_on_failure{*this, P};
    // The first program uploads the weights and compiles kernels: seconds to
    // minutes on a discrete GPU or a cold kernel cache.
    ProgressTask progress(fmt::format("preparing the {}-token program (weights, kernels)", n), P.tasks.size(), "tasks");
    for (size_t ti = 0; ti < P.tasks.size(); ++ti) {
        struct CountWhenDone {
            ProgressTask& progress;
            ~CountWhenDone() { progress.advance(1); }
        } count_when_done{progress};
        Task& t = P.tasks[ti];
        const ModelNode& first = g.nodes[t.nodes.front()];
        if (t.kind == Task::merge) {
            const size_t i = t.nodes.front();
            const hetero_node& nd = g.nodes[i].node;
            t.merged = exchange_of[size_t(nd.output)];
            t.width = g.tensors[size_t(nd.inputs[1])].desc.shape[0];
            t.name = fmt::format("merge {}", g.name(nd.output));
            P.exchanges[size_t(t.merged)]->producer = -1;
            continue;
        }
        Device& dv = *devices_[t.device];
        GraphBuilder gb;
        std::map<int32_t, int32_t> local;
        std::vector<hetero_binding> constants;
        const bool split = t.share >= 0;
        const Share share = split ? node_shares[t.nodes[0]][size_t(t.share)] : Share{};
        t.share_rows = share.row_end - share.row_begin;
        auto map_tensor = [&](int32_t id, bool is_output) -> int32_t {
            auto it = local.find(id);
            if (it != local.end()) return it->second;
            const ModelTensor& mt = g.tensors[size_t(id)];
            std::vector<int64_t> shape(mt.desc.shape, mt.desc.shape + mt.desc.ndim);
            int32_t lid = -1;
            if (mt.use == TensorUse::weight) {
                const WeightView& w = model_.weight(mt.desc.name);
                int64_t r0 = 0, r1 = w.shape[0];
                if (split) {
                    r0 = share.row_begin;
                    r1 = share.row_end;
                    shape[0] = r1 - r0;
                }
                lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_CONSTANT, mt.desc.name);
                constants.push_back({lid, 0, dv.weight(w, r0, r1), 0});
            } else if (mt.use == TensorUse::k_cache || mt.use == TensorUse::v_cache) {
                lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_BOUND, mt.desc.name);
                if (plan_.layers[size_t(mt.layer)].home != t.device)
                    throw Error(fmt::format("internal: layer {} attention is not on its KV cache's device", mt.layer));
                auto& kv = kv_caches_[size_t(mt.layer)];
                t.bindings.push_back({lid, 0, mt.use == TensorUse::k_cache ? kv.first : kv.second, 0});
            } else if (split && is_output) {
                shape = {shape[0], share.row_end - share.row_begin};
                lid = gb.tensor(HETERO_DTYPE_F32, shape, HETERO_TENSOR_BOUND, fmt::format("{} rows {}-{}", mt.desc.name, share.row_begin, share.row_end));
                const int x = new_exchange(fmt::format("{} rows {}-{}", mt.desc.name, share.row_begin, share.row_end),
                                           uint64_t(shape[0] * shape[1]) * 4, long(t.device));
                P.exchanges[size_t(x)]->needs_host = true;
                t.outputs.push_back(x);
                const Exchange::OnDevice& od = bind_on(x, t.device);
                t.bindings.push_back({lid, 0, od.buffer, od.offset});
                P.tasks[t.merge_task].parts.push_back({x, share});
                return lid;  // not memoised: the split output is not the model tensor
            } else if (exchange_of[size_t(id)] >= 0) {
                const int x = exchange_of[size_t(id)];
                lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_BOUND, mt.desc.name);
                const Exchange::OnDevice& od = bind_on(x, t.device);
                t.bindings.push_back({lid, 0, od.buffer, od.offset});
                (is_output ? t.outputs : t.inputs).push_back(x);
            } else {
                lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_INTERNAL, mt.desc.name);
            }
            local[id] = lid;
            return lid;
        };
        for (size_t i : t.nodes) {
            const hetero_node& nd = g.nodes[i].node;
            hetero_node ln = nd;
            for (uint32_t k = 0; k < nd.n_inputs; ++k) ln.inputs[k] = map_tensor(nd.inputs[k], false);
            ln.output = map_tensor(nd.output, true);
            gb.node(ln);
        }
        if (t.outputs.empty() && t.nodes.back() + 1 == g.nodes.size()) throw Error("internal: the head writes no logits");
        // last_hidden is produced by whoever produces final_hidden.
        if (std::find(t.outputs.begin(), t.outputs.end(), exchange_of[size_t(g.final_hidden)]) != t.outputs.end()) {
            const int lh = exchange_of[size_t(g.last_hidden)];
            bind_on(lh, t.device);  // an alias into final_hidden's binding on this device
            t.outputs.push_back(lh);
        }
        const hetero_graph view = gb.view();
        if (std::string e = sdk::check_graph(view); !e.empty()) throw Error("internal graph error: " + e);
        const int first_layer = first.layer, last_layer = g.nodes[t.nodes.back()].layer;
        t.name = split ? fmt::format("layer {} {} rows {}-{}", first_layer, role_name(first.role), share.row_begin, share.row_end - 1)
                 : first_layer == g.n_layer ? std::string("output head")
                 : first_layer == last_layer ? fmt::format("layer {} {}-{}", first_layer, role_name(first.role), role_name(g.nodes[t.nodes.back()].role))
                                             : fmt::format("layers {}-{}", first_layer, last_layer);
        dv.check(dv.api->compile(dv.p->ep(), dv.dev, &view, constants.data(), constants.size(), &t.exe),
                 fmt::format("compiling {} for {} tokens on {}", t.name, n, dv.ref.label()));
    }
    for (size_t ti = 0; ti < P.tasks.size(); ++ti) P.per_device[P.tasks[ti].device].push_back(ti);
    Program& built = *programs_.emplace(n, std::move(prog)).first->second;
    release_on_failure.done = true;
    return built;
}

namespace {

// A device's binding of an exchange; every one is made when the program is built.
Exchange::OnDevice& binding_on(Exchange& e, size_t device) {
    auto it = e.on_device.find(device);
    if (it == e.on_device.end()) throw Error(fmt::format("internal: {} has no binding on device {}", e.name, device));
    return it->second;
}

// Marks an exchange readable from the host for this forward.
void set_ready(Exchange& e, uint64_t generation, double since_start, std::mutex& mu, std::condition_variable& cv, bool notify) {
    const double before = e.expected_ready.load(std::memory_order_relaxed);
    e.expected_ready.store(before == 0 ? since_start : 0.8 * before + 0.2 * since_start, std::memory_order_relaxed);
    e.ready.store(generation, std::memory_order_release);
    if (notify) {
        std::lock_guard<std::mutex> lock(mu);
        cv.notify_all();
    }
}

}  // namespace

// Runs one device's tasks of a forward, in order.
void Session::run_tasks(Program& P, size_t device, int32_t pos) {
    Device& dv = *devices_[device];
    const hetero_ep_api& api = *dv.api;
    hetero_ep* ep = dv.p->ep();
    const bool notify = options_.sync == SyncMode::block;
    TraceRecorder* trace = options_.trace;
    std::vector<hetero_event*> pending;
    const auto event_seconds = dv.p->event_seconds();
    double last_device_seconds = -1;  // of the event finished last; < 0 = not reported
    auto finish = [&](hetero_event* ev, const std::string& what) {
        const hetero_status st = api.event_wait(ep, ev);
        double s = 0;
        uint32_t flags = 0;
        last_device_seconds = -1;
        if (st == HETERO_OK && event_seconds && event_seconds(ep, ev, &s, &flags) == HETERO_OK) {
            dv.stats.device_seconds = std::max(0.0, dv.stats.device_seconds) + s;
            dv.stats.simulated = (flags & HETERO_TIME_SIMULATED) != 0;
            last_device_seconds = s;
        }
        api.event_release(ep, ev);
        dv.check(st, what);
    };
    auto finish_pending = [&] {
        // Every event is waited for, even after a failure; the first error wins.
        std::exception_ptr first;
        for (hetero_event* ev : pending) {
            try {
                finish(ev, "running " + dv.ref.label());
            } catch (...) {
                if (!first) first = std::current_exception();
            }
        }
        pending.clear();
        if (first) std::rethrow_exception(first);
    };
    // Waits until `e` is readable from the host: sleep for the predicted rest,
    // then poll (HeteroLLM's fast synchronisation), or block on the cv.
    auto wait_ready = [&](Exchange& e) {
        if (e.ready.load(std::memory_order_acquire) == P.generation) return;
        const auto t0 = Clock::now();
        if (options_.sync == SyncMode::block) {
            std::unique_lock<std::mutex> lock(P.mu);
            P.cv.wait(lock, [&] { return e.ready.load(std::memory_order_acquire) == P.generation || P.failed.load(); });
        } else {
            const double rest = e.expected_ready.load(std::memory_order_relaxed) - seconds_since(P.started);
            if (rest > 200e-6) std::this_thread::sleep_for(std::chrono::duration<double>(rest - 100e-6));
            while (e.ready.load(std::memory_order_acquire) != P.generation && !P.failed.load()) std::this_thread::yield();
        }
        if (P.failed.load()) throw Aborted{};
        if (trace) trace->add({dv.ref.label(), "wait " + e.name, "wait", t0, seconds_since(t0), -1});
    };
    const auto t_start = Clock::now();
    try {
        for (size_t ti : P.per_device.at(device)) {
            Task& t = P.tasks[ti];
            if (t.kind == Task::merge) {
                Exchange& out = *P.exchanges[size_t(t.merged)];
                for (auto& [x, share] : t.parts) wait_ready(*P.exchanges[size_t(x)]);
                const auto t0 = Clock::now();
                const int64_t rows = int64_t(out.bytes / 4) / t.width;
                for (auto& [x, share] : t.parts) {
                    const int64_t w = share.row_end - share.row_begin;
                    const float* src = reinterpret_cast<const float*>(P.exchanges[size_t(x)]->host->data);
                    float* dst = reinterpret_cast<float*>(out.host->data);
                    for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * t.width + share.row_begin, src + r * w, size_t(w) * 4);
                }
                if (trace) trace->add({dv.ref.label(), t.name, "merge", t0, seconds_since(t0), -1});
                set_ready(out, P.generation, seconds_since(P.started), P.mu, P.cv, notify);
                continue;
            }
            // Inputs from other devices (or the host): wait, then copy in unless imported.
            for (int x : t.inputs) {
                Exchange& e = *P.exchanges[size_t(x)];
                if (e.producer == long(device)) continue;
                wait_ready(e);
                Exchange::OnDevice& od = binding_on(e, device);
                if (od.imported || od.delivered == P.generation) continue;
                const auto t0 = Clock::now();
                dv.check(api.buffer_write(ep, od.buffer, od.offset, e.host->data, e.bytes), "writing " + e.name);
                od.delivered = P.generation;
                if (trace) trace->add({dv.ref.label(), "write " + e.name, "transfer", t0, seconds_since(t0), -1});
            }
            const auto t0 = Clock::now();
            hetero_event* ev = nullptr;
            dv.check(api.execute(ep, t.exe, t.bindings.data(), t.bindings.size(), &ev), "running " + t.name);
            dv.stats.runs += 1;
            if (trace) {
                // Each task is waited for, so its slice is its device time.
                last_device_seconds = -1;
                if (ev) finish(ev, "running " + t.name);
                ev = nullptr;
                const double measured = seconds_since(t0);  // before the prediction below costs host time
                double predicted = -1;
                if (options_.cost) {
                    predicted = options_.cost->execute_seconds(device, P.n);
                    for (size_t i : t.nodes) {
                        OpShape s = op_shape(P.graph, i, int64_t(pos) + (P.n + 1) / 2);
                        if (t.share >= 0) s.m = t.share_rows;
                        const double v = options_.cost->node_seconds(device, s);
                        predicted += v > 0 ? v : 0;
                    }
                }
                TraceRecorder::Slice slice{dv.ref.label(), t.name, "execute", t0, measured, predicted};
                if (dv.stats.simulated && last_device_seconds >= 0) {
                    // A simulated device: its modelled time is the slice; the emulation's wall time is kept beside it.
                    slice.host_seconds = slice.seconds;
                    slice.seconds = last_device_seconds;
                    slice.simulated = true;
                }
                trace->add(slice);
            } else if (ev) {
                pending.push_back(ev);
            }
            // Outputs others read: make them readable from the host.
            for (int x : t.outputs) {
                Exchange& e = *P.exchanges[size_t(x)];
                if (!e.needs_host) continue;
                const Exchange::OnDevice& od = binding_on(e, device);
                const auto tr = Clock::now();
                if (od.imported) {
                    finish_pending();  // the device wrote the host's memory itself
                    if (e.alias_of >= 0)  // ...of the tensor this one is a slice of
                        std::memcpy(e.host->data, P.exchanges[size_t(e.alias_of)]->host->data + e.alias_offset, e.bytes);
                } else {
                    // Work on one device runs in submission order: the read sees the results.
                    dv.check(api.buffer_read(ep, od.buffer, od.offset, e.host->data, e.bytes), "reading " + e.name);
                    finish_pending();  // a kernel's error outranks the data read
                    if (trace) trace->add({dv.ref.label(), "read " + e.name, "transfer", tr, seconds_since(tr), -1});
                }
                set_ready(e, P.generation, seconds_since(P.started), P.mu, P.cv, notify);
            }
        }
        finish_pending();
    } catch (...) {
        try {
            finish_pending();
        } catch (...) {
        }
        dv.stats.seconds += seconds_since(t_start);
        throw;
    }
    dv.stats.seconds += seconds_since(t_start);
}

void Session::evaluate_chunk(const int32_t* tokens, int32_t n, int32_t pos) {
    Program& P = program(n);
    P.generation = ++generation_;
    P.started = Clock::now();
    P.failed = false;
    P.error = nullptr;
    const auto fill = [&](int x, auto value) {
        if (x < 0) return;
        Exchange& e = *P.exchanges[size_t(x)];
        int32_t* v = reinterpret_cast<int32_t*>(e.host->data);
        for (int32_t i = 0; i < n; ++i) v[i] = value(i);
        e.ready.store(P.generation, std::memory_order_release);
    };
    fill(P.tokens, [&](int32_t i) { return tokens[i]; });
    fill(P.positions, [&](int32_t i) { return pos + i; });
    if (P.per_device.size() == 1) {
        run_tasks(P, P.per_device.begin()->first, pos);
    } else {
        P.running = int(P.per_device.size());
        for (auto& [d, list] : P.per_device) {
            Device& dv = *devices_[d];
            const size_t dev = d;
            {
                std::lock_guard<std::mutex> lock(dv.mu);
                dv.job = [this, &P, dev, pos] {
                    std::exception_ptr err;
                    try {
                        run_tasks(P, dev, pos);
                    } catch (const Aborted&) {
                    } catch (...) {
                        err = std::current_exception();
                    }
                    std::lock_guard<std::mutex> lock(P.mu);
                    if (err && !P.error) {
                        P.error = err;
                        P.failed = true;
                    }
                    P.running -= 1;
                    P.cv.notify_all();
                };
                dv.go += 1;
            }
            dv.cv.notify_all();
        }
        std::unique_lock<std::mutex> lock(P.mu);
        P.cv.wait(lock, [&] { return P.running == 0; });
        if (P.error) std::rethrow_exception(P.error);
    }
    const size_t row = size_t(model_.hparams.n_vocab);
    const size_t rows = size_t(P.graph.head_rows);
    float* out = logits_.data() + logits_.size() - rows * row;
    std::memcpy(out, P.exchanges[size_t(P.logits)]->host->data, rows * row * 4);
    // NaN or Inf here would be sampled as some token and give fluent-looking garbage.
    for (size_t i = 0; i < rows * row; ++i)
        if (!std::isfinite(out[i]))
            throw Error(fmt::format("non-finite logits ({}) at position {}: a weight matrix of {} holds NaN/Inf, or its activations "
                                    "overflow on these devices",
                                    out[i], pos + int32_t(n - int32_t(rows) + int32_t(i / row)), model_.path));
}

const std::vector<float>& Session::forward(const std::vector<int32_t>& tokens, int32_t pos) {
    if (tokens.empty()) throw Error("forward: no tokens");
    if (pos < 0 || int64_t(pos) + int64_t(tokens.size()) > n_ctx_)
        throw Error(fmt::format("context is full: {} tokens at position {} exceed the context of {}", tokens.size(), pos, n_ctx_));
    for (int32_t t : tokens)
        if (t < 0 || t >= model_.hparams.n_vocab) throw Error(fmt::format("token id {} outside the vocabulary of {}", t, model_.hparams.n_vocab));
    if (options_.all_logits) logits_.clear();
    for (size_t off = 0; off < tokens.size(); off += size_t(options_.max_batch)) {
        const int32_t n = int32_t(std::min<size_t>(size_t(options_.max_batch), tokens.size() - off));
        const auto t0 = Clock::now();
        if (options_.all_logits) logits_.resize(logits_.size() + size_t(n) * size_t(model_.hparams.n_vocab));
        evaluate_chunk(tokens.data() + off, n, pos + int32_t(off));
        if (options_.trace) options_.trace->add({"host", fmt::format("forward {} tokens at {}", n, pos + int32_t(off)), "forward", t0, seconds_since(t0), -1});
    }
    return logits_;
}

}  // namespace hetero
