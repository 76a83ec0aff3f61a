// The session: a plan's devices and KV caches, and the forward that runs a
// chunk's program (session_compile.cpp) on every device of its schedule at
// once (session_run.cpp).
#include <hetero/runtime/trace.hpp>
#include <hetero/sdk/provider.hpp>

#include "session_parts.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hetero {

namespace {

// No NaN or Inf among the values: an OR over their exponent bits, which the
// compiler vectorizes (an isfinite test with a throw per value it did not;
// over a batched step's logits that was a tenth of the host's time).
bool all_finite(const float* v, size_t n) {
    uint32_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, v + i, sizeof bits);
        bad |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);
    }
    return bad == 0;
}

}  // namespace

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
    if (options_.n_seq < 1) throw Error(fmt::format("a session holds at least one sequence, not {}", options_.n_seq));
    stacked_ = stacked_caches_usable();
    allocate_caches();
    logits_.resize(size_t(hp.n_vocab));
}

bool Session::stacked_caches_usable() const {
    if (options_.n_seq < 2 || sdk::env_equals("HETERO_STACKED_KV", "0")) return false;
    // Every layer's home must run ATTENTION_SEQS (ABI 1.3) at this shape.
    const ModelGraph g = build_batch_graph(model_, 2, n_ctx_, cache_dtypes(), stacked_sequences());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (g.nodes[i].node.op != HETERO_OP_ATTENTION_SEQS) continue;
        const DeviceRef& d = plan_.devices[plan_.layers[size_t(g.nodes[i].layer)].home];
        if (!d.provider || HETERO_ABI_MINOR_OF(d.provider->api().abi_version) < 3 || !unsupported_reason(d, g, i).empty()) return false;
    }
    return true;
}

int32_t Session::stacked_sequences() const { return options_.n_seq + 1; }

int32_t Session::step_bucket(int32_t n) const {
    int32_t b = 2;
    while (b < n) b *= 2;
    return std::min(b, options_.n_seq);
}

void Session::allocate_caches() {
    const LlamaHParams& hp = model_.hparams;
    const uint64_t kv_dim = uint64_t(hp.n_head_kv * hp.head_dim);
    for (int l = 0; l < int(hp.n_layer); ++l) {
        SessionDevice& dv = *devices_[plan_.layers[size_t(l)].home];
        const uint64_t bytes = uint64_t(n_ctx_) * kv_dim * (cache_dtype(options_.cache_type, dv.ref.props) == HETERO_DTYPE_F16 ? 2 : 4);
        kv_caches_.emplace_back();
        if (stacked_) {
            // One K and one V buffer per layer for every sequence: a decode step
            // of all of them attends in one ATTENTION_SEQS node a layer.
            const uint64_t all = bytes * uint64_t(stacked_sequences());
            hetero_buffer* k = dv.alloc(all, fmt::format("layer {} K caches of {} sequences and the padding rows'", l, options_.n_seq));
            hetero_buffer* v = dv.alloc(all, fmt::format("layer {} V caches of {} sequences and the padding rows'", l, options_.n_seq));
            for (int32_t s = 0; s < options_.n_seq; ++s) kv_caches_.back().push_back({k, v, bytes * uint64_t(s)});
            continue;
        }
        // A buffer per sequence: no device's largest allocation limits how many sequences fit.
        for (int32_t s = 0; s < options_.n_seq; ++s) {
            const std::string of = options_.n_seq > 1 ? fmt::format(" of sequence {}", s) : "";
            kv_caches_.back().push_back(
                {dv.alloc(bytes, fmt::format("layer {} K cache{}", l, of)), dv.alloc(bytes, fmt::format("layer {} V cache{}", l, of)), 0});
        }
    }
}

Session::~Session() {
    for (auto* programs : {&programs_, &batch_programs_, &hidden_programs_})
        for (auto& [n, prog] : *programs)
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

void Session::bind_sequences(SessionProgram& P, const std::vector<int32_t>& seqs) {
    if (P.bound_seqs == seqs) return;
    for (CompiledTask& c : P.compiled)
        for (const CacheBinding& cb : c.caches) {
            if (cb.seq == kStackedCaches) continue;  // every sequence's rows, bound at compile
            const KvCache& kv = kv_caches_[size_t(cb.layer)][size_t(seqs.at(size_t(cb.seq)))];
            c.bindings[cb.binding].buffer = cb.k ? kv.k : kv.v;
            c.bindings[cb.binding].offset = kv.offset;
        }
    P.bound_seqs = seqs;
}

void Session::run(SessionProgram& P, int32_t pos) {
    const std::vector<DeviceQueue>& queues = P.schedule.queues;
    if (queues.size() == 1) {
        run_tasks(P, queues.front().device, pos);
        return;
    }
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

void Session::take_logits(SessionProgram& P, std::vector<float>& out_logits, size_t at, const std::function<int32_t(size_t)>& position) {
    const size_t row = size_t(model_.hparams.n_vocab);
    const size_t rows = size_t(P.graph.head_rows);
    float* out = out_logits.data() + at;
    std::memcpy(out, P.exchanges[size_t(P.schedule.logits)]->host->data, rows * row * 4);
    // NaN or Inf here would be sampled as some token and give fluent-looking garbage.
    if (all_finite(out, rows * row)) return;
    for (size_t i = 0; i < rows * row; ++i)
        if (!std::isfinite(out[i]))
            throw Error(fmt::format("non-finite logits ({}) at position {}: a weight matrix of {} holds NaN/Inf, or its activations "
                                    "overflow on these devices",
                                    out[i], position(i / row), model_.path));
}

namespace {

// Fills a host-made input of the program (tokens, positions) for the forward begun.
void fill_input(SessionProgram& P, int x, int32_t n, const std::function<int32_t(int32_t)>& value) {
    if (x < 0) return;
    Exchange& e = *P.exchanges[size_t(x)];
    int32_t* v = reinterpret_cast<int32_t*>(e.host->data);
    for (int32_t i = 0; i < n; ++i) v[i] = value(i);
    e.ready.store(P.generation, std::memory_order_release);
}

}  // namespace

void Session::begin(SessionProgram& P) {
    P.generation = ++generation_;
    P.started = SessionClock::now();
    P.failed = false;
    P.error = nullptr;
}

void Session::evaluate_chunk(int32_t seq, const int32_t* tokens, int32_t n, int32_t pos) {
    SessionProgram& P = program(n);
    bind_sequences(P, {seq});
    begin(P);
    fill_input(P, P.schedule.tokens, n, [&](int32_t i) { return tokens[i]; });
    fill_input(P, P.schedule.positions, n, [&](int32_t i) { return pos + i; });
    run(P, pos);
    const size_t rows = size_t(P.graph.head_rows);
    take_logits(P, logits_, logits_.size() - rows * size_t(model_.hparams.n_vocab),
                [&](size_t r) { return pos + n - int32_t(rows) + int32_t(r); });
}

void Session::check_tokens(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) const {
    if (seq < 0 || seq >= options_.n_seq) throw Error(fmt::format("sequence {} outside the session's 0..{}", seq, options_.n_seq - 1));
    if (tokens.empty()) throw Error("forward: no tokens");
    if (pos < 0 || int64_t(pos) + int64_t(tokens.size()) > n_ctx_)
        throw Error(fmt::format("context is full: {} tokens at position {} exceed the context of {}", tokens.size(), pos, n_ctx_));
    for (int32_t t : tokens)
        if (t < 0 || t >= model_.hparams.n_vocab) throw Error(fmt::format("token id {} outside the vocabulary of {}", t, model_.hparams.n_vocab));
}

const std::vector<float>& Session::forward_seq(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) {
    check_tokens(seq, tokens, pos);
    if (options_.all_logits) logits_.clear();
    for (size_t off = 0; off < tokens.size(); off += size_t(options_.max_batch)) {
        const int32_t n = int32_t(std::min<size_t>(size_t(options_.max_batch), tokens.size() - off));
        const auto t0 = SessionClock::now();
        if (options_.all_logits) logits_.resize(logits_.size() + size_t(n) * size_t(model_.hparams.n_vocab));
        evaluate_chunk(seq, tokens.data() + off, n, pos + int32_t(off));
        if (options_.trace) options_.trace->add({"host", fmt::format("forward {} tokens at {}", n, pos + int32_t(off)), "forward", t0, seconds_since(t0), -1});
    }
    return logits_;
}

const std::vector<float>& Session::decode_batch(const std::vector<SeqToken>& steps) {
    if (steps.empty()) throw Error("decode step: no sequences");
    if (steps.size() > size_t(options_.n_seq))
        throw Error(fmt::format("decode step of {} sequences, but the session holds {}", steps.size(), options_.n_seq));
    std::vector<bool> taken(size_t(options_.n_seq), false);
    for (const SeqToken& s : steps) {
        if (s.seq < 0 || s.seq >= options_.n_seq) throw Error(fmt::format("sequence {} outside the session's 0..{}", s.seq, options_.n_seq - 1));
        if (taken[size_t(s.seq)]) throw Error(fmt::format("decode step names sequence {} twice", s.seq));
        taken[size_t(s.seq)] = true;
        if (s.pos < 0 || s.pos >= n_ctx_) throw Error(fmt::format("context is full: position {} of sequence {} is past the context of {}", s.pos, s.seq, n_ctx_));
        if (s.token < 0 || s.token >= model_.hparams.n_vocab)
            throw Error(fmt::format("token id {} outside the vocabulary of {}", s.token, model_.hparams.n_vocab));
    }
    if (options_.all_logits) throw Error("decode step: a session that keeps every token's logits runs one sequence");
    // One sequence alone is an ordinary one-token forward (the same program as a single stream's).
    if (steps.size() == 1) return forward_seq(steps[0].seq, {steps[0].token}, steps[0].pos);
    const int32_t n = int32_t(steps.size());
    const auto t0 = SessionClock::now();
    // Over stacked caches a step runs the program of its bucket, the rows
    // past its own padding: token 0 at position 0 of the padding sequence.
    const int32_t rows = stacked_ ? step_bucket(n) : n;
    SessionProgram& P = batch_program(rows);
    std::vector<int32_t> seqs;
    for (const SeqToken& s : steps) seqs.push_back(s.seq);
    bind_sequences(P, seqs);
    begin(P);
    auto real = [&](int32_t i) { return i < n; };
    fill_input(P, P.schedule.tokens, rows, [&](int32_t i) { return real(i) ? steps[size_t(i)].token : 0; });
    fill_input(P, P.schedule.positions, rows, [&](int32_t i) { return real(i) ? steps[size_t(i)].pos : 0; });
    fill_input(P, P.schedule.cache_rows, rows,
               [&](int32_t i) { return real(i) ? steps[size_t(i)].seq * n_ctx_ + steps[size_t(i)].pos : (stacked_sequences() - 1) * n_ctx_; });
    run(P, steps[0].pos);
    batch_logits_.resize(size_t(rows) * size_t(model_.hparams.n_vocab));
    take_logits(P, batch_logits_, 0, [&](size_t r) { return real(int32_t(r)) ? steps[r].pos : 0; });
    batch_logits_.resize(size_t(n) * size_t(model_.hparams.n_vocab));
    if (options_.trace) options_.trace->add({"host", fmt::format("decode step of {} sequences", n), "forward", t0, seconds_since(t0), -1});
    return batch_logits_;
}

}  // namespace hetero
