// The reference ops on small cases worked out by hand.
#include "reference_ops.hpp"

#include <hetero/sdk/graph_parts.hpp>
#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

using hetero::sdk::Error;
using hetero::sdk::make_node;

hetero_tensor_desc desc(uint32_t dtype, std::vector<int64_t> shape, uint32_t kind = HETERO_TENSOR_BOUND) {
    return hetero::sdk::make_desc(dtype, kind, shape);
}

template <class T>
uint8_t* bytes(std::vector<T>& v) {
    return reinterpret_cast<uint8_t*>(v.data());
}

TEST(ReferenceOps, MatmulWithBias) {
    std::vector<float> x{1, 2}, w{1, 0, 0, 1, 1, 1}, bias{0.5f, 0, -1}, out(3);
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {1, 2}), desc(HETERO_DTYPE_F32, {3, 2}), desc(HETERO_DTYPE_F32, {3}),
                                    desc(HETERO_DTYPE_F32, {1, 3})};
    uint8_t* data[] = {bytes(x), bytes(w), bytes(bias), bytes(out)};
    hetero::reference::run_node(make_node(HETERO_OP_MATMUL, {0, 1, 2}, 3), t, data);
    EXPECT_EQ(out, (std::vector<float>{1.5f, 2.f, 2.f}));
}

TEST(ReferenceOps, MatmulDequantizesQ8_0Weights) {
    std::vector<float> x(32, 1.f), wf(32);
    for (int i = 0; i < 32; ++i) wf[size_t(i)] = float(i - 16) / 16.f;
    std::vector<hetero::sdk::BlockQ8_0> w(1);
    hetero::sdk::quantize_block_q8_0(wf.data(), w[0]);
    std::vector<float> deq(32), out(1);
    hetero::sdk::dequantize_block_q8_0(w[0], deq.data());
    double want = 0;
    for (float v : deq) want += v;
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {1, 32}), desc(HETERO_DTYPE_Q8_0, {1, 32}), desc(HETERO_DTYPE_F32, {1, 1})};
    uint8_t* data[] = {bytes(x), bytes(w), bytes(out)};
    hetero::reference::run_node(make_node(HETERO_OP_MATMUL, {0, 1}, 2), t, data);
    EXPECT_FLOAT_EQ(out[0], float(want));
}

TEST(ReferenceOps, RmsnormOfThreeFour) {
    std::vector<float> x{3, 4}, w{1, 2}, out(2);
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {1, 2}), desc(HETERO_DTYPE_F32, {2}), desc(HETERO_DTYPE_F32, {1, 2})};
    uint8_t* data[] = {bytes(x), bytes(w), bytes(out)};
    hetero::reference::run_node(make_node(HETERO_OP_RMSNORM, {0, 1}, 2), t, data);
    const double rms = std::sqrt(12.5);
    EXPECT_FLOAT_EQ(out[0], float(3 / rms));
    EXPECT_FLOAT_EQ(out[1], float(8 / rms));
}

std::vector<float> rope(std::vector<float> x, int32_t pos, int mode, int64_t rot, float base) {
    std::vector<int32_t> p{pos};
    std::vector<float> out(x.size());
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {1, 1, int64_t(x.size())}), desc(HETERO_DTYPE_I32, {1}),
                                    desc(HETERO_DTYPE_F32, {1, 1, int64_t(x.size())})};
    uint8_t* data[] = {bytes(x), bytes(p), bytes(out)};
    hetero_node n = make_node(HETERO_OP_ROPE, {0, 1}, 2);
    n.fparams[0] = base;
    n.iparams[0] = mode;
    n.iparams[1] = rot;
    hetero::reference::run_node(n, t, data);
    return out;
}

TEST(ReferenceOps, RopeAdjacentRotatesNeighbourPairs) {
    // Pair 0 turns by pos * 1 rad, pair 1 by pos * 100^-1 = 0.01 rad.
    const auto out = rope({1, 0, 0, 1}, 1, HETERO_ROPE_ADJACENT, 0, 100.f * 100.f);
    EXPECT_NEAR(out[0], std::cos(1.0), 1e-7);
    EXPECT_NEAR(out[1], std::sin(1.0), 1e-7);
    EXPECT_NEAR(out[2], -std::sin(0.01), 1e-7);
    EXPECT_NEAR(out[3], std::cos(0.01), 1e-7);
}

TEST(ReferenceOps, RopeHalvesPairsAcrossTheHalves) {
    // Pairs (x0, x2) by pos rad and (x1, x3) by pos * base^-0.5 rad.
    const auto out = rope({1, 2, 0, 0}, 3, HETERO_ROPE_HALVES, 0, 10000.f);
    EXPECT_NEAR(out[0], std::cos(3.0), 1e-6);
    EXPECT_NEAR(out[2], std::sin(3.0), 1e-6);
    EXPECT_NEAR(out[1], 2 * std::cos(0.03), 1e-6);
    EXPECT_NEAR(out[3], 2 * std::sin(0.03), 1e-6);
}

TEST(ReferenceOps, RopePartialRotationLeavesTheTail) {
    const auto out = rope({1, 0, 5, 6}, 2, HETERO_ROPE_ADJACENT, 2, 10000.f);
    EXPECT_NEAR(out[0], std::cos(2.0), 1e-7);
    EXPECT_NEAR(out[1], std::sin(2.0), 1e-7);
    EXPECT_EQ(out[2], 5.f);
    EXPECT_EQ(out[3], 6.f);
}

TEST(ReferenceOps, RopeAtPositionZeroIsIdentity) {
    const std::vector<float> x{0.5f, -1.f, 2.f, 3.f, -4.f, 0.25f};
    EXPECT_EQ(rope(x, 0, HETERO_ROPE_HALVES, 0, 10000.f), x);
}

TEST(ReferenceOps, SoftmaxSumsToOneEvenWhereExpOverflows) {
    std::vector<float> x{100, 101, 102, 1000, 1000, 1000}, out(6);
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {2, 3}), desc(HETERO_DTYPE_F32, {2, 3})};
    uint8_t* data[] = {bytes(x), bytes(out)};
    hetero::reference::run_node(make_node(HETERO_OP_SOFTMAX, {0}, 1), t, data);
    EXPECT_NEAR(out[0] + out[1] + out[2], 1.0, 1e-6);
    EXPECT_NEAR(out[1] / out[0], std::exp(1.0), 1e-5);
    for (int i = 3; i < 6; ++i) EXPECT_NEAR(out[size_t(i)], 1.0 / 3, 1e-7);
}

TEST(ReferenceOps, SoftmaxScale) {
    std::vector<float> x{0, 2}, out(2);
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {1, 2}), desc(HETERO_DTYPE_F32, {1, 2})};
    uint8_t* data[] = {bytes(x), bytes(out)};
    hetero_node n = make_node(HETERO_OP_SOFTMAX, {0}, 1);
    n.fparams[0] = 0.5f;
    hetero::reference::run_node(n, t, data);
    EXPECT_NEAR(out[1] / out[0], std::exp(1.0), 1e-6);
}

std::vector<float> convert_round_trip(uint32_t dtype, const std::vector<float>& x) {
    std::vector<float> in = x, back(x.size());
    std::vector<uint8_t> mid(hetero::sdk::row_bytes(dtype, int64_t(x.size())));
    const int64_t n = int64_t(x.size());
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {1, n}), desc(dtype, {1, n}), desc(HETERO_DTYPE_F32, {1, n})};
    uint8_t* data[] = {bytes(in), mid.data(), bytes(back)};
    hetero::reference::run_node(make_node(HETERO_OP_CONVERT, {0}, 1), t, data);
    hetero::reference::run_node(make_node(HETERO_OP_CONVERT, {1}, 2), t, data);
    return back;
}

TEST(ReferenceOps, Q4_0RoundTripsValuesOnItsGrid) {
    // The largest magnitude is -1, so the step is 1/8 and every multiple of it in [-1, 7/8] survives.
    std::vector<float> x(32);
    for (int i = 0; i < 32; ++i) x[size_t(i)] = float((i * 7) % 16 - 8) / 8.f;
    EXPECT_EQ(convert_round_trip(HETERO_DTYPE_Q4_0, x), x);
}

TEST(ReferenceOps, Q8_0RoundTripWithinHalfAStep) {
    std::vector<float> x(64);
    for (int i = 0; i < 64; ++i) x[size_t(i)] = std::sin(float(i)) * 3.f;
    const auto back = convert_round_trip(HETERO_DTYPE_Q8_0, x);
    for (int b = 0; b < 2; ++b) {
        float amax = 0;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[size_t(b * 32 + i)]));
        for (int i = 0; i < 32; ++i) EXPECT_LE(std::fabs(back[size_t(b * 32 + i)] - x[size_t(b * 32 + i)]), amax / 127 * 0.51f);
    }
}

TEST(ReferenceOps, F16ConvertRoundsToNearestEven) {
    // 1 + 2^-11 is halfway between 1 and the next f16; ties go to the even 1.
    const auto back = convert_round_trip(HETERO_DTYPE_F16, {1.f + 0x1p-11f, 1.f + 3 * 0x1p-11f});
    EXPECT_EQ(back[0], 1.f);
    EXPECT_EQ(back[1], 1.f + 0x1p-9f);
}

struct AttentionCase {
    std::vector<float> q, k, v, out;
    std::vector<int32_t> pos;
    int64_t n, h, kv, hd, c;
    void run(float scale) {
        out.assign(size_t(n * h * hd), 0.f);
        const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {n, h, hd}), desc(HETERO_DTYPE_F32, {c, kv, hd}), desc(HETERO_DTYPE_F32, {c, kv, hd}),
                                        desc(HETERO_DTYPE_I32, {n}), desc(HETERO_DTYPE_F32, {n, h, hd})};
        uint8_t* data[] = {bytes(q), bytes(k), bytes(v), bytes(pos), bytes(out)};
        hetero_node nd = make_node(HETERO_OP_ATTENTION, {0, 1, 2, 3}, 4);
        nd.fparams[0] = scale;
        hetero::reference::run_node(nd, t, data);
    }
};

TEST(ReferenceOps, AttentionOverOnePositionReturnsThatValueRow) {
    AttentionCase a{{0.3f, -2.f}, {9, 9, 1, 1}, {5, -6, 7, 8}, {}, {0}, 1, 1, 1, 2, 2};
    a.run(0.7f);
    EXPECT_EQ(a.out, (std::vector<float>{5, -6}));  // row 1 lies past the position and is ignored
}

TEST(ReferenceOps, AttentionEqualScoresAverageAndGqaSharesKvHeads) {
    // Four query heads over two KV heads: heads 0,1 read KV head 0, heads 2,3 KV head 1.
    AttentionCase a;
    a.n = 1, a.h = 4, a.kv = 2, a.hd = 1, a.c = 2;
    a.q = {0, 0, 0, 0};  // equal scores: plain averages of the value rows
    a.k = {1, 2, 3, 4};
    a.v = {10, 100, 30, 300};  // row 0: kv0=10 kv1=100; row 1: kv0=30 kv1=300
    a.pos = {1};
    a.run(1.f);
    EXPECT_EQ(a.out, (std::vector<float>{20, 20, 200, 200}));
}

TEST(ReferenceOps, AttentionSoftmaxWeights) {
    AttentionCase a{{1.f}, {0.f, std::log(3.f)}, {0.f, 4.f}, {}, {1}, 1, 1, 1, 1, 2};
    a.run(1.f);  // weights 1/4 and 3/4
    EXPECT_NEAR(a.out[0], 3.f, 1e-6);
}

TEST(ReferenceOps, AttentionPositionOutsideCacheThrows) {
    AttentionCase a{{1.f}, {0.f, 1.f}, {0.f, 4.f}, {}, {2}, 1, 1, 1, 1, 2};
    EXPECT_THROW(a.run(1.f), Error);
    a.pos = {-1};
    EXPECT_THROW(a.run(1.f), Error);
}

TEST(ReferenceOps, SwigluAndBroadcastAddMul) {
    std::vector<float> g{0, 20, -20}, u{5, 2, 3}, out(3);
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {1, 3}), desc(HETERO_DTYPE_F32, {1, 3}), desc(HETERO_DTYPE_F32, {1, 3})};
    uint8_t* data[] = {bytes(g), bytes(u), bytes(out)};
    hetero::reference::run_node(make_node(HETERO_OP_SWIGLU, {0, 1}, 2), t, data);
    EXPECT_EQ(out[0], 0.f);
    EXPECT_NEAR(out[1], 40.f, 1e-5);
    EXPECT_NEAR(out[2], 0.f, 1e-6);

    std::vector<float> a{1, 2, 3, 4}, b{10, 20}, sum(4), prod(4);
    const hetero_tensor_desc tb[] = {desc(HETERO_DTYPE_F32, {2, 2}), desc(HETERO_DTYPE_F32, {2}), desc(HETERO_DTYPE_F32, {2, 2}),
                                     desc(HETERO_DTYPE_F32, {2, 2})};
    uint8_t* db[] = {bytes(a), bytes(b), bytes(sum), bytes(prod)};
    hetero::reference::run_node(make_node(HETERO_OP_ADD, {0, 1}, 2), tb, db);
    hetero::reference::run_node(make_node(HETERO_OP_MUL, {0, 1}, 3), tb, db);
    EXPECT_EQ(sum, (std::vector<float>{11, 22, 13, 24}));
    EXPECT_EQ(prod, (std::vector<float>{10, 40, 30, 80}));
}

TEST(ReferenceOps, EmbeddingLooksUpRowsAndRejectsBadIds) {
    std::vector<uint16_t> table{hetero::sdk::f32_to_f16(1), hetero::sdk::f32_to_f16(2), hetero::sdk::f32_to_f16(3),
                                hetero::sdk::f32_to_f16(4)};
    std::vector<int32_t> ids{1, 0, 1};
    std::vector<float> out(6);
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F16, {2, 2}), desc(HETERO_DTYPE_I32, {3}), desc(HETERO_DTYPE_F32, {3, 2})};
    uint8_t* data[] = {bytes(table), bytes(ids), bytes(out)};
    hetero::reference::run_node(make_node(HETERO_OP_EMBEDDING, {0, 1}, 2), t, data);
    EXPECT_EQ(out, (std::vector<float>{3, 4, 1, 2, 3, 4}));
    ids[2] = 2;
    EXPECT_THROW(hetero::reference::run_node(make_node(HETERO_OP_EMBEDDING, {0, 1}, 2), t, data), Error);
}

TEST(ReferenceOps, StoreRowsWritesOnlyItsRows) {
    std::vector<float> src{1, 2, 3, 4};
    std::vector<int32_t> pos{2, 0};
    std::vector<uint16_t> cache(6, hetero::sdk::f32_to_f16(9));
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {2, 2}), desc(HETERO_DTYPE_I32, {2}), desc(HETERO_DTYPE_F16, {3, 2})};
    uint8_t* data[] = {bytes(src), bytes(pos), bytes(cache)};
    hetero::reference::run_node(make_node(HETERO_OP_STORE_ROWS, {0, 1}, 2), t, data);
    std::vector<float> got;
    for (uint16_t h : cache) got.push_back(hetero::sdk::f16_to_f32(h));
    EXPECT_EQ(got, (std::vector<float>{3, 4, 9, 9, 1, 2}));
    pos = {3, 0};  // out of range: an error, and nothing written
    const auto before = cache;
    EXPECT_THROW(hetero::reference::run_node(make_node(HETERO_OP_STORE_ROWS, {0, 1}, 2), t, data), Error);
    EXPECT_EQ(cache, before);
}

TEST(ReferenceOps, RunGraphRejectsMalformedGraphs) {
    std::vector<float> a(4), out(4);
    const hetero_tensor_desc t[] = {desc(HETERO_DTYPE_F32, {2, 2}), desc(HETERO_DTYPE_F32, {2, 3})};
    const hetero_node n = make_node(HETERO_OP_SOFTMAX, {0}, 1);
    const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, 2, 1, t, &n};
    uint8_t* data[] = {bytes(a), bytes(out)};
    try {
        hetero::reference::run_graph(g, data);
        FAIL() << "a softmax whose output shape differs from its input was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.status(), HETERO_ERR_INVALID_ARGUMENT);
    }
}

TEST(ReferenceOps, RunGraphChainsThroughInternalTensors) {
    // a + b -> t (internal); t * b -> out
    std::vector<float> a{1, 2}, b{3, 4}, t(2), out(2);
    const hetero_tensor_desc d[] = {desc(HETERO_DTYPE_F32, {1, 2}), desc(HETERO_DTYPE_F32, {2}),
                                    desc(HETERO_DTYPE_F32, {1, 2}, HETERO_TENSOR_INTERNAL), desc(HETERO_DTYPE_F32, {1, 2})};
    const hetero_node nodes[] = {make_node(HETERO_OP_ADD, {0, 1}, 2), make_node(HETERO_OP_MUL, {2, 1}, 3)};
    const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, 4, 2, d, nodes};
    uint8_t* data[] = {bytes(a), bytes(b), bytes(t), bytes(out)};
    hetero::reference::run_graph(g, data);
    EXPECT_EQ(out, (std::vector<float>{12, 24}));
}

}  // namespace
