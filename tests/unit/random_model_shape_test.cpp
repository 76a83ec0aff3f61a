// gen-model at any shape: a head size apart from n_embd / n_head reaches the
// file (attention.key_length) and a plain llama model of that shape computes
// on the cpu provider what a naive f32 forward does; K-quant rows of other
// widths fall back as llama-quantize's do; bad shapes are refused by name.
#include <hetero/error.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/sdk/quant.hpp>

#include "build_tree_registry.hpp"
#include "f32_copy_checks.hpp"

#include <gtest/gtest.h>

#include "test_data.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace hetero {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return test::temp_path("shape_" + name).string(); }

// 6 heads of 32 over an embedding of 96: Q and attn_output are 192 wide.
RandomModelShape wide_heads() {
    RandomModelShape s = random_model_preset("tiny");
    s.n_embd = 96;
    s.n_ff = 224;
    s.n_head = 6;
    s.n_head_kv = 2;
    s.head_dim = 32;
    s.n_vocab = 300;
    return s;
}

using Vec = std::vector<float>;

const float* f32_of(const WeightView& w) { return reinterpret_cast<const float*>(w.data); }

// y = W x for an f32 weight [rows, cols].
Vec matvec(const WeightView& w, const Vec& x) {
    Vec y(size_t(w.shape[0]), 0.f);
    for (int64_t r = 0; r < w.shape[0]; ++r) {
        double acc = 0.0;
        for (int64_t c = 0; c < w.shape[1]; ++c) acc += double(f32_of(w)[r * w.shape[1] + c]) * double(x[size_t(c)]);
        y[size_t(r)] = float(acc);
    }
    return y;
}

Vec rmsnorm(const Vec& x, const WeightView& w, float eps) {
    double ss = 0.0;
    for (float v : x) ss += double(v) * double(v);
    const double inv = 1.0 / std::sqrt(ss / double(x.size()) + double(eps));
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = float(double(x[i]) * inv * double(f32_of(w)[i]));
    return y;
}

// Llama's RoPE: adjacent pairs of every head rotated by pos * base^(-2p/hd).
void rope(Vec& x, int64_t heads, int64_t hd, int64_t pos, double base) {
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t p = 0; p < hd / 2; ++p) {
            const double a = double(pos) * std::pow(base, -2.0 * double(p) / double(hd));
            float& x0 = x[size_t(h * hd + 2 * p)];
            float& x1 = x[size_t(h * hd + 2 * p + 1)];
            const double v0 = x0, v1 = x1;
            x0 = float(v0 * std::cos(a) - v1 * std::sin(a));
            x1 = float(v0 * std::sin(a) + v1 * std::cos(a));
        }
}

// Causal grouped-query attention of token i over tokens 0..i.
Vec attend(const std::vector<Vec>& q, const std::vector<Vec>& k, const std::vector<Vec>& v, size_t i, const LlamaHParams& hp) {
    const int64_t hd = hp.head_dim, group = hp.n_head / hp.n_head_kv;
    Vec out(size_t(hp.n_head * hd), 0.f);
    for (int64_t h = 0; h < hp.n_head; ++h) {
        const int64_t kvh = h / group;
        std::vector<double> s(i + 1);
        for (size_t j = 0; j <= i; ++j) {
            double dot = 0.0;
            for (int64_t e = 0; e < hd; ++e) dot += double(q[i][size_t(h * hd + e)]) * double(k[j][size_t(kvh * hd + e)]);
            s[j] = dot / std::sqrt(double(hd));
        }
        const double mx = *std::max_element(s.begin(), s.end());
        double sum = 0.0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (size_t j = 0; j <= i; ++j)
            for (int64_t e = 0; e < hd; ++e) out[size_t(h * hd + e)] += float(s[j] / sum * double(v[j][size_t(kvh * hd + e)]));
    }
    return out;
}

void add_to(Vec& x, const Vec& d) {
    for (size_t i = 0; i < x.size(); ++i) x[i] += d[i];
}

// A plain llama forward in doubles, straight from the weights: the last token's logits.
Vec naive_logits(const ModelFile& m, const std::vector<int32_t>& tokens) {
    const LlamaHParams& hp = m.hparams;
    const float eps = hp.norm_eps;
    std::vector<Vec> x;
    for (int32_t t : tokens) {
        const float* row = f32_of(m.weight("token_embd.weight")) + int64_t(t) * hp.n_embd;
        x.emplace_back(row, row + hp.n_embd);
    }
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        std::vector<Vec> q, k, v;
        for (size_t i = 0; i < x.size(); ++i) {
            const Vec h = rmsnorm(x[i], m.weight(b + "attn_norm.weight"), eps);
            q.push_back(matvec(m.weight(b + "attn_q.weight"), h));
            k.push_back(matvec(m.weight(b + "attn_k.weight"), h));
            v.push_back(matvec(m.weight(b + "attn_v.weight"), h));
            rope(q.back(), hp.n_head, hp.head_dim, int64_t(i), hp.rope_freq_base);
            rope(k.back(), hp.n_head_kv, hp.head_dim, int64_t(i), hp.rope_freq_base);
        }
        for (size_t i = 0; i < x.size(); ++i) {
            add_to(x[i], matvec(m.weight(b + "attn_output.weight"), attend(q, k, v, i, hp)));
            const Vec h = rmsnorm(x[i], m.weight(b + "ffn_norm.weight"), eps);
            Vec g = matvec(m.weight(b + "ffn_gate.weight"), h);
            const Vec u = matvec(m.weight(b + "ffn_up.weight"), h);
            for (size_t e = 0; e < g.size(); ++e) g[e] = float(double(g[e]) / (1.0 + std::exp(-double(g[e]))) * double(u[e]));
            add_to(x[i], matvec(m.weight(b + "ffn_down.weight"), g));
        }
    }
    return matvec(m.weight("output.weight"), rmsnorm(x.back(), m.weight("output_norm.weight"), eps));
}

TEST(RandomModelShape, HeadSizeApartFromDimOverHeadsIsWrittenAndLoaded) {
    const std::string path = temp_path("wide.gguf");
    write_random_model(path, wide_heads(), HETERO_DTYPE_F32, 7);
    {
        const GgufFile f = GgufFile::open(path);
        EXPECT_EQ(f.get_uint("llama.attention.key_length").value_or(0), 32u);
        EXPECT_EQ(f.get_uint("llama.attention.value_length").value_or(0), 32u);
    }
    const ModelFile m = load_model(path);
    EXPECT_EQ(m.hparams.head_dim, 32);
    EXPECT_EQ(m.hparams.rope_dims, 32);
    EXPECT_EQ(m.weight("blk.0.attn_q.weight").shape, (std::vector<int64_t>{192, 96}));
    EXPECT_EQ(m.weight("blk.0.attn_k.weight").shape, (std::vector<int64_t>{64, 96}));
    EXPECT_EQ(m.weight("blk.1.attn_output.weight").shape, (std::vector<int64_t>{96, 192}));
    fs::remove(path);
    // A head size of n_embd / n_head writes no key_length: the historical file.
    const std::string plain = temp_path("plain.gguf");
    write_random_model(plain, random_model_preset("tiny"), HETERO_DTYPE_F32, 7);
    EXPECT_FALSE(GgufFile::open(plain).has("llama.attention.key_length"));
    fs::remove(plain);
}

TEST(RandomModelShape, HeadSizeApartFromDimOverHeadsRunsAsANaiveForward) {
    Provider* cpu = test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    const std::string path = temp_path("naive.gguf");
    write_random_model(path, wide_heads(), HETERO_DTYPE_F32, 5);
    const ModelFile m = load_model(path);
    ASSERT_EQ(m.hparams.rope_mode, int(HETERO_ROPE_ADJACENT));
    const std::vector<int32_t> tokens = {1, 280, 17, 42, 99};
    const Vec want = naive_logits(m, tokens);
    std::vector<DeviceRef> devs = {{cpu, 0, cpu->device_props(0)}};
    Session s(m, plan_even_layers(int(m.hparams.n_layer), devs));
    const Vec got = s.forward(tokens, 0);
    ASSERT_EQ(got.size(), want.size());
    const test::LogitGap gap = test::logit_gap(got, want);
    EXPECT_GT(gap.largest, 0.0);
    EXPECT_LT(gap.worst, 1e-4 * gap.largest + 1e-5) << "largest logit difference " << gap.worst << " of " << gap.largest;
    fs::remove(path);
}

// llama-quantize's fallback for K-quant rows that are not a multiple of 256.
TEST(RandomModelShape, KQuantRowsOfOtherWidthsFallBackAsLlamaQuantize) {
    EXPECT_EQ(random_model_matrix_dtype(HETERO_DTYPE_Q4_K, 512), uint32_t(HETERO_DTYPE_Q4_K));
    EXPECT_EQ(random_model_matrix_dtype(HETERO_DTYPE_Q2_K, 96), uint32_t(HETERO_DTYPE_IQ4_NL));
    EXPECT_EQ(random_model_matrix_dtype(HETERO_DTYPE_Q3_K, 96), uint32_t(HETERO_DTYPE_IQ4_NL));
    EXPECT_EQ(random_model_matrix_dtype(HETERO_DTYPE_Q4_K, 96), uint32_t(HETERO_DTYPE_Q5_0));
    EXPECT_EQ(random_model_matrix_dtype(HETERO_DTYPE_Q5_K, 96), uint32_t(HETERO_DTYPE_Q5_1));
    EXPECT_EQ(random_model_matrix_dtype(HETERO_DTYPE_Q6_K, 96), uint32_t(HETERO_DTYPE_Q8_0));
    EXPECT_EQ(random_model_matrix_dtype(HETERO_DTYPE_Q4_K, 200), uint32_t(HETERO_DTYPE_F16));  // not whole 32-blocks either
    EXPECT_EQ(random_model_matrix_dtype(HETERO_DTYPE_Q4_0, 96), uint32_t(HETERO_DTYPE_Q4_0));
    RandomModelShape s = wide_heads();
    s.n_ff = 200;
    s.head_dim = 0;  // 6 heads of 16
    EXPECT_EQ(random_model_fallbacks(s, HETERO_DTYPE_Q4_K).size(), 2u);
    EXPECT_TRUE(random_model_fallbacks(random_model_preset("tiny-k"), HETERO_DTYPE_Q4_K).empty());
    const std::string path = temp_path("fallback.gguf");
    write_random_model(path, s, HETERO_DTYPE_Q4_K, 3);
    const ModelFile m = load_model(path);
    EXPECT_EQ(m.weight("token_embd.weight").dtype, uint32_t(HETERO_DTYPE_Q5_0));
    EXPECT_EQ(m.weight("blk.0.attn_q.weight").dtype, uint32_t(HETERO_DTYPE_Q5_0));
    EXPECT_EQ(m.weight("blk.1.ffn_down.weight").dtype, uint32_t(HETERO_DTYPE_F16));
    fs::remove(path);
}

std::string refusal(const RandomModelShape& s, uint32_t dtype = HETERO_DTYPE_F32) {
    try {
        check_random_model_shape(s, dtype);
    } catch (const Error& e) {
        return e.what();
    }
    return "accepted";
}

TEST(RandomModelShape, BadShapesAreRefusedByName) {
    const RandomModelShape ok = wide_heads();
    EXPECT_EQ(refusal(ok, HETERO_DTYPE_Q4_0), "accepted");
    auto with = [&](auto change) {
        RandomModelShape s = ok;
        change(s);
        return s;
    };
    EXPECT_NE(refusal(with([](auto& s) { s.n_head_kv = 4; })).find("4 kv heads do not divide the 6 heads"), std::string::npos);
    EXPECT_NE(refusal(with([](auto& s) { s.n_layer = 0; })).find("layer count 0 is out of range"), std::string::npos);
    const RandomModelShape five = with([](auto& s) {
        s.head_dim = 0;
        s.n_head = 5;
    });
    EXPECT_NE(refusal(five).find("5 heads do not divide the embedding width 96"), std::string::npos);
    EXPECT_NE(refusal(with([](auto& s) { s.head_dim = 31; })).find("head size 31 is odd"), std::string::npos);
    EXPECT_NE(refusal(with([](auto& s) { s.n_vocab = 258; })).find("smaller than the synthetic tokenizer's 259"), std::string::npos);
    EXPECT_NE(refusal(with([](auto& s) { s.n_embd = 1 << 20; })).find("embedding width 1048576 is out of range"), std::string::npos);
    EXPECT_NE(refusal(with([](auto& s) { s.n_ff = 200; }), HETERO_DTYPE_Q8_0).find("rows of 200 values (the feed-forward width"),
              std::string::npos);
    EXPECT_EQ(refusal(with([](auto& s) { s.n_ff = 200; }), HETERO_DTYPE_Q4_K), "accepted");  // falls back instead
}

}  // namespace
}  // namespace hetero
