#include <hetero/runtime/graph_builder.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>

namespace hetero {

namespace {

struct Compiled {
    hetero_executable* exe = nullptr;
    std::vector<hetero_binding> bindings;  // bound tensors, rebuilt per run where offsets change
};

// One execute whose completion is checked later; waited for (errors
// swallowed, the first failure is already on its way) if never finished.
struct InFlight {
    const hetero_ep_api& api;
    Provider& p;
    const char* what;
    hetero_event* event = nullptr;

    InFlight(const hetero_ep_api& a, Provider& provider, const char* w) : api(a), p(provider), what(w) {}
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    ~InFlight() { wait(); }
    void finish() { p.check(wait(), what); }

private:
    hetero_status wait() {
        if (!event) return HETERO_OK;
        const hetero_status st = api.event_wait(p.ep(), event);
        api.event_release(p.ep(), event);
        event = nullptr;
        return st;
    }
};

}  // namespace

// Everything one segment keeps on its device.
struct Session::SegmentState {
    Segment seg;
    Provider* p = nullptr;
    const hetero_ep_api* api = nullptr;
    uint32_t dev = 0;
    std::vector<hetero_buffer*> buffers;             // released in the destructor
    std::map<std::string, hetero_buffer*> weights;   // uploaded or imported weights
    std::vector<hetero_buffer*> k_cache, v_cache;    // one per layer of the segment
    uint32_t cache_dtype = HETERO_DTYPE_F32;
    hetero_buffer *tokens = nullptr, *positions = nullptr, *hidden_in = nullptr, *hidden_out = nullptr, *logits = nullptr;
    std::map<int32_t, Compiled> layers_exe;          // by batch size
    Compiled head_exe;
    SegmentStats stats;

    ~SegmentState() {
        for (auto& [n, c] : layers_exe) api->executable_release(p->ep(), c.exe);
        if (head_exe.exe) api->executable_release(p->ep(), head_exe.exe);
        for (hetero_buffer* b : buffers) api->buffer_release(p->ep(), b);
    }

    hetero_buffer* alloc(uint64_t bytes, const std::string& what) {
        hetero_buffer* b = nullptr;
        p->check(api->buffer_alloc(p->ep(), dev, bytes, &b), fmt::format("allocating {} ({} bytes)", what, bytes));
        buffers.push_back(b);
        return b;
    }

    // Weights stay where the model file mapped them when the device shares
    // host memory; otherwise they are copied to the device once.
    hetero_buffer* weight(const WeightView& w) {
        auto it = weights.find(w.name);
        if (it != weights.end()) return it->second;
        hetero_buffer* b = nullptr;
        if (seg.device.props.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY) {
            // Constants are never written, so read-only mapped pages are fine.
            if (api->buffer_import_host(p->ep(), dev, const_cast<uint8_t*>(w.data), w.bytes, &b) == HETERO_OK)
                buffers.push_back(b);
            else
                b = nullptr;
        }
        if (!b) {
            b = alloc(w.bytes, w.name);
            p->check(api->buffer_write(p->ep(), b, 0, w.data, w.bytes), "uploading " + w.name);
        }
        weights[w.name] = b;
        return b;
    }
};

CacheType cache_type_from_name(const std::string& name) {
    if (name == "auto") return CacheType::automatic;
    if (name == "f32") return CacheType::f32;
    if (name == "f16") return CacheType::f16;
    throw Error("unknown KV cache type '" + name + "' (known: auto, f32, f16)");
}

int32_t context_length(const LlamaHParams& hp, int32_t requested) {
    return requested > 0 ? requested : int32_t(std::clamp<int64_t>(hp.n_ctx_train, 512, 4096));
}

Session::Session(const ModelFile& model, const Plan& plan, const SessionOptions& options)
    : model_(model), plan_(plan), options_(options) {
    const LlamaHParams& hp = model.hparams;
    n_ctx_ = context_length(hp, options.n_ctx);
    if (options_.max_batch < 1) throw Error("max_batch must be at least 1");
    options_.max_batch = std::min(options_.max_batch, n_ctx_);
    const int64_t D = hp.n_embd, kv_dim = hp.n_head_kv * hp.head_dim;
    for (const Segment& seg : plan_.segments) {
        auto s = std::make_unique<SegmentState>();
        s->seg = seg;
        s->p = seg.device.provider;
        s->api = &s->p->api();
        s->dev = seg.device.index;
        s->stats.label = seg.device.label();
        const uint64_t B = uint64_t(options_.max_batch);
        s->positions = s->alloc(B * 4, "positions");
        if (seg.embedding) s->tokens = s->alloc(B * 4, "token ids");
        else s->hidden_in = s->alloc(B * D * 4, "hidden state in");
        s->hidden_out = s->alloc(B * D * 4, "hidden state out");
        if (seg.head) s->logits = s->alloc(uint64_t(hp.n_vocab) * 4, "logits");
        const bool half = options_.cache_type == CacheType::f16 ||
                          (options_.cache_type == CacheType::automatic && seg.device.props.kind != HETERO_DEVICE_CPU);
        s->cache_dtype = half ? HETERO_DTYPE_F16 : HETERO_DTYPE_F32;
        const uint64_t cache_bytes = uint64_t(n_ctx_) * kv_dim * (half ? 2 : 4);
        for (int l = seg.layer_begin; l < seg.layer_end; ++l) {
            s->k_cache.push_back(s->alloc(cache_bytes, fmt::format("layer {} K cache", l)));
            s->v_cache.push_back(s->alloc(cache_bytes, fmt::format("layer {} V cache", l)));
        }
        segments_.push_back(std::move(s));
    }
    logits_.resize(size_t(hp.n_vocab));
}

Session::~Session() = default;

std::vector<SegmentStats> Session::stats() const {
    std::vector<SegmentStats> out;
    for (const auto& s : segments_) out.push_back(s->stats);
    return out;
}

namespace {

// Adds the weight `name` as a constant of the graph (once) and records its binding.
class WeightBinder {
public:
    WeightBinder(GraphBuilder& g, const ModelFile& m, std::function<hetero_buffer*(const WeightView&)> upload)
        : g_(g), m_(m), upload_(std::move(upload)) {}
    int32_t operator()(const std::string& name) {
        auto it = ids_.find(name);
        if (it != ids_.end()) return it->second;
        const WeightView& w = m_.weight(name);
        const int32_t id = g_.tensor(w.dtype, w.shape, HETERO_TENSOR_CONSTANT, name);
        constants.push_back(hetero_binding{id, 0, upload_(w), 0});
        ids_[name] = id;
        return id;
    }
    bool has(const std::string& name) const { return m_.weights.count(name) != 0; }
    std::vector<hetero_binding> constants;

private:
    GraphBuilder& g_;
    const ModelFile& m_;
    std::function<hetero_buffer*(const WeightView&)> upload_;
    std::map<std::string, int32_t> ids_;
};

}  // namespace

void Session::evaluate_chunk(const int32_t* tokens, int32_t n, int32_t pos) {
    const LlamaHParams& hp = model_.hparams;
    const int64_t D = hp.n_embd, H = hp.n_head, Hkv = hp.n_head_kv, Hd = hp.head_dim;
    std::vector<int32_t> positions(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) positions[size_t(i)] = pos + i;

    for (size_t si = 0; si < segments_.size(); ++si) {
        SegmentState& s = *segments_[si];
        const auto t0 = std::chrono::steady_clock::now();
        auto& api = *s.api;
        hetero_ep* ep = s.p->ep();
        s.p->check(api.buffer_write(ep, s.positions, 0, positions.data(), uint64_t(n) * 4), "writing positions");
        if (s.seg.embedding) s.p->check(api.buffer_write(ep, s.tokens, 0, tokens, uint64_t(n) * 4), "writing token ids");

        Compiled& c = s.layers_exe[n];
        if (!c.exe) {
            GraphBuilder g;
            WeightBinder W(g, model_, [&](const WeightView& w) { return s.weight(w); });
            const int32_t pos_t = g.tensor(HETERO_DTYPE_I32, {n}, HETERO_TENSOR_BOUND, "positions");
            c.bindings.push_back({pos_t, 0, s.positions, 0});
            int32_t x;
            if (s.seg.embedding) {
                const int32_t ids = g.tensor(HETERO_DTYPE_I32, {n}, HETERO_TENSOR_BOUND, "tokens");
                c.bindings.push_back({ids, 0, s.tokens, 0});
                x = g.node(HETERO_OP_EMBEDDING, {W("token_embd.weight"), ids},
                           g.tensor(HETERO_DTYPE_F32, {n, D}, HETERO_TENSOR_INTERNAL, "embd"));
            } else {
                x = g.tensor(HETERO_DTYPE_F32, {n, D}, HETERO_TENSOR_BOUND, "hidden_in");
                c.bindings.push_back({x, 0, s.hidden_in, 0});
            }
            auto internal = [&](std::initializer_list<int64_t> shape, const std::string& name) {
                return g.tensor(HETERO_DTYPE_F32, shape, HETERO_TENSOR_INTERNAL, name);
            };
            auto matmul = [&](int32_t in, const std::string& w, const std::string& bias, int32_t out) {
                if (!bias.empty() && W.has(bias)) return g.node(HETERO_OP_MATMUL, {in, W(w), W(bias)}, out);
                return g.node(HETERO_OP_MATMUL, {in, W(w)}, out);
            };
            const float eps = hp.norm_eps;
            const float scale = 1.0f / std::sqrt(float(Hd));
            for (int l = s.seg.layer_begin; l < s.seg.layer_end; ++l) {
                const std::string b = fmt::format("blk.{}.", l);
                const size_t li = size_t(l - s.seg.layer_begin);
                const int32_t h = g.node(HETERO_OP_RMSNORM, {x, W(b + "attn_norm.weight")}, internal({n, D}, b + "attn_in"), {eps});
                const int32_t q = matmul(h, b + "attn_q.weight", b + "attn_q.bias", internal({n, H, Hd}, b + "q"));
                const int32_t k = matmul(h, b + "attn_k.weight", b + "attn_k.bias", internal({n, Hkv, Hd}, b + "k"));
                const int32_t v = matmul(h, b + "attn_v.weight", b + "attn_v.bias", internal({n, Hkv, Hd}, b + "v"));
                const int32_t qr = g.node(HETERO_OP_ROPE, {q, pos_t}, internal({n, H, Hd}, b + "q_rope"), {hp.rope_freq_base},
                                          {hp.rope_mode, hp.rope_dims});
                const int32_t kr = g.node(HETERO_OP_ROPE, {k, pos_t}, internal({n, Hkv, Hd}, b + "k_rope"), {hp.rope_freq_base},
                                          {hp.rope_mode, hp.rope_dims});
                const int32_t kc = g.tensor(s.cache_dtype, {n_ctx_, Hkv, Hd}, HETERO_TENSOR_BOUND, b + "k_cache");
                const int32_t vc = g.tensor(s.cache_dtype, {n_ctx_, Hkv, Hd}, HETERO_TENSOR_BOUND, b + "v_cache");
                c.bindings.push_back({kc, 0, s.k_cache[li], 0});
                c.bindings.push_back({vc, 0, s.v_cache[li], 0});
                g.node(HETERO_OP_STORE_ROWS, {kr, pos_t}, kc);
                g.node(HETERO_OP_STORE_ROWS, {v, pos_t}, vc);
                const int32_t att = g.node(HETERO_OP_ATTENTION, {qr, kc, vc, pos_t}, internal({n, H, Hd}, b + "attn"), {scale});
                const int32_t o = matmul(att, b + "attn_output.weight", "", internal({n, D}, b + "attn_out"));
                const int32_t x2 = g.node(HETERO_OP_ADD, {x, o}, internal({n, D}, b + "resid_attn"));
                const int32_t h2 = g.node(HETERO_OP_RMSNORM, {x2, W(b + "ffn_norm.weight")}, internal({n, D}, b + "ffn_in"), {eps});
                const int32_t gate = matmul(h2, b + "ffn_gate.weight", "", internal({n, hp.n_ff}, b + "gate"));
                const int32_t up = matmul(h2, b + "ffn_up.weight", "", internal({n, hp.n_ff}, b + "up"));
                const int32_t act = g.node(HETERO_OP_SWIGLU, {gate, up}, internal({n, hp.n_ff}, b + "swiglu"));
                const int32_t down = matmul(act, b + "ffn_down.weight", "", internal({n, D}, b + "ffn_out"));
                const bool last = l + 1 == s.seg.layer_end;
                const int32_t out = last ? g.tensor(HETERO_DTYPE_F32, {n, D}, HETERO_TENSOR_BOUND, "hidden_out")
                                         : internal({n, D}, b + "out");
                x = g.node(HETERO_OP_ADD, {x2, down}, out);
                if (last) c.bindings.push_back({x, 0, s.hidden_out, 0});
            }
            const hetero_graph view = g.view();
            if (std::string e = sdk::check_graph(view); !e.empty()) throw Error("internal graph error: " + e);
            s.p->check(api.compile(ep, s.dev, &view, W.constants.data(), W.constants.size(), &c.exe),
                       fmt::format("compiling layers {}-{} for {} tokens", s.seg.layer_begin, s.seg.layer_end - 1, n));
        }
        // Work on one device runs in submission order, so the head and the
        // blocking read behind it need no wait on the layers in between: one
        // host round trip per token instead of three on a GPU.
        InFlight layers_run(api, *s.p, "running layers");
        s.p->check(api.execute(ep, c.exe, c.bindings.data(), c.bindings.size(), &layers_run.event), "running layers");

        if (s.seg.head) {
            if (!s.head_exe.exe) {
                GraphBuilder g;
                WeightBinder W(g, model_, [&](const WeightView& w) { return s.weight(w); });
                const int32_t hid = g.tensor(HETERO_DTYPE_F32, {1, D}, HETERO_TENSOR_BOUND, "hidden_last");
                const int32_t hn = g.node(HETERO_OP_RMSNORM, {hid, W("output_norm.weight")},
                                          g.tensor(HETERO_DTYPE_F32, {1, D}, HETERO_TENSOR_INTERNAL, "final_norm"), {hp.norm_eps});
                const int32_t logits = g.tensor(HETERO_DTYPE_F32, {1, hp.n_vocab}, HETERO_TENSOR_BOUND, "logits");
                g.node(HETERO_OP_MATMUL, {hn, W(W.has("output.weight") ? "output.weight" : "token_embd.weight")}, logits);
                const hetero_graph view = g.view();
                s.p->check(api.compile(ep, s.dev, &view, W.constants.data(), W.constants.size(), &s.head_exe.exe),
                           "compiling the output head");
                s.head_exe.bindings = {{hid, 0, s.hidden_out, 0}, {logits, 0, s.logits, 0}};
            }
            // Only the last token's logits are needed: bind its row in place.
            s.head_exe.bindings[0].offset = uint64_t(n - 1) * uint64_t(D) * 4;
            InFlight head_run(api, *s.p, "running the output head");
            s.p->check(api.execute(ep, s.head_exe.exe, s.head_exe.bindings.data(), s.head_exe.bindings.size(), &head_run.event),
                       "running the output head");
            s.p->check(api.buffer_read(ep, s.logits, 0, logits_.data(), logits_.size() * 4), "reading logits");
            layers_run.finish();  // a kernel's error flag outranks the logits read
            head_run.finish();
        } else {
            // Hand the hidden state to the next device through host memory.
            SegmentState& next = *segments_[si + 1];
            const uint64_t bytes = uint64_t(n) * uint64_t(D) * 4;
            transfer_.resize(size_t(n * D));
            s.p->check(api.buffer_read(ep, s.hidden_out, 0, transfer_.data(), bytes), "reading hidden state");
            layers_run.finish();
            next.p->check(next.api->buffer_write(next.p->ep(), next.hidden_in, 0, transfer_.data(), bytes), "writing hidden state");
        }
        s.stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        s.stats.runs += 1;
    }
}

const std::vector<float>& Session::forward(const std::vector<int32_t>& tokens, int32_t pos) {
    if (tokens.empty()) throw Error("forward: no tokens");
    if (pos < 0 || int64_t(pos) + int64_t(tokens.size()) > n_ctx_)
        throw Error(fmt::format("context is full: {} tokens at position {} exceed the context of {}", tokens.size(), pos, n_ctx_));
    for (int32_t t : tokens)
        if (t < 0 || t >= model_.hparams.n_vocab) throw Error(fmt::format("token id {} outside the vocabulary of {}", t, model_.hparams.n_vocab));
    for (size_t off = 0; off < tokens.size(); off += size_t(options_.max_batch)) {
        const int32_t n = int32_t(std::min<size_t>(size_t(options_.max_batch), tokens.size() - off));
        evaluate_chunk(tokens.data() + off, n, pos + int32_t(off));
    }
    return logits_;
}

}  // namespace hetero
