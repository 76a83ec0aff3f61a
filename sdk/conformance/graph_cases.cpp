// Multi-node cases: internal intermediates, constant weights, KV caches
// written and read in one graph, the way a model layer runs.
#include "case_builder.hpp"
#include "case_lists.hpp"

#include <hetero/sdk/quant.hpp>

#include <cmath>
#include <string>

namespace hetero::conformance {
namespace {

constexpr uint32_t B = HETERO_TENSOR_BOUND, I = HETERO_TENSOR_INTERNAL, C = HETERO_TENSOR_CONSTANT;
constexpr uint32_t F32 = HETERO_DTYPE_F32, I32 = HETERO_DTYPE_I32;

std::string s(int64_t v) { return std::to_string(v); }

// x -> rmsnorm -> gate/up matmuls -> swiglu -> down matmul -> + x
struct FfnShape { int64_t n, d, f; };

void add_ffn_case(std::vector<Case>& out, uint32_t w, const FfnShape& sh) {
    CaseBuilder b("graph/ffn/" + std::string(sdk::dtype_name(w)) + "/n" + s(sh.n) + "_d" + s(sh.d) + "_f" + s(sh.f));
    const int32_t x = b.tensor("x", F32, B, {sh.n, sh.d});
    const int32_t norm_w = b.tensor("norm.weight", F32, C, {sh.d}, uniform(0.5, 1.5));
    const int32_t wg = b.tensor("ffn.gate", w, C, {sh.f, sh.d}, uniform(-0.3, 0.3));
    const int32_t wu = b.tensor("ffn.up", w, C, {sh.f, sh.d}, uniform(-0.3, 0.3));
    const int32_t wd = b.tensor("ffn.down", w, C, {sh.d, sh.f}, uniform(-0.3, 0.3));
    const int32_t xn = b.tensor("xn", F32, I, {sh.n, sh.d});
    const int32_t g = b.tensor("gate", F32, I, {sh.n, sh.f});
    const int32_t u = b.tensor("up", F32, I, {sh.n, sh.f});
    const int32_t h = b.tensor("hidden", F32, I, {sh.n, sh.f});
    const int32_t dn = b.tensor("down", F32, I, {sh.n, sh.d});
    const int32_t y = b.output("out", F32, {sh.n, sh.d});
    b.node(HETERO_OP_RMSNORM, {x, norm_w}, xn).fparams[0] = 1e-5f;
    b.node(HETERO_OP_MATMUL, {xn, wg}, g);
    b.node(HETERO_OP_MATMUL, {xn, wu}, u);
    b.node(HETERO_OP_SWIGLU, {g, u}, h);
    b.node(HETERO_OP_MATMUL, {h, wd}, dn);
    b.node(HETERO_OP_ADD, {x, dn}, y);
    b.get().packed = sh.n == 3;
    out.push_back(b.done());
}

void ffn_cases(std::vector<Case>& out) {
    // Rows 2-12 are a server's batched decode steps (decode kernels shared by
    // several tokens, with the norm and SwiGLU fused); 17 and 70 are prefill.
    const FfnShape shapes[] = {{1, 64, 160}, {2, 128, 352}, {3, 96, 256}, {4, 256, 512}, {8, 64, 160}, {12, 96, 256}, {17, 64, 96}, {70, 96, 224}};
    for (uint32_t w : {HETERO_DTYPE_F32, HETERO_DTYPE_F16, HETERO_DTYPE_BF16, HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0})
        for (const FfnShape& sh : shapes) add_ffn_case(out, w, sh);
}

// The head of an attention block over n rows: norm, q/k/v projections, rope
// (all dims, or the first `rot`), the new k/v rows stored into the caches.
struct AttentionHead {
    int32_t x, pos, kc, vc, qr;
};

struct HeadShape {
    int64_t n, h, kv, hd, c;
    int mode;
    int64_t rot;
};

// With `q_output` the rotated q is a graph output, so every value the head
// writes is checked element by element (through attention a wrong q can
// hide in the bound).
// With `bias` the projections carry biases, as Qwen2's do.
AttentionHead add_attention_head(CaseBuilder& b, uint32_t w, uint32_t cache, const HeadShape& sh, bool q_output, bool bias = false) {
    const int64_t dm = sh.h * sh.hd, dkv = sh.kv * sh.hd;
    Rng rng(b.get().seed);
    AttentionHead a{};
    a.x = b.tensor("x", F32, B, {sh.n, dm});
    a.pos = b.tensor("positions", I32, B, {sh.n}, values(contiguous_positions(rng.below(sh.c - sh.n + 1), sh.n)));
    a.kc = b.tensor("k_cache", cache, B, {sh.c, sh.kv, sh.hd});
    a.vc = b.tensor("v_cache", cache, B, {sh.c, sh.kv, sh.hd});
    const int32_t norm_w = b.tensor("attn_norm.weight", F32, C, {dm}, uniform(0.5, 1.5));
    const int32_t wq = b.tensor("attn.q", w, C, {dm, dm}, uniform(-0.3, 0.3));
    const int32_t wk = b.tensor("attn.k", w, C, {dkv, dm}, uniform(-0.3, 0.3));
    const int32_t wv = b.tensor("attn.v", w, C, {dkv, dm}, uniform(-0.3, 0.3));
    const int32_t xn = b.tensor("xn", F32, I, {sh.n, dm});
    const int32_t q = b.tensor("q", F32, I, {sh.n, sh.h, sh.hd});
    const int32_t k = b.tensor("k", F32, I, {sh.n, sh.kv, sh.hd});
    const int32_t v = b.tensor("v", F32, I, {sh.n, sh.kv, sh.hd});
    a.qr = q_output ? b.output("q_rope", F32, {sh.n, sh.h, sh.hd}) : b.tensor("q_rope", F32, I, {sh.n, sh.h, sh.hd});
    const int32_t kr = b.tensor("k_rope", F32, I, {sh.n, sh.kv, sh.hd});
    b.node(HETERO_OP_RMSNORM, {a.x, norm_w}, xn).fparams[0] = 1e-6f;
    if (bias) {
        b.node(HETERO_OP_MATMUL, {xn, wq, b.tensor("attn.q.bias", F32, C, {dm}, uniform(-1, 1))}, q);
        b.node(HETERO_OP_MATMUL, {xn, wk, b.tensor("attn.k.bias", F32, C, {dkv}, uniform(-1, 1))}, k);
        b.node(HETERO_OP_MATMUL, {xn, wv, b.tensor("attn.v.bias", F32, C, {dkv}, uniform(-1, 1))}, v);
    } else {
        b.node(HETERO_OP_MATMUL, {xn, wq}, q);
        b.node(HETERO_OP_MATMUL, {xn, wk}, k);
        b.node(HETERO_OP_MATMUL, {xn, wv}, v);
    }
    for (auto [src, dst] : {std::pair{q, a.qr}, std::pair{k, kr}}) {
        hetero_node& r = b.node(HETERO_OP_ROPE, {src, a.pos}, dst);
        r.fparams[0] = 10000.f;
        r.iparams[0] = sh.mode;
        r.iparams[1] = int32_t(sh.rot);
    }
    b.node(HETERO_OP_STORE_ROWS, {kr, a.pos}, a.kc);
    b.node(HETERO_OP_STORE_ROWS, {v, a.pos}, a.vc);
    return a;
}

std::string head_name(const char* kind, uint32_t w, uint32_t cache, const HeadShape& sh) {
    return std::string("graph/") + kind + "/" + sdk::dtype_name(w) + "_cache_" + sdk::dtype_name(cache) + "/n" + s(sh.n) + "_h" + s(sh.h) +
           "_kv" + s(sh.kv) + "_hd" + s(sh.hd) + "_c" + s(sh.c);
}

// A full attention block: the head above, attention, output projection,
// residual.
void attention_block_cases(std::vector<Case>& out) {
    const HeadShape shapes[] = {{1, 4, 2, 16, 17, HETERO_ROPE_ADJACENT, 0},
                                {5, 8, 2, 16, 33, HETERO_ROPE_HALVES, 0},
                                {3, 2, 2, 32, 64, HETERO_ROPE_ADJACENT, 0},
                                {7, 4, 1, 32, 20, HETERO_ROPE_HALVES, 0},
                                {37, 4, 1, 32, 48, HETERO_ROPE_HALVES, 0}};  // prefill-sized: GEMM paths
    for (uint32_t w : {HETERO_DTYPE_F32, HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0})
        for (uint32_t cache : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
            for (const HeadShape& sh : shapes) {
                const int64_t dm = sh.h * sh.hd;
                CaseBuilder b(head_name("attention_block", w, cache, sh));
                const AttentionHead a = add_attention_head(b, w, cache, sh, false);
                const int32_t wo = b.tensor("attn.o", w, C, {dm, dm}, uniform(-0.3, 0.3));
                const int32_t att = b.tensor("attn", F32, I, {sh.n, sh.h, sh.hd});
                const int32_t o = b.tensor("attn_out", F32, I, {sh.n, dm});
                const int32_t y = b.output("out", F32, {sh.n, dm});
                b.node(HETERO_OP_ATTENTION, {a.qr, a.kc, a.vc, a.pos}, att).fparams[0] = float(1.0 / std::sqrt(double(sh.hd)));
                b.node(HETERO_OP_MATMUL, {att, wo}, o);
                b.node(HETERO_OP_ADD, {a.x, o}, y);
                b.get().packed = sh.n == 5;
                out.push_back(b.done());
            }
}

// The decode head alone, with the rotated q as an output (what a fused
// projection-rope-store kernel writes), also with partial rotation.
void qkv_rope_store_cases(std::vector<Case>& out) {
    const HeadShape shapes[] = {{1, 4, 2, 16, 17, HETERO_ROPE_ADJACENT, 0},
                                {1, 8, 2, 64, 40, HETERO_ROPE_ADJACENT, 0},
                                {1, 4, 1, 32, 9, HETERO_ROPE_ADJACENT, 16}};
    for (uint32_t w : {HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0})
        for (uint32_t cache : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
            for (const HeadShape& sh : shapes) {
                CaseBuilder b(head_name("qkv_rope_store", w, cache, sh) + "_rot" + s(sh.rot));
                add_attention_head(b, w, cache, sh, true);
                out.push_back(b.done());
            }
}

// The decode head with Q/K/V biases (Qwen2): one token (a provider's fused
// projection-rope-store kernel; Q5_0, which has no planar kernel on OpenCL,
// takes the launch-per-projection path), a batched step of 4 (grouped decode
// kernels, rope apart), interleaved and half rotation, and a prefill-sized
// head (GEMMs with a bias each); tensors in one buffer (packed) and each in
// its own.
void qkv_bias_cases(std::vector<Case>& out) {
    const HeadShape shapes[] = {{1, 4, 2, 32, 17, HETERO_ROPE_ADJACENT, 0},
                                {1, 14, 2, 64, 9, HETERO_ROPE_ADJACENT, 0},
                                {1, 8, 4, 32, 17, HETERO_ROPE_ADJACENT, 0},
                                {1, 4, 1, 32, 9, HETERO_ROPE_HALVES, 0},
                                {4, 8, 2, 32, 20, HETERO_ROPE_ADJACENT, 0},
                                {19, 4, 2, 32, 40, HETERO_ROPE_HALVES, 0}};
    for (uint32_t w : {HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q6_K, HETERO_DTYPE_Q5_0})
        for (const HeadShape& sh : shapes)
            for (bool packed : {true, false}) {
                if ((sh.h * sh.hd) % sdk::block_elems(w) != 0) continue;  // rows of x are whole blocks
                CaseBuilder b(head_name("qkv_bias_rope_store", w, HETERO_DTYPE_F16, sh) + (packed ? "_packed" : ""));
                add_attention_head(b, w, HETERO_DTYPE_F16, sh, true, true);
                b.get().packed = packed;
                out.push_back(b.done());
            }
}

// store_rows into both caches, then attention over them, all bound tensors.
void store_then_attend_cases(std::vector<Case>& out) {
    struct Shape { int64_t n, h, kv, hd, c; };
    const Shape shapes[] = {{1, 8, 1, 64, 65}, {4, 4, 2, 16, 9}, {17, 2, 1, 128, 40}, {3, 8, 8, 8, 3}};
    for (uint32_t cache : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
        for (const Shape& sh : shapes) {
            CaseBuilder b("graph/store_then_attend/" + std::string(sdk::dtype_name(cache)) + "/n" + s(sh.n) + "_h" + s(sh.h) + "_kv" + s(sh.kv) +
                          "_hd" + s(sh.hd) + "_c" + s(sh.c));
            Rng rng(b.get().seed);
            const int32_t q = b.tensor("q", F32, B, {sh.n, sh.h, sh.hd}, uniform(-2, 2));
            const int32_t kn = b.tensor("k_new", F32, B, {sh.n, sh.kv, sh.hd}, uniform(-2, 2));
            const int32_t vn = b.tensor("v_new", F32, B, {sh.n, sh.kv, sh.hd});
            const int32_t pos = b.tensor("positions", I32, B, {sh.n}, values(distinct_positions(rng, sh.n, sh.c)));
            const int32_t kc = b.tensor("k_cache", cache, B, {sh.c, sh.kv, sh.hd}, uniform(-2, 2));
            const int32_t vc = b.tensor("v_cache", cache, B, {sh.c, sh.kv, sh.hd});
            const int32_t y = b.output("out", F32, {sh.n, sh.h, sh.hd});
            b.node(HETERO_OP_STORE_ROWS, {kn, pos}, kc);
            b.node(HETERO_OP_STORE_ROWS, {vn, pos}, vc);
            b.node(HETERO_OP_ATTENTION, {q, kc, vc, pos}, y).fparams[0] = float(1.0 / std::sqrt(double(sh.hd)));
            out.push_back(b.done());
        }
}

// embedding -> rmsnorm -> logits matmul -> softmax (the two ends of a model).
void embed_to_probs_cases(std::vector<Case>& out) {
    for (uint32_t w : {HETERO_DTYPE_F32, HETERO_DTYPE_F16, HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0}) {
        const int64_t vocab = 257, d = 64, n = 5;
        CaseBuilder b("graph/embed_to_probs/" + std::string(sdk::dtype_name(w)) + "/v" + s(vocab) + "_d" + s(d) + "_n" + s(n));
        const int32_t idv = b.tensor("tokens", I32, B, {n}, ids(vocab));
        const int32_t table = b.tensor("token_embd", w, C, {vocab, d});
        const int32_t norm_w = b.tensor("output_norm.weight", F32, C, {d}, uniform(0.5, 1.5));
        const int32_t head = b.tensor("output", w, C, {vocab, d}, uniform(-0.5, 0.5));
        const int32_t e = b.tensor("embd", F32, I, {n, d});
        const int32_t en = b.tensor("embd_norm", F32, I, {n, d});
        const int32_t logits = b.tensor("logits", F32, I, {n, vocab});
        const int32_t y = b.output("probs", F32, {n, vocab});
        b.node(HETERO_OP_EMBEDDING, {table, idv}, e);
        b.node(HETERO_OP_RMSNORM, {e, norm_w}, en).fparams[0] = 1e-5f;
        b.node(HETERO_OP_MATMUL, {en, head}, logits);
        b.node(HETERO_OP_SOFTMAX, {logits}, y);
        out.push_back(b.done());
    }
}

}  // namespace

// Two projections, each roped, then summed: the first rope's input dies at
// that rope, so a memory plan may reuse its memory for the second rope's
// output. Catches providers that run neighbouring nodes together (one
// dispatch for both ropes) without keeping every input alive through both.
void paired_rope_cases(std::vector<Case>& out) {
    for (uint32_t w : {HETERO_DTYPE_F32, HETERO_DTYPE_Q8_0})
        for (int64_t n : {1, 4}) {
            const int64_t d = 64, h = 2, hd = 32;
            CaseBuilder b("graph/paired_rope/" + std::string(sdk::dtype_name(w)) + "/n" + s(n));
            Rng rng(b.get().seed);
            const int32_t x = b.tensor("x", F32, B, {n, d});
            const int32_t wq = b.tensor("wq", w, C, {h * hd, d}, uniform(-0.3, 0.3));
            const int32_t wk = b.tensor("wk", w, C, {h * hd, d}, uniform(-0.3, 0.3));
            const int32_t pos = b.tensor("positions", I32, B, {n}, values(distinct_positions(rng, n, 100)));
            const int32_t q = b.tensor("q", F32, I, {n, h, hd});
            const int32_t k = b.tensor("k", F32, I, {n, h, hd});
            const int32_t qr = b.tensor("q_rope", F32, I, {n, h, hd});
            const int32_t kr = b.tensor("k_rope", F32, I, {n, h, hd});
            const int32_t y = b.output("out", F32, {n, h, hd});
            b.node(HETERO_OP_MATMUL, {x, wq}, q);
            b.node(HETERO_OP_MATMUL, {x, wk}, k);
            for (auto [in, o] : {std::pair{q, qr}, std::pair{k, kr}}) {
                hetero_node& r = b.node(HETERO_OP_ROPE, {in, pos}, o);
                r.fparams[0] = 10000.f;
                r.iparams[0] = HETERO_ROPE_HALVES;
            }
            b.node(HETERO_OP_ADD, {qr, kr}, y);
            out.push_back(b.done());
        }
}

// The other quantized weight types (K-quants, GGUF's other block types and
// E0M4; widths multiples of 256) through the fused paths a provider may take for
// them: the FFN (gate/up pair, SwiGLU, norm before), the Q/K/V head with
// rope and cache stores, decode and prefill sized.
void quant_graph_cases(std::vector<Case>& out) {
    const FfnShape ffn[] = {{1, 256, 512}, {3, 256, 256}, {17, 512, 256}};
    const HeadShape heads[] = {{1, 8, 2, 32, 17, HETERO_ROPE_ADJACENT, 0}, {1, 4, 1, 64, 9, HETERO_ROPE_HALVES, 0},
                               {19, 8, 4, 32, 40, HETERO_ROPE_ADJACENT, 0}};
    for (uint32_t w : {HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q5_K, HETERO_DTYPE_Q6_K, HETERO_DTYPE_Q2_K, HETERO_DTYPE_Q3_K, HETERO_DTYPE_Q4_1,
                       HETERO_DTYPE_Q5_0, HETERO_DTYPE_Q5_1, HETERO_DTYPE_IQ4_NL, HETERO_DTYPE_E0M4}) {
        for (const FfnShape& sh : ffn) add_ffn_case(out, w, sh);
        for (const HeadShape& sh : heads) {
            CaseBuilder b(head_name("qkv_rope_store", w, HETERO_DTYPE_F16, sh) + "_rot" + s(sh.rot));
            add_attention_head(b, w, HETERO_DTYPE_F16, sh, true);
            out.push_back(b.done());
        }
    }
}

void add_graph_cases(std::vector<Case>& out) {
    paired_rope_cases(out);
    ffn_cases(out);
    attention_block_cases(out);
    qkv_rope_store_cases(out);
    qkv_bias_cases(out);
    store_then_attend_cases(out);
    embed_to_probs_cases(out);
    quant_graph_cases(out);
}

}  // namespace hetero::conformance
