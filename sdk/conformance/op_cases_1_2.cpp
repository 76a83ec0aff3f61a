// Single-op cases of the ops ABI 1.2 added: scaled RoPE, attention with a
// sliding window and soft-capped scores, the GELU-gated FFN and soft-capping.
#include "case_builder.hpp"
#include "case_lists.hpp"

#include <hetero/sdk/quant.hpp>

#include <cmath>
#include <string>

namespace hetero::conformance {
namespace {

constexpr uint32_t B = HETERO_TENSOR_BOUND, C = HETERO_TENSOR_CONSTANT;
constexpr uint32_t F32 = HETERO_DTYPE_F32, I32 = HETERO_DTYPE_I32;

std::string s(int64_t v) { return std::to_string(v); }

void rope_scaled_cases(std::vector<Case>& out) {
    struct Rows { int64_t n, h; };
    const Rows rows[] = {{1, 1}, {5, 4}, {17, 3}};
    for (int64_t hd : {8, 16, 64, 128})
        for (int mode : {HETERO_ROPE_ADJACENT, HETERO_ROPE_HALVES})
            for (int variant = 0; variant < 3; ++variant)  // factors only, scale only, both
                for (const Rows& r : rows) {
                    const bool factors = variant != 1;
                    const float scale = variant == 0 ? 0.f : 0.25f;
                    const int64_t rot = variant == 2 ? hd / 2 : hd;
                    CaseBuilder b("rope_scaled/" + std::string(mode == HETERO_ROPE_ADJACENT ? "adjacent" : "halves") + "/n" + s(r.n) + "_h" +
                                  s(r.h) + "_hd" + s(hd) + "_rot" + s(rot) + (factors ? "_factors" : "") + (scale != 0.f ? "_scale0.25" : ""));
                    Rng rng(b.get().seed);
                    const int32_t x = b.tensor("x", F32, B, {r.n, r.h, hd});
                    const int32_t pos = b.tensor("positions", I32, B, {r.n}, values(distinct_positions(rng, r.n, 4096)));
                    std::vector<int32_t> ins = {x, pos};
                    if (factors) ins.push_back(b.tensor("freq_factors", F32, C, {rot / 2}, uniform(1, 8)));
                    hetero_node& node = b.node(HETERO_OP_ROPE_SCALED, ins, b.output("out", F32, {r.n, r.h, hd}));
                    node.fparams[0] = mode == HETERO_ROPE_ADJACENT ? 10000.f : 500000.f;
                    node.fparams[1] = scale;
                    node.iparams[0] = mode;
                    node.iparams[1] = rot;
                    out.push_back(b.done());
                }
}

void attention_ext_cases(std::vector<Case>& out) {
    struct Shape { int64_t n, c, h, kv, hd; };
    const Shape shapes[] = {{1, 17, 4, 1, 16}, {1, 65, 8, 2, 64}, {7, 40, 4, 2, 32}, {33, 70, 3, 1, 16}, {5, 257, 8, 8, 128}, {20, 20, 2, 1, 8},
                           // prefill at head dim 64: the GPU providers' tiled and tensor-core kernels
                           {40, 100, 4, 2, 64}};
    for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
        for (const Shape& sh : shapes)
            for (int64_t window : {int64_t(0), int64_t(1), int64_t(8), int64_t(4096)})
                for (float cap : {0.f, 5.f}) {
                    if (window == 0 && cap == 0.f) continue;  // plain attention
                    CaseBuilder b("attention_ext/" + std::string(sdk::dtype_name(dtype)) + "/n" + s(sh.n) + "_h" + s(sh.h) + "_kv" + s(sh.kv) +
                                  "_hd" + s(sh.hd) + "_c" + s(sh.c) + "_w" + s(window) + (cap > 0.f ? "_cap5" : ""));
                    Rng rng(b.get().seed);
                    const std::vector<int32_t> pos = sh.n == 1 ? std::vector<int32_t>{int32_t(sh.c - 1 - rng.below((sh.c + 1) / 2))}
                                                               : contiguous_positions(rng.below(sh.c - sh.n + 1), sh.n);
                    const int32_t q = b.tensor("q", F32, B, {sh.n, sh.h, sh.hd}, uniform(-3, 3));
                    const int32_t k = b.tensor("k_cache", dtype, B, {sh.c, sh.kv, sh.hd}, uniform(-3, 3));
                    const int32_t v = b.tensor("v_cache", dtype, B, {sh.c, sh.kv, sh.hd});
                    const int32_t p = b.tensor("positions", I32, B, {sh.n}, values(pos));
                    hetero_node& node = b.node(HETERO_OP_ATTENTION_EXT, {q, k, v, p}, b.output("out", F32, {sh.n, sh.h, sh.hd}));
                    node.fparams[0] = float(1.0 / std::sqrt(double(sh.hd)));
                    node.fparams[1] = cap;
                    node.iparams[0] = window;
                    out.push_back(b.done());
                }
}

void gelu_softcap_cases(std::vector<Case>& out) {
    add_gated_cases(out, "geglu", HETERO_OP_GEGLU);
    for (const RowShape& sh : kElementwiseShapes)
        for (float cap : {1.f, 30.f}) {
            CaseBuilder b("softcap/f32/n" + s(sh.n) + "_d" + s(sh.d) + "_c" + s(int64_t(cap)));
            const int32_t x = b.tensor("x", F32, B, {sh.n, sh.d}, uniform(-60, 60));
            b.node(HETERO_OP_SOFTCAP, {x}, b.output("out", F32, {sh.n, sh.d})).fparams[0] = cap;
            out.push_back(b.done());
        }
}

}  // namespace

void add_op_cases_1_2(std::vector<Case>& out) { add_groups(out, {rope_scaled_cases, attention_ext_cases, gelu_softcap_cases}); }

}  // namespace hetero::conformance
