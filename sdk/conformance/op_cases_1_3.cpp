// Single-op cases of the op ABI 1.3 added: attention of rows from several
// sequences over one stacked cache (a batched decode step of many streams).
#include "case_builder.hpp"
#include "case_lists.hpp"

#include <hetero/sdk/quant.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace hetero::conformance {
namespace {

constexpr uint32_t B = HETERO_TENSOR_BOUND;
constexpr uint32_t F32 = HETERO_DTYPE_F32, I32 = HETERO_DTYPE_I32;

std::string s(int64_t v) { return std::to_string(v); }

// S sequences of C rows each; N query rows, each of a sequence at a position:
// one row per sequence (a decode step), fewer rows than sequences (some
// streams idle), and several rows of one sequence.
void attention_seqs_cases(std::vector<Case>& out) {
    struct Shape { int64_t seqs, c, n, h, kv, hd; };
    const Shape shapes[] = {{2, 17, 2, 4, 1, 16}, {4, 65, 4, 8, 2, 64}, {8, 40, 5, 4, 4, 32},  {3, 33, 6, 6, 2, 80},
                            {5, 129, 5, 8, 8, 128}, {16, 24, 16, 2, 1, 64}, {2, 300, 1, 4, 2, 96}, {6, 50, 9, 12, 4, 256}};
    for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
        for (const Shape& sh : shapes)
            for (int variant = 0; variant < 3; ++variant) {  // plain, window 8, soft-cap 5
                const int64_t window = variant == 1 ? 8 : 0;
                const float cap = variant == 2 ? 5.f : 0.f;
                CaseBuilder b("attention_seqs/" + std::string(sdk::dtype_name(dtype)) + "/s" + s(sh.seqs) + "_c" + s(sh.c) + "_n" + s(sh.n) +
                              "_h" + s(sh.h) + "_kv" + s(sh.kv) + "_hd" + s(sh.hd) + (window ? "_w" + s(window) : "") + (cap > 0.f ? "_cap5" : ""));
                Rng rng(b.get().seed);
                // Row i's sequence: i while there are sequences, then random ones
                // (several rows of one sequence); positions anywhere in the
                // sequence, its first and last row included.
                std::vector<int32_t> rows;
                for (int64_t i = 0; i < sh.n; ++i) {
                    const int64_t seq = i < sh.seqs ? (i * 7 + 3) % sh.seqs : rng.below(sh.seqs);
                    const int64_t pos = i == 0 ? 0 : i == 1 ? sh.c - 1 : rng.below(sh.c);
                    rows.push_back(int32_t(seq * sh.c + pos));
                }
                const int32_t q = b.tensor("q", F32, B, {sh.n, sh.h, sh.hd}, uniform(-3, 3));
                const int32_t k = b.tensor("k_cache", dtype, B, {sh.seqs * sh.c, sh.kv, sh.hd}, uniform(-3, 3));
                const int32_t v = b.tensor("v_cache", dtype, B, {sh.seqs * sh.c, sh.kv, sh.hd});
                const int32_t p = b.tensor("cache_rows", I32, B, {sh.n}, values(rows));
                hetero_node& node = b.node(HETERO_OP_ATTENTION_SEQS, {q, k, v, p}, b.output("out", F32, {sh.n, sh.h, sh.hd}));
                node.fparams[0] = float(1.0 / std::sqrt(double(sh.hd)));
                node.fparams[1] = cap;
                node.iparams[0] = window;
                node.iparams[1] = sh.c;
                out.push_back(b.done());
            }
}

// A batched decode step's attention head over stacked caches, as a model
// graph has it: q and k rotated at each row's position, k and v stored at
// its cache row (sequence * C + position), then each row attending over its
// own sequence. The stores' rows are not the positions (a provider fusing
// the rotation with the stores must keep them apart). Rows past the
// sequences are a second token of a sequence, at the next position.
void stacked_rope_store_cases(std::vector<Case>& out) {
    constexpr uint32_t I = HETERO_TENSOR_INTERNAL;
    struct Shape { int64_t seqs, c, n, h, kv, hd; int mode; };
    const Shape shapes[] = {{4, 17, 4, 4, 2, 16, HETERO_ROPE_ADJACENT}, {8, 33, 5, 8, 2, 64, HETERO_ROPE_HALVES},
                            {3, 40, 6, 4, 1, 32, HETERO_ROPE_ADJACENT}, {16, 24, 16, 2, 1, 64, HETERO_ROPE_HALVES}};
    for (uint32_t cache : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
        for (const Shape& sh : shapes) {
            CaseBuilder b("graph/stacked_rope_store/" + std::string(sdk::dtype_name(cache)) + "/s" + s(sh.seqs) + "_c" + s(sh.c) + "_n" +
                          s(sh.n) + "_h" + s(sh.h) + "_kv" + s(sh.kv) + "_hd" + s(sh.hd));
            Rng rng(b.get().seed);
            std::vector<int32_t> positions, rows;
            for (int64_t i = 0; i < sh.n; ++i) {
                const int64_t seq = i % sh.seqs;
                const int64_t pos = i < sh.seqs ? rng.below(sh.c - 1) : positions[size_t(seq)] + 1;
                positions.push_back(int32_t(pos));
                rows.push_back(int32_t(seq * sh.c + pos));
            }
            const int32_t q = b.tensor("q", F32, B, {sh.n, sh.h, sh.hd}, uniform(-2, 2));
            const int32_t kn = b.tensor("k_new", F32, B, {sh.n, sh.kv, sh.hd}, uniform(-2, 2));
            const int32_t vn = b.tensor("v_new", F32, B, {sh.n, sh.kv, sh.hd});
            const int32_t pos = b.tensor("positions", I32, B, {sh.n}, values(positions));
            const int32_t cr = b.tensor("cache_rows", I32, B, {sh.n}, values(rows));
            const int32_t kc = b.tensor("k_cache", cache, B, {sh.seqs * sh.c, sh.kv, sh.hd}, uniform(-2, 2));
            const int32_t vc = b.tensor("v_cache", cache, B, {sh.seqs * sh.c, sh.kv, sh.hd});
            const int32_t qr = b.tensor("q_rope", F32, I, {sh.n, sh.h, sh.hd});
            const int32_t kr = b.tensor("k_rope", F32, I, {sh.n, sh.kv, sh.hd});
            for (auto [src, dst] : {std::pair{q, qr}, std::pair{kn, kr}}) {
                hetero_node& r = b.node(HETERO_OP_ROPE, {src, pos}, dst);
                r.fparams[0] = 10000.f;
                r.iparams[0] = sh.mode;
            }
            b.node(HETERO_OP_STORE_ROWS, {kr, cr}, kc);
            b.node(HETERO_OP_STORE_ROWS, {vn, cr}, vc);
            hetero_node& att = b.node(HETERO_OP_ATTENTION_SEQS, {qr, kc, vc, cr}, b.output("out", F32, {sh.n, sh.h, sh.hd}));
            att.fparams[0] = float(1.0 / std::sqrt(double(sh.hd)));
            att.iparams[1] = int32_t(sh.c);
            out.push_back(b.done());
        }
}

}  // namespace

void add_op_cases_1_3(std::vector<Case>& out) {
    attention_seqs_cases(out);
    stacked_rope_store_cases(out);
}

}  // namespace hetero::conformance
