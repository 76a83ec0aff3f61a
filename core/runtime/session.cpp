// The session: a plan's devices and KV caches, and the forward that runs a
// chunk's program (session_compile.cpp) on every device of its schedule at
// once (session_run.cpp).
#include <hetero/runtime/trace.hpp>

#include "session_parts.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hetero {

int32_t context_length(const LlamaHParams& hp, int32_t requested) {
    return requested > 0 ? requested : int32_t(std::clamp<int64_t>(hp.n_ctx_train, 512, 4096));
}

int32_t chunk_limit(const Plan& plan, int32_t max_batch, int32_t n_ctx) {
    int32_t limit = std::min(max_batch, n_ctx);
    // A static-shape device builds one graph per chunk size: prompts are cut
    // into the chunks it is built for, so every full chunk shares its graphs.
    for (size_t d : plan.used_devices())
        if (d < plan.devices.size()) {
            const hetero_device_props& p = plan.devices[d].props;
            if ((p.flags & HETERO_DEVICE_FLAG_STATIC_SHAPES) && HETERO_HAS_FIELD(hetero_device_props, &p, chunk_tokens) && p.chunk_tokens > 0)
                limit = std::min(limit, int32_t(p.chunk_tokens));
        }
    return limit;
}

Session::Session(const ModelFile& model, const Plan& plan, const SessionOptions& options)
    : model_(model), plan_(plan), options_(options) {
    const LlamaHParams& hp = model.hparams;
    n_ctx_ = context_length(hp, options.n_ctx);
    if (options_.max_batch < 1) throw Error("max_batch must be at least 1");
    options_.max_batch = chunk_limit(plan_, options_.max_batch, n_ctx_);
    if (plan_.layers.size() != size_t(hp.n_layer + 1))
        throw Error(fmt::format("the plan has {} layer entries, the model needs {}", plan_.layers.size(), hp.n_layer + 1));
    devices_.resize(plan_.devices.size());
    const std::vector<size_t> used = plan_.used_devices();
    for (size_t d : used) {
        if (d >= plan_.devices.size()) throw Error("the plan names a device it does not list");
        auto dv = std::make_unique<SessionDevice>();
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
        SessionDevice& dv = *devices_[plan_.layers[size_t(l)].home];
        const uint64_t bytes = uint64_t(n_ctx_) * kv_dim * (cache_dtype(options_.cache_type, dv.ref.props) == HETERO_DTYPE_F16 ? 2 : 4);
        kv_caches_.push_back({dv.alloc(bytes, fmt::format("layer {} K cache", l)), dv.alloc(bytes, fmt::format("layer {} V cache", l))});
    }
    logits_.resize(size_t(hp.n_vocab));
}

Session::~Session() {
    for (auto& [n, prog] : programs_)
        for (size_t ti = 0; ti < prog->compiled.size(); ++ti)
            if (prog->compiled[ti].exe) devices_[prog->schedule.tasks[ti].device]->release(prog->compiled[ti].exe);
    // Buffers (some wrap the programs' host memory) go before that memory does.
    devices_.clear();
}

std::vector<SegmentStats> Session::stats() const {
    std::vector<SegmentStats> out;
    for (const auto& d : devices_)
        if (d) out.push_back(d->stats);
    return out;
}

void Session::evaluate_chunk(const int32_t* tokens, int32_t n, int32_t pos) {
    SessionProgram& P = program(n);
    P.generation = ++generation_;
    P.started = SessionClock::now();
    P.failed = false;
    P.error = nullptr;
    const auto fill = [&](int x, auto value) {
        if (x < 0) return;
        Exchange& e = *P.exchanges[size_t(x)];
        int32_t* v = reinterpret_cast<int32_t*>(e.host->data);
        for (int32_t i = 0; i < n; ++i) v[i] = value(i);
        e.ready.store(P.generation, std::memory_order_release);
    };
    fill(P.schedule.tokens, [&](int32_t i) { return tokens[i]; });
    fill(P.schedule.positions, [&](int32_t i) { return pos + i; });
    const std::vector<DeviceQueue>& queues = P.schedule.queues;
    if (queues.size() == 1) {
        run_tasks(P, queues.front().device, pos);
    } else {
        P.running = int(queues.size());
        for (const DeviceQueue& q : queues) {
            SessionDevice& dv = *devices_[q.device];
            const size_t dev = q.device;
            {
                std::lock_guard<std::mutex> lock(dv.mu);
                dv.job = [this, &P, dev, pos] {
                    std::exception_ptr err;
                    try {
                        run_tasks(P, dev, pos);
                    } catch (const SessionAborted&) {
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
    std::memcpy(out, P.exchanges[size_t(P.schedule.logits)]->host->data, rows * row * 4);
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
        const auto t0 = SessionClock::now();
        if (options_.all_logits) logits_.resize(logits_.size() + size_t(n) * size_t(model_.hparams.n_vocab));
        evaluate_chunk(tokens.data() + off, n, pos + int32_t(off));
        if (options_.trace) options_.trace->add({"host", fmt::format("forward {} tokens at {}", n, pos + int32_t(off)), "forward", t0, seconds_since(t0), -1});
    }
    return logits_;
}

}  // namespace hetero
