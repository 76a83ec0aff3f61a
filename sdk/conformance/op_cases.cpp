// Single-op cases: every op x every dtype it takes x many shapes, odd sizes included.
#include "case_builder.hpp"
#include "case_lists.hpp"

#include <hetero/sdk/quant.hpp>

#include <cmath>
#include <iterator>
#include <string>

namespace hetero::conformance {
namespace {

constexpr uint32_t B = HETERO_TENSOR_BOUND, C = HETERO_TENSOR_CONSTANT;
constexpr uint32_t F32 = HETERO_DTYPE_F32, I32 = HETERO_DTYPE_I32;
const uint32_t kWeightDtypes[] = {HETERO_DTYPE_F32, HETERO_DTYPE_F16, HETERO_DTYPE_BF16, HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0};

std::string dt(uint32_t d) { return sdk::dtype_name(d); }
std::string s(int64_t v) { return std::to_string(v); }

struct EmbeddingShape { int64_t v, d, n; };
struct MatmulShape { int64_t n, m, k; };

// ids [n] looked up in a table [v, d] of `dtype`, bound or constant ("_const").
void add_embedding(std::vector<Case>& out, uint32_t dtype, const EmbeddingShape& sh, uint32_t kind) {
    CaseBuilder b("embedding/" + dt(dtype) + "/v" + s(sh.v) + "_d" + s(sh.d) + "_n" + s(sh.n) + (kind == C ? "_const" : ""));
    const int32_t table = b.tensor("table", dtype, kind, {sh.v, sh.d});
    const int32_t idv = b.tensor("ids", I32, B, {sh.n}, ids(sh.v));
    b.node(HETERO_OP_EMBEDDING, {table, idv}, b.output("out", F32, {sh.n, sh.d}));
    out.push_back(b.done());
}

// x [n, k] times weights [m, k] of `dtype`, bound or constant ("_const_w"),
// with an f32 bias [m] when asked ("_bias").
void add_matmul(std::vector<Case>& out, uint32_t dtype, const MatmulShape& sh, uint32_t kind, bool bias) {
    CaseBuilder b("matmul/" + dt(dtype) + "/n" + s(sh.n) + "_m" + s(sh.m) + "_k" + s(sh.k) + (bias ? "_bias" : "") +
                  (kind == C ? "_const_w" : ""));
    const int32_t x = b.tensor("x", F32, B, {sh.n, sh.k});
    const int32_t w = b.tensor("w", dtype, kind, {sh.m, sh.k}, uniform(-0.5, 0.5));
    std::vector<int32_t> in{x, w};
    if (bias) in.push_back(b.tensor("bias", F32, B, {sh.m}));
    b.node(HETERO_OP_MATMUL, in, b.output("out", F32, {sh.n, sh.m}));
    out.push_back(b.done());
}

// Every batch size from 1 to 17: catches row-blocking remainders.
void add_batch_sizes(std::vector<Case>& out, uint32_t dtype) {
    for (int64_t n = 1; n <= 17; ++n) {
        CaseBuilder b("matmul/" + dt(dtype) + "/n" + s(n) + "_m37_k128_batch");
        const int32_t x = b.tensor("x", F32, B, {n, 128});
        const int32_t w = b.tensor("w", dtype, B, {37, 128}, uniform(-0.5, 0.5));
        b.node(HETERO_OP_MATMUL, {x, w}, b.output("out", F32, {n, 37}));
        out.push_back(b.done());
    }
}

// "(rows)" operands: x [N, H, Hd] read as [N, H*Hd], output written as [N, H2, Hd2].
void add_rows_operands(std::vector<Case>& out, uint32_t dtype) {
    for (int64_t n : {1, 3, 17}) {
        CaseBuilder b("matmul/" + dt(dtype) + "/n" + s(n) + "_x3d_k4x32_out3d_2x48");
        const int32_t x = b.tensor("x", F32, B, {n, 4, 32});
        const int32_t w = b.tensor("w", dtype, B, {96, 128}, uniform(-0.5, 0.5));
        b.node(HETERO_OP_MATMUL, {x, w}, b.output("out", F32, {n, 2, 48}));
        b.get().packed = n == 3;  // also exercise nonzero binding offsets
        out.push_back(b.done());
    }
}

void embedding_cases(std::vector<Case>& out) {
    const EmbeddingShape block_shapes[] = {{1, 32, 1}, {7, 64, 3}, {100, 96, 17}, {257, 160, 64}, {33, 2048, 5}};
    const EmbeddingShape odd_shapes[] = {{3, 7, 2}, {17, 33, 9}, {65, 100, 1}, {2, 1, 4}};
    for (uint32_t dtype : kWeightDtypes) {
        std::vector<EmbeddingShape> shapes(std::begin(block_shapes), std::end(block_shapes));
        if (!sdk::is_block_dtype(dtype)) shapes.insert(shapes.end(), std::begin(odd_shapes), std::end(odd_shapes));
        for (const EmbeddingShape& sh : shapes) add_embedding(out, dtype, sh, B);
        // Tables given as constants, which providers may keep in a layout of their own.
        if (sdk::is_block_dtype(dtype))
            for (const EmbeddingShape& sh : block_shapes) add_embedding(out, dtype, sh, C);
    }
}

void matmul_cases(std::vector<Case>& out) {
    const MatmulShape block_shapes[] = {{1, 33, 64}, {1, 1, 32}, {1, 7, 96}, {2, 17, 160}, {3, 65, 256}, {7, 100, 32},
                                        {17, 129, 64}, {64, 127, 96}, {1, 257, 2048}, {5, 63, 2048}, {16, 128, 256},
                                        {13, 3, 160}, {4, 64, 4096}, {1, 512, 4096},
                                        // more activation rows than a tensor-core GEMM tile holds
                                        {150, 80, 256},
                                        // three 16-row AMX chunks and a remainder over 32 blocks
                                        {50, 64, 1024}};
    const MatmulShape odd_shapes[] = {{1, 33, 7}, {3, 17, 33}, {17, 65, 100}, {64, 3, 1}, {2, 127, 129}, {9, 1, 257}, {11, 5, 63}};
    for (uint32_t dtype : kWeightDtypes) {
        std::vector<MatmulShape> shapes(std::begin(block_shapes), std::end(block_shapes));
        if (!sdk::is_block_dtype(dtype)) shapes.insert(shapes.end(), std::begin(odd_shapes), std::end(odd_shapes));
        for (size_t i = 0; i < shapes.size(); ++i) add_matmul(out, dtype, shapes[i], B, i % 2 == 1);
        // Weights given as compile-time constants: providers may repack these
        // (the CPU provider's packed kernels), so they need their own cases.
        if (sdk::is_block_dtype(dtype))
            for (const MatmulShape& sh : block_shapes) add_matmul(out, dtype, sh, C, false);
        if (dtype != HETERO_DTYPE_F16 && dtype != HETERO_DTYPE_BF16) add_batch_sizes(out, dtype);
        add_rows_operands(out, dtype);
    }
}

// Bound and constant weights of each shape; a constant copy only of every
// third shape below `all_const_from`, of every shape from it on, and no bound
// copy of those.
template <size_t N>
void add_weight_kinds(std::vector<Case>& out, uint32_t dtype, const MatmulShape (&shapes)[N], size_t all_const_from) {
    for (size_t i = 0; i < N; ++i)
        for (uint32_t kind : {B, C}) {
            if (kind == C && i % 3 != 0 && i < all_const_from) continue;
            if (kind == B && i >= all_const_from) continue;
            add_matmul(out, dtype, shapes[i], kind, i % 2 == 1);
        }
}

// K-quant weights (GGUF super-blocks of 256): widths are multiples of 256, so
// these have their own shapes; weights as bound tensors and as constants.
void kquant_cases(std::vector<Case>& out) {
    const uint32_t kquants[] = {HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q5_K, HETERO_DTYPE_Q6_K, HETERO_DTYPE_Q2_K, HETERO_DTYPE_Q3_K};
    const MatmulShape shapes[] = {{1, 1, 256},   {1, 33, 512},   {3, 17, 256},  {17, 65, 768},  {64, 127, 256}, {1, 257, 2048},
                                  {5, 63, 1024}, {3, 3, 4096},   {1, 129, 4096}, {17, 31, 1280}, {64, 33, 512},  {2, 7, 5120},
                                  // constant weights of whole 16-row groups, decode-sized batches (packed layouts)
                                  {2, 48, 512},  {1, 40, 256},   {3, 20, 768},  {1, 64, 1024},
                                  // constant weights only: three 16-row AMX chunks and a remainder
                                  {50, 32, 1024}};
    const EmbeddingShape tables[] = {{1, 256, 1}, {7, 512, 3}, {100, 768, 17}, {33, 4096, 5}, {257, 256, 64}};
    for (uint32_t dtype : kquants) {
        add_weight_kinds(out, dtype, shapes, 16);
        for (const EmbeddingShape& e : tables) add_embedding(out, dtype, e, B);
    }
}

// The 32-element block types of ABI 1.2 (Q4_1, Q5_0, Q5_1, IQ4_NL) and
// E0M4 (1.3): the block-type matmul shapes, every batch size to 17,
// constant weights, "(rows)" operands, embedding lookups.
void block32_cases(std::vector<Case>& out) {
    const uint32_t types[] = {HETERO_DTYPE_Q4_1, HETERO_DTYPE_Q5_0, HETERO_DTYPE_Q5_1, HETERO_DTYPE_IQ4_NL, HETERO_DTYPE_E0M4};
    const MatmulShape shapes[] = {{1, 33, 64},    {1, 1, 32},   {1, 7, 96},    {2, 17, 160}, {3, 65, 256},  {7, 100, 32},
                                  {17, 129, 64},  {64, 127, 96}, {1, 257, 2048}, {5, 63, 2048}, {16, 128, 256}, {13, 3, 160},
                                  {4, 64, 4096},  {1, 512, 4096}, {65, 9, 320}};
    const EmbeddingShape tables[] = {{1, 32, 1}, {7, 64, 3}, {100, 96, 17}, {257, 160, 64}, {33, 2048, 5}};
    for (uint32_t dtype : types) {
        add_weight_kinds(out, dtype, shapes, std::size(shapes));
        add_batch_sizes(out, dtype);
        add_rows_operands(out, dtype);
        for (const EmbeddingShape& e : tables) add_embedding(out, dtype, e, B);
    }
}

void rmsnorm_cases(std::vector<Case>& out) {
    struct Shape { int64_t n, d; };
    const Shape shapes[] = {{1, 1}, {1, 7}, {3, 32}, {17, 33}, {5, 100}, {2, 257}, {4, 2048}, {64, 63}, {1, 4096}};
    for (const Shape& sh : shapes)
        for (float eps : {1e-5f, 1e-6f}) {
            CaseBuilder b("rmsnorm/f32/n" + s(sh.n) + "_d" + s(sh.d) + (eps == 1e-5f ? "_eps1e-5" : "_eps1e-6"));
            const int32_t x = b.tensor("x", F32, B, {sh.n, sh.d}, uniform(-3, 3));
            const int32_t w = b.tensor("weight", F32, B, {sh.d}, uniform(-1.5, 1.5));
            b.node(HETERO_OP_RMSNORM, {x, w}, b.output("out", F32, {sh.n, sh.d})).fparams[0] = eps;
            out.push_back(b.done());
        }
    CaseBuilder b("rmsnorm/f32/n3_h4_d17_3d");
    const int32_t x = b.tensor("x", F32, B, {3, 4, 17});
    const int32_t w = b.tensor("weight", F32, B, {17});
    b.node(HETERO_OP_RMSNORM, {x, w}, b.output("out", F32, {3, 4, 17})).fparams[0] = 1e-5f;
    out.push_back(b.done());
}

void rope_cases(std::vector<Case>& out) {
    struct Rows { int64_t n, h; };
    const Rows rows[] = {{1, 1}, {5, 4}, {17, 3}};
    for (int64_t hd : {8, 16, 64, 128})
        for (int mode : {HETERO_ROPE_ADJACENT, HETERO_ROPE_HALVES})
            for (int64_t rot : {int64_t(0), hd / 2, int64_t(2)})
                for (const Rows& r : rows) {
                    if (rot == 2 && hd != 16) continue;  // the smallest partial rotation, once per mode
                    const float base = mode == HETERO_ROPE_ADJACENT ? 10000.f : 1000000.f;
                    const std::string name = "rope/" + std::string(mode == HETERO_ROPE_ADJACENT ? "adjacent" : "halves") + "/n" + s(r.n) +
                                             "_h" + s(r.h) + "_hd" + s(hd) + "_rot" + s(rot ? rot : hd) + (base == 10000.f ? "_base1e4" : "_base1e6");
                    CaseBuilder b(name);
                    Rng rng(b.get().seed);
                    const int32_t x = b.tensor("x", F32, B, {r.n, r.h, hd});
                    const int32_t pos = b.tensor("positions", I32, B, {r.n}, values(distinct_positions(rng, r.n, 4096)));
                    hetero_node& node = b.node(HETERO_OP_ROPE, {x, pos}, b.output("out", F32, {r.n, r.h, hd}));
                    node.fparams[0] = base;
                    node.iparams[0] = mode;
                    node.iparams[1] = rot;
                    out.push_back(b.done());
                }
}

void attention_cases(std::vector<Case>& out) {
    struct Heads { int64_t h, kv; };
    const Heads heads[] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {8, 2}, {4, 4}};
    const int64_t caches[] = {1, 17, 65, 257};
    int variant = 0;
    for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
        for (int64_t hd : {8, 16, 64, 128})
            for (const Heads& hh : heads)
                for (const char* scenario : {"decode", "prefill", "scattered"}) {
                    const int64_t c = caches[size_t(variant++) % 4];
                    const std::string sc = scenario;
                    int64_t n = sc == "decode" ? 1 : std::min<int64_t>(c, sc == "prefill" ? 7 : 5);
                    CaseBuilder b("attention/" + dt(dtype) + "/n" + s(n) + "_h" + s(hh.h) + "_kv" + s(hh.kv) + "_hd" + s(hd) + "_c" + s(c) + "_" + sc);
                    Rng rng(b.get().seed);
                    std::vector<int32_t> pos;
                    if (sc == "decode") pos = {int32_t(c - 1 - rng.below((c + 1) / 2))};
                    else if (sc == "prefill") pos = contiguous_positions(rng.below(c - n + 1), n);
                    else pos = distinct_positions(rng, n, c);
                    const int32_t q = b.tensor("q", F32, B, {n, hh.h, hd}, uniform(-2, 2));
                    const int32_t k = b.tensor("k_cache", dtype, B, {c, hh.kv, hd}, uniform(-2, 2));
                    const int32_t v = b.tensor("v_cache", dtype, B, {c, hh.kv, hd});
                    const int32_t p = b.tensor("positions", I32, B, {n}, values(pos));
                    b.node(HETERO_OP_ATTENTION, {q, k, v, p}, b.output("out", F32, {n, hh.h, hd})).fparams[0] = float(1.0 / std::sqrt(double(hd)));
                    out.push_back(b.done());
                }
}

// Long prefills: many query rows per head, where providers switch to tiled
// kernels (row counts around and across 32-row tiles, causal masks that cut
// tiles part way). Also GQA groups of 1 to 40 heads, head dims that are odd
// or above a tiled kernel's limit, and positions that are not consecutive:
// distinct in random order, or repeated.
void attention_long_cases(std::vector<Case>& out) {
    enum class Positions { Prefill, Scattered, Repeated };
    struct Long { int64_t n, c, h, kv, hd; Positions positions; };
    constexpr Positions P = Positions::Prefill, S = Positions::Scattered, R = Positions::Repeated;
    const Long cases[] = {{8, 8, 2, 1, 8, P},      {9, 40, 4, 2, 64, P},    {32, 32, 2, 2, 64, P},    {33, 70, 3, 1, 16, P},
                          {64, 64, 4, 1, 64, P},   {100, 300, 2, 1, 48, P}, {70, 257, 4, 4, 80, P},   {40, 129, 8, 2, 64, S},
                          {17, 17, 1, 1, 128, P},  {200, 600, 4, 1, 64, P}, {130, 130, 2, 2, 32, P},  {16, 16, 2, 1, 24, P},
                          {48, 96, 8, 1, 64, P},   {20, 60, 16, 2, 128, S}, {37, 90, 3, 3, 100, P},   {29, 50, 6, 2, 33, S},
                          {40, 70, 8, 1, 64, R},   {18, 300, 40, 1, 72, P}, {24, 40, 2, 1, 160, P}};
    const char* names[] = {"_long_prefill", "_long_scattered", "_long_repeated"};
    for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
        for (const Long& l : cases) {
            CaseBuilder b("attention/" + dt(dtype) + "/n" + s(l.n) + "_h" + s(l.h) + "_kv" + s(l.kv) + "_hd" + s(l.hd) + "_c" + s(l.c) +
                          names[int(l.positions)]);
            Rng rng(b.get().seed);
            std::vector<int32_t> pos;
            switch (l.positions) {
                case Positions::Prefill: pos = contiguous_positions(l.c - l.n, l.n); break;
                case Positions::Scattered: pos = distinct_positions(rng, l.n, l.c); break;
                case Positions::Repeated:
                    // Each value comes up several times; even rows reach four
                    // times further than odd ones, so neighbouring rows differ a lot.
                    for (int64_t i = 0; i < l.n; ++i) pos.push_back(int32_t(rng.below(l.c / 4) * (i % 2 ? 1 : 4)));
                    break;
            }
            const int32_t q = b.tensor("q", F32, B, {l.n, l.h, l.hd}, uniform(-2, 2));
            const int32_t k = b.tensor("k_cache", dtype, B, {l.c, l.kv, l.hd}, uniform(-2, 2));
            const int32_t v = b.tensor("v_cache", dtype, B, {l.c, l.kv, l.hd});
            const int32_t p = b.tensor("positions", I32, B, {l.n}, values(pos));
            b.node(HETERO_OP_ATTENTION, {q, k, v, p}, b.output("out", F32, {l.n, l.h, l.hd})).fparams[0] = float(1.0 / std::sqrt(double(l.hd)));
            out.push_back(b.done());
        }
}

// Prefill over f16 caches at the head dims models have beside 64 and 128,
// and between them (odd ones too): GPU kernels built for a few head dims
// that pad the others (OpenCL's tensor-core attention: 32, 64, 96, 128 and
// 256) must zero the padding and write only the real columns, also where
// rows are not 16-byte aligned (head dims not multiples of 8). MHA and GQA;
// 16 to 48 query rows (tensor-core kernels take 16 and more), caches ending
// in a partial key tile; positions consecutive up to the cache's end, or
// with the cache rows after them NaN (the tail), or scattered. Windows and
// soft-caps (ATTENTION_EXT) at some.
void attention_head_dim_cases(std::vector<Case>& out) {
    enum class Positions { Prefill, Tail, Scattered };
    struct Dims { int64_t n, c, h, kv, hd; Positions positions; int64_t window = 0; float cap = 0.f; };
    constexpr Positions P = Positions::Prefill, T = Positions::Tail, S = Positions::Scattered;
    const Dims cases[] = {{16, 16, 2, 2, 32, P},  {40, 100, 4, 1, 32, T}, {20, 45, 2, 1, 36, P},   {24, 60, 2, 2, 48, S},
                          {33, 80, 4, 2, 48, P},  {18, 40, 2, 2, 58, T},  {16, 40, 2, 2, 72, T},   {40, 90, 6, 2, 72, P},
                          {17, 17, 2, 2, 80, P},  {48, 130, 4, 1, 80, T}, {20, 70, 2, 2, 96, S},   {36, 36, 8, 2, 96, P},
                          {16, 50, 3, 3, 112, P}, {30, 100, 4, 1, 112, T}, {16, 33, 2, 2, 128, T}, {16, 40, 2, 2, 160, P},
                          {24, 60, 4, 1, 160, T}, {16, 20, 2, 2, 256, P}, {33, 50, 4, 2, 256, T},  {17, 30, 2, 1, 250, S},
                          // ATTENTION_EXT
                          {20, 45, 2, 1, 36, P, 1, 5.f}, {24, 60, 2, 2, 48, T, 4096, 5.f}, {40, 90, 4, 2, 80, P, 8, 0.f},
                          {30, 100, 4, 1, 112, S, 37, 0.f}, {24, 60, 4, 1, 160, P, 0, 5.f}, {33, 50, 4, 2, 256, T, 20, 5.f}};
    const char* names[] = {"_prefill", "_poisoned_tail", "_scattered"};
    for (const Dims& d : cases) {
        const bool ext = d.window > 0 || d.cap > 0.f;
        const int64_t first = d.positions == T ? (d.c - d.n) / 2 : d.c - d.n;
        CaseBuilder b(std::string(ext ? "attention_ext" : "attention") + "/f16/n" + s(d.n) + "_h" + s(d.h) + "_kv" + s(d.kv) + "_hd" +
                      s(d.hd) + "_c" + s(d.c) + (ext ? "_w" + s(d.window) + (d.cap > 0.f ? "_cap5" : "") : "") +
                      (d.positions == T ? "_at" + s(first) : "") + "_head_dim" + names[int(d.positions)]);
        Rng rng(b.get().seed);
        Fill cache = uniform(-2, 2);
        if (d.positions == T) cache.poison_from_row = first + d.n;
        const std::vector<int32_t> pos = d.positions == S ? distinct_positions(rng, d.n, d.c) : contiguous_positions(first, d.n);
        const int32_t q = b.tensor("q", F32, B, {d.n, d.h, d.hd}, uniform(-2, 2));
        const int32_t k = b.tensor("k_cache", HETERO_DTYPE_F16, B, {d.c, d.kv, d.hd}, cache);
        const int32_t v = b.tensor("v_cache", HETERO_DTYPE_F16, B, {d.c, d.kv, d.hd}, cache);
        const int32_t p = b.tensor("positions", I32, B, {d.n}, values(pos));
        hetero_node& node = b.node(ext ? HETERO_OP_ATTENTION_EXT : HETERO_OP_ATTENTION, {q, k, v, p}, b.output("out", F32, {d.n, d.h, d.hd}));
        node.fparams[0] = float(1.0 / std::sqrt(double(d.hd)));
        if (ext) {
            node.fparams[1] = d.cap;
            node.iparams[0] = d.window;
        }
        out.push_back(b.done());
    }
}

// Cache rows past every query's position hold NaN: the contract lets a
// query read rows 0..position only, and a cache fresh from an allocation
// (or reused memory) holds anything there. A kernel whose tile reaches past
// the last position must mask those rows out, not multiply them by zero.
void attention_poisoned_tail_cases(std::vector<Case>& out) {
    struct Tail { int64_t n, first, c, h, kv, hd; };
    const Tail cases[] = {{1, 0, 64, 4, 1, 64},    {1, 15, 64, 8, 2, 64},  {1, 40, 257, 32, 4, 64}, {16, 0, 64, 32, 4, 64},
                          {16, 0, 2048, 32, 4, 64}, {7, 3, 40, 8, 8, 128}, {33, 0, 100, 4, 1, 64},  {64, 10, 300, 8, 2, 128},
                          {5, 0, 33, 2, 2, 16},     {128, 0, 256, 4, 1, 64}};
    for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
        for (const Tail& t : cases) {
            CaseBuilder b("attention/" + dt(dtype) + "/n" + s(t.n) + "_h" + s(t.h) + "_kv" + s(t.kv) + "_hd" + s(t.hd) + "_c" + s(t.c) +
                          "_at" + s(t.first) + "_poisoned_tail");
            Fill cache = uniform(-2, 2);
            cache.poison_from_row = t.first + t.n;
            const int32_t q = b.tensor("q", F32, B, {t.n, t.h, t.hd}, uniform(-2, 2));
            const int32_t k = b.tensor("k_cache", dtype, B, {t.c, t.kv, t.hd}, cache);
            const int32_t v = b.tensor("v_cache", dtype, B, {t.c, t.kv, t.hd}, cache);
            const int32_t p = b.tensor("positions", I32, B, {t.n}, values(contiguous_positions(t.first, t.n)));
            b.node(HETERO_OP_ATTENTION, {q, k, v, p}, b.output("out", F32, {t.n, t.h, t.hd})).fparams[0] = float(1.0 / std::sqrt(double(t.hd)));
            out.push_back(b.done());
        }
}

void elementwise_cases(std::vector<Case>& out) {
    add_gated_cases(out, "swiglu", HETERO_OP_SWIGLU);
    for (uint32_t op : {HETERO_OP_ADD, HETERO_OP_MUL})
        for (const RowShape& sh : kElementwiseShapes)
            for (bool bcast : {false, true}) {
                CaseBuilder b(std::string(op == HETERO_OP_ADD ? "add" : "mul") + "/f32/n" + s(sh.n) + "_d" + s(sh.d) + (bcast ? "_bcast" : ""));
                const int32_t a = b.tensor("a", F32, B, {sh.n, sh.d}, uniform(-4, 4));
                const int32_t bb = bcast ? b.tensor("b", F32, B, {sh.d}, uniform(-4, 4)) : b.tensor("b", F32, B, {sh.n, sh.d}, uniform(-4, 4));
                b.node(op, {a, bb}, b.output("out", F32, {sh.n, sh.d}));
                out.push_back(b.done());
            }
    for (uint32_t op : {HETERO_OP_ADD, HETERO_OP_MUL}) {
        CaseBuilder b(std::string(op == HETERO_OP_ADD ? "add" : "mul") + "/f32/n3_h4_d17_3d_bcast");
        const int32_t a = b.tensor("a", F32, B, {3, 4, 17});
        const int32_t bb = b.tensor("b", F32, B, {17});
        b.node(op, {a, bb}, b.output("out", F32, {3, 4, 17}));
        out.push_back(b.done());
    }
}

void softmax_cases(std::vector<Case>& out) {
    const RowShape shapes[] = {{1, 1}, {1, 3}, {7, 17}, {3, 100}, {2, 257}, {1, 4096}, {64, 65}};
    for (const RowShape& sh : shapes)
        for (float scale : {0.f, 0.125f}) {
            CaseBuilder b("softmax/f32/n" + s(sh.n) + "_d" + s(sh.d) + (scale == 0.f ? "_scale1" : "_scale0.125"));
            const int32_t x = b.tensor("x", F32, B, {sh.n, sh.d}, uniform(-8, 8));
            b.node(HETERO_OP_SOFTMAX, {x}, b.output("out", F32, {sh.n, sh.d})).fparams[0] = scale;
            out.push_back(b.done());
        }
    // exp(x) overflows f32 here: only a max-subtracting softmax gets it right.
    CaseBuilder b("softmax/f32/n3_d100_large_values");
    const int32_t x = b.tensor("x", F32, B, {3, 100}, uniform(80, 120));
    b.node(HETERO_OP_SOFTMAX, {x}, b.output("out", F32, {3, 100}));
    out.push_back(b.done());
}

void convert_cases(std::vector<Case>& out) {
    const std::vector<std::vector<int64_t>> block_shapes = {{1, 32}, {3, 64}, {17, 96}, {7, 2048}, {2, 4, 32}};
    const std::vector<std::vector<int64_t>> odd_shapes = {{3, 7}, {5, 33}, {1, 1}, {65, 100}};
    auto shape_name = [](const std::vector<int64_t>& d) {
        std::string n;
        for (size_t i = 0; i < d.size(); ++i) {
            if (i) n += 'x';
            n += s(d[i]);
        }
        return n;
    };
    for (uint32_t other : {HETERO_DTYPE_F16, HETERO_DTYPE_BF16, HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0}) {
        std::vector<std::vector<int64_t>> shapes = block_shapes;
        if (!sdk::is_block_dtype(other)) shapes.insert(shapes.end(), odd_shapes.begin(), odd_shapes.end());
        auto add = [&](const std::vector<int64_t>& dims, uint32_t from, uint32_t to, uint32_t kind) {
            CaseBuilder b("convert/" + dt(from) + "_to_" + dt(to) + "/" + shape_name(dims) + (kind == C ? "_const" : ""));
            const int32_t x = b.tensor("x", from, kind, dims, uniform(-4, 4));
            b.node(HETERO_OP_CONVERT, {x}, b.output("out", to, dims));
            out.push_back(b.done());
        };
        for (const auto& dims : shapes)
            for (bool to_other : {true, false}) add(dims, to_other ? F32 : other, to_other ? other : F32, B);
        // Dequantizing constant weights (kept in a provider's own layout, maybe).
        if (sdk::is_block_dtype(other))
            for (const auto& dims : shapes) add(dims, other, F32, C);
    }
    // The weight types only ever read: dequantizing, bound and constant.
    const std::vector<std::vector<int64_t>> super_shapes = {{1, 256}, {3, 512}, {2, 2, 256}};
    for (uint32_t from : {HETERO_DTYPE_Q4_1, HETERO_DTYPE_Q5_0, HETERO_DTYPE_Q5_1, HETERO_DTYPE_IQ4_NL, HETERO_DTYPE_Q2_K, HETERO_DTYPE_Q3_K,
                          HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q5_K, HETERO_DTYPE_Q6_K, HETERO_DTYPE_E0M4})
        for (const auto& dims : sdk::is_kquant_dtype(from) ? super_shapes : block_shapes)
            for (uint32_t kind : {B, C}) {
                CaseBuilder b("convert/" + dt(from) + "_to_f32/" + shape_name(dims) + (kind == C ? "_const" : ""));
                const int32_t x = b.tensor("x", from, kind, dims, uniform(-4, 4));
                b.node(HETERO_OP_CONVERT, {x}, b.output("out", F32, dims));
                out.push_back(b.done());
            }
}

void store_rows_cases(std::vector<Case>& out) {
    struct Shape { int64_t c, kv, hd, n; };
    const Shape shapes[] = {{1, 1, 8, 1}, {17, 2, 16, 5}, {65, 4, 64, 17}, {257, 1, 128, 3}, {8, 1, 33, 8}, {100, 2, 7, 64}};
    for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16}) {
        for (const Shape& sh : shapes) {
            CaseBuilder b("store_rows/" + dt(dtype) + "/c" + s(sh.c) + "_kv" + s(sh.kv) + "_hd" + s(sh.hd) + "_n" + s(sh.n));
            Rng rng(b.get().seed);
            const int32_t src = b.tensor("src", F32, B, {sh.n, sh.kv, sh.hd}, uniform(-3, 3));
            const int32_t pos = b.tensor("positions", I32, B, {sh.n}, values(distinct_positions(rng, sh.n, sh.c)));
            // The cache starts with other rows' data, which must survive.
            const int32_t cache = b.tensor("cache", dtype, B, {sh.c, sh.kv, sh.hd}, uniform(-1, 1));
            b.node(HETERO_OP_STORE_ROWS, {src, pos}, cache);
            out.push_back(b.done());
        }
        CaseBuilder b("store_rows/" + dt(dtype) + "/c33_d100_2d_n7");
        Rng rng(b.get().seed);
        const int32_t src = b.tensor("src", F32, B, {7, 100});
        const int32_t pos = b.tensor("positions", I32, B, {7}, values(distinct_positions(rng, 7, 33)));
        const int32_t cache = b.tensor("cache", dtype, B, {33, 100});
        b.node(HETERO_OP_STORE_ROWS, {src, pos}, cache);
        b.get().packed = true;
        out.push_back(b.done());
    }
}

}  // namespace

void add_gated_cases(std::vector<Case>& out, const char* name, uint32_t op) {
    for (const RowShape& sh : kElementwiseShapes) {
        CaseBuilder b(std::string(name) + "/f32/n" + s(sh.n) + "_d" + s(sh.d));
        const int32_t g = b.tensor("gate", F32, B, {sh.n, sh.d}, uniform(-6, 6));
        const int32_t u = b.tensor("up", F32, B, {sh.n, sh.d}, uniform(-2, 2));
        b.node(op, {g, u}, b.output("out", F32, {sh.n, sh.d}));
        out.push_back(b.done());
    }
}

void add_op_cases(std::vector<Case>& out) {
    add_groups(out, {embedding_cases, matmul_cases, kquant_cases, block32_cases, rmsnorm_cases, rope_cases, attention_cases,
                     attention_long_cases, attention_head_dim_cases, attention_poisoned_tail_cases, elementwise_cases,
                     softmax_cases, convert_cases, store_rows_cases});
}

}  // namespace hetero::conformance
