// Greedy generation must reproduce llama2.c's reference token ids exactly, on
// every provider that loads, from the shipped GGUF, from the original
// checkpoint and from llama.cpp's own conversion.
#include <hetero/registry.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/open_model.hpp>

#include "build_tree_registry.hpp"
#include "error_message.hpp"
#include "test_data.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <cmath>
#include <cstring>
#include <limits>
#include <fstream>
#include <sstream>

namespace {

const std::string kModels = hetero::test::models_dir();

// llama2.c's greedy ids after BOS (tests/data/models/reference/NAME, 256 of them).
std::vector<int32_t> reference_ids(const std::string& name, std::string& problem) {
    return hetero::test::read_reference_ids(name, 256, problem);
}

struct Case {
    std::string provider;
    std::string model;      // path
    std::string tokenizer;  // for .bin
    hetero::CacheType cache = hetero::CacheType::automatic;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
    std::string m = std::filesystem::path(info.param.model).filename().string();
    for (char& c : m)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
    return info.param.provider + "_" + m + (info.param.cache == hetero::CacheType::f16 ? "_f16_cache" : "");
}

hetero::Registry& registry() { return hetero::test::build_tree_registry(); }

std::vector<Case> cases() {
    std::vector<Case> out;
    const std::vector<std::pair<std::string, std::string>> models = {
        {HETERO_SOURCE_DIR "/models/stories260K.gguf", ""},
        {kModels + "/stories260K.bin", kModels + "/tok512.bin"},
        {kModels + "/stories260K-llamacpp.gguf", ""},
    };
    for (const char* p : {"cpu", "opencl", "vulkan"}) {
        for (const auto& [m, t] : models) out.push_back({p, m, t});
        // f16 caches (the default on GPUs) keep the reference tokens on this model.
        out.push_back({p, models[0].first, "", hetero::CacheType::f16});
    }
    return out;
}

class GreedyReference : public testing::TestWithParam<Case> {};

std::vector<int32_t> run_greedy(const Case& c, const std::string& prompt, int32_t positions) {
    hetero::Provider* p = registry().find(c.provider);
    if (!p || p->device_count() == 0) return {};
    hetero::OpenedModel m = hetero::open_model(c.model, c.tokenizer);
    std::vector<hetero::DeviceRef> devs = {{p, 0, p->device_props(0)}};
    hetero::SessionOptions so;
    so.cache_type = c.cache;
    hetero::Session session(m.file, hetero::plan_even_layers(int(m.file.hparams.n_layer), devs), so);
    hetero::Sampler greedy(hetero::SamplerOptions{0.f, 0, 1.f, 0});
    // llama2.c's -n counts every position including the prompt.
    const auto prompt_ids = m.tokenizer->encode(prompt, true);
    auto r = hetero::generate(session, *m.tokenizer, prompt, positions - int32_t(prompt_ids.size()) + 1, greedy);
    return std::vector<int32_t>(r.tokens.begin() + 1, r.tokens.end());  // after BOS
}

void expect_reference(const Case& c, const std::string& reference, const std::string& prompt) {
    std::string problem;
    const auto expected = reference_ids(reference, problem);
    ASSERT_TRUE(problem.empty()) << problem;
    if (!registry().find(c.provider)) GTEST_SKIP() << c.provider << " provider not available";
    const auto got = run_greedy(c, prompt, 256);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "first difference at token " << i;
}

TEST_P(GreedyReference, OnceUponATime) { expect_reference(GetParam(), "greedy-once-upon-a-time.ids", "Once upon a time"); }

TEST_P(GreedyReference, EmptyPrompt) { expect_reference(GetParam(), "greedy-empty-prompt.ids", ""); }

INSTANTIATE_TEST_SUITE_P(Models, GreedyReference, testing::ValuesIn(cases()), case_name);

TEST(Generation, CacheTypeNames) {
    EXPECT_EQ(hetero::cache_type_from_name("auto"), hetero::CacheType::automatic);
    EXPECT_EQ(hetero::cache_type_from_name("f16"), hetero::CacheType::f16);
    EXPECT_EQ(hetero::cache_type_from_name("f32"), hetero::CacheType::f32);
    const std::string refusal = hetero::test::error_message([] { hetero::cache_type_from_name("q8_0"); });
    EXPECT_NE(refusal.find("q8_0"), std::string::npos) << "q8_0 as a cache type: " << refusal;
}

TEST(Generation, SplitAcrossDevicesMatchesSingleDevice) {
    // The same provider listed twice still exercises the hand-over between segments.
    hetero::Provider* p = registry().find("cpu");
    ASSERT_NE(p, nullptr);
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    std::vector<hetero::DeviceRef> devs;
    for (hetero::Provider* q : registry().providers())
        for (uint32_t d = 0; d < q->device_count(); ++d)
            if (q->name() != "npu_emu") devs.push_back({q, d, q->device_props(d)});  // it runs matmuls, not whole layers
    devs.push_back({p, 0, p->device_props(0)});
    hetero::Session split(m.file, hetero::plan_even_layers(int(m.file.hparams.n_layer), devs));
    ASSERT_GE(split.plan().used_devices().size(), 2u);
    hetero::Sampler greedy(hetero::SamplerOptions{0.f, 0, 1.f, 0});
    std::string problem;
    const auto expected = reference_ids("greedy-once-upon-a-time.ids", problem);
    ASSERT_TRUE(problem.empty()) << problem;
    auto r = hetero::generate(split, *m.tokenizer, "Once upon a time", 60, greedy);
    // BOS, the 4 prompt tokens and 60 generated ones.
    ASSERT_EQ(r.tokens.size(), 65u);
    for (size_t i = 1; i < r.tokens.size(); ++i) ASSERT_EQ(r.tokens[i], expected[i - 1]) << "token " << i;
}

TEST(Generation, ContextOverflowIsAnError) {
    hetero::Provider* p = registry().find("cpu");
    ASSERT_NE(p, nullptr);
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    std::vector<hetero::DeviceRef> devs = {{p, 0, p->device_props(0)}};
    hetero::SessionOptions so;
    so.n_ctx = 8;
    hetero::Session s(m.file, hetero::plan_even_layers(int(m.file.hparams.n_layer), devs), so);
    EXPECT_THROW(s.forward(std::vector<int32_t>(9, 1), 0), hetero::Error);
    EXPECT_THROW(s.forward({1}, 8), hetero::Error);
    EXPECT_THROW(s.forward({100000}, 0), hetero::Error);
    EXPECT_NO_THROW(s.forward({1, 2, 3}, 0));
}

TEST(Generation, NonFiniteLogitsAreAnError) {
    // A matrix value the load-time sample missed: the first forward reports it.
    hetero::Provider* p = registry().find("cpu");
    ASSERT_NE(p, nullptr);
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    hetero::WeightView& w = m.file.weights.at("blk.2.ffn_up.weight");
    ASSERT_EQ(w.dtype, HETERO_DTYPE_F32);
    std::vector<float> poisoned(w.bytes / 4);
    std::memcpy(poisoned.data(), w.data, w.bytes);
    for (float& v : poisoned) v = std::numeric_limits<float>::infinity();
    w.data = reinterpret_cast<const uint8_t*>(poisoned.data());
    std::vector<hetero::DeviceRef> devs = {{p, 0, p->device_props(0)}};
    hetero::Session s(m.file, hetero::plan_even_layers(int(m.file.hparams.n_layer), devs));
    const std::string refusal = hetero::test::error_message([&] { s.forward({1, 400, 401}, 0); });
    EXPECT_NE(refusal.find("non-finite logits"), std::string::npos) << "forward with infinite weights: " << refusal;
}

TEST(Generation, AllLogitsMatchTokenByToken) {
    // The rows of one chunk (perplexity's view) are the logits one-token steps give.
    hetero::Provider* p = registry().find("cpu");
    ASSERT_NE(p, nullptr);
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    std::vector<hetero::DeviceRef> devs = {{p, 0, p->device_props(0)}};
    const hetero::Plan plan = hetero::plan_even_layers(int(m.file.hparams.n_layer), devs);
    hetero::SessionOptions all;
    all.all_logits = true;
    all.cache_type = hetero::CacheType::f32;
    hetero::Session chunk(m.file, plan, all);
    const std::vector<int32_t> tokens = m.tokenizer->encode("Once upon a time, there was a cat", true);
    const std::vector<float> rows = chunk.forward(tokens, 0);
    const size_t V = size_t(m.file.hparams.n_vocab);
    ASSERT_EQ(rows.size(), tokens.size() * V);
    hetero::SessionOptions one;
    one.cache_type = hetero::CacheType::f32;
    hetero::Session step(m.file, plan, one);
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::vector<float>& l = step.forward({tokens[i]}, int32_t(i));
        for (size_t v = 0; v < V; ++v) ASSERT_NEAR(rows[i * V + v], l[v], 1e-3f * (1.f + std::fabs(l[v]))) << "row " << i << " token " << v;
    }
}

TEST(Sampler, SeededSamplingIsReproducibleAndRespectsTopK) {
    std::vector<float> logits = {0.1f, 2.0f, 1.5f, -1.0f, 0.3f};
    hetero::Sampler a(hetero::SamplerOptions{1.0f, 2, 1.0f, 42}), b(hetero::SamplerOptions{1.0f, 2, 1.0f, 42});
    for (int i = 0; i < 100; ++i) {
        const int32_t x = a.sample(logits);
        EXPECT_EQ(x, b.sample(logits));
        EXPECT_TRUE(x == 1 || x == 2) << x;
    }
    hetero::Sampler greedy(hetero::SamplerOptions{0.f, 0, 1.f, 0});
    EXPECT_EQ(greedy.sample(logits), 1);
    hetero::Sampler nucleus(hetero::SamplerOptions{1.0f, 0, 0.01f, 7});
    for (int i = 0; i < 20; ++i) EXPECT_EQ(nucleus.sample(logits), 1);
    EXPECT_THROW(hetero::Sampler(hetero::SamplerOptions{-1.f, 0, 1.f, 0}), hetero::Error);
}

}  // namespace
