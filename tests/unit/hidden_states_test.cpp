// Session::hidden_states (the graph that ends at the output norm) and the
// pooling of hetero/chat/embedding.hpp: the hidden states are what the
// output head multiplies into the logits, whatever the chunk size; they
// leave the sequence's KV cache as a forward does; pooling and normalising
// do what they say.
#include "test_data.hpp"

#include <hetero/chat/embedding.hpp>
#include <hetero/error.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/solver/planner.hpp>

#include "build_tree_registry.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>

namespace hetero {
namespace {

namespace fs = std::filesystem;

const std::vector<int32_t> kPrompt = {1, 403, 281, 30, 77, 9, 18, 250, 251, 252, 253, 254, 42};

struct Opened {
    OpenedModel m;
    Plan plan;
};

Opened open_on_cpu(const std::string& path) {
    Provider* cpu = test::build_tree_registry().find("cpu");
    if (!cpu) throw Error("no cpu provider in the build tree");
    OpenedModel m = open_model(path);
    Plan plan = plan_single_device(int(m.file.hparams.n_layer), {{cpu, 0, cpu->device_props(0)}}, 0);
    return {std::move(m), std::move(plan)};
}

// An f32 random llama (a classifier of its own) and an f32 gemma2 (tied, embeddings scaled, post-norms).
std::string random_f32(const std::string& arch) {
    const std::string path = test::temp_path("hidden_" + arch + ".gguf").string();
    if (!fs::exists(test::removed_at_exit(path))) {
        RandomModelShape shape = random_model_preset("tiny");
        shape.n_vocab = 300;
        write_random_model(path, shape, HETERO_DTYPE_F32, 5, arch);
    }
    return path;
}

SessionOptions options(int32_t max_batch, bool all_logits = false) {
    SessionOptions so;
    so.n_ctx = 64;
    so.n_seq = 2;
    so.max_batch = max_batch;
    so.all_logits = all_logits;
    return so;
}

class HiddenStates : public testing::TestWithParam<std::string> {};

// Every row's logits are its hidden state times the classifier (f32 files: no quantization in between).
TEST_P(HiddenStates, AreWhatTheHeadMultipliesIntoTheLogits) {
    Opened o = open_on_cpu(GetParam());
    const LlamaHParams& hp = o.m.file.hparams;
    if (hp.final_softcap > 0) GTEST_SKIP() << "soft-capped logits";
    const std::string classifier = o.m.file.has("output.weight") ? "output.weight" : "token_embd.weight";
    const WeightView& w = o.m.file.weight(classifier);
    if (w.dtype != HETERO_DTYPE_F32) GTEST_SKIP() << classifier << " is not f32";
    std::vector<int32_t> prompt = kPrompt;
    for (int32_t& t : prompt) t %= int32_t(hp.n_vocab);
    Session logits_session(o.m.file, o.plan, options(64, true));
    const std::vector<float> logits = logits_session.forward(prompt, 0);
    Session session(o.m.file, o.plan, options(64));
    const std::vector<float> hidden = session.hidden_states(1, prompt, 0);
    const size_t D = size_t(hp.n_embd), V = size_t(hp.n_vocab);
    ASSERT_EQ(hidden.size(), prompt.size() * D);
    const float* W = reinterpret_cast<const float*>(w.data);
    double worst = 0, scale = 0;
    for (size_t t = 0; t < prompt.size(); ++t)
        for (size_t v = 0; v < V; ++v) {
            double dot = 0;
            for (size_t i = 0; i < D; ++i) dot += double(hidden[t * D + i]) * double(W[v * D + i]);
            worst = std::max(worst, std::fabs(dot - double(logits[t * V + v])));
            scale = std::max(scale, std::fabs(double(logits[t * V + v])));
        }
    EXPECT_LE(worst, 1e-4 * std::max(1.0, scale)) << "largest logit " << scale;
}

// Chunks of 4 tokens give the rows one chunk of 13 gives.
TEST_P(HiddenStates, DoNotDependOnTheChunkSize) {
    Opened o = open_on_cpu(GetParam());
    std::vector<int32_t> prompt = kPrompt;
    for (int32_t& t : prompt) t %= int32_t(o.m.file.hparams.n_vocab);
    Session whole(o.m.file, o.plan, options(64));
    Session chunked(o.m.file, o.plan, options(4));
    const std::vector<float> a = whole.hidden_states(0, prompt, 0);
    const std::vector<float> b = chunked.hidden_states(0, prompt, 0);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4f) << "value " << i;
}

// The sequence's cache holds the tokens afterwards: a forward that goes on from them gives what it gives after a forward.
TEST_P(HiddenStates, FillTheSequencesCacheAsAForwardDoes) {
    Opened o = open_on_cpu(GetParam());
    std::vector<int32_t> prompt = kPrompt;
    for (int32_t& t : prompt) t %= int32_t(o.m.file.hparams.n_vocab);
    Session a(o.m.file, o.plan, options(64));
    a.forward_seq(1, prompt, 0);
    const std::vector<float> after_forward = a.forward_seq(1, {2}, int32_t(prompt.size()));
    Session b(o.m.file, o.plan, options(64));
    b.hidden_states(1, prompt, 0);
    const std::vector<float> after_hidden = b.forward_seq(1, {2}, int32_t(prompt.size()));
    EXPECT_EQ(after_forward, after_hidden);
    // Sequence 0 was not touched by either: both give its first token alike.
    EXPECT_EQ(a.forward_seq(0, {1}, 0), b.forward_seq(0, {1}, 0));
}

TEST_P(HiddenStates, RefuseWhatAForwardRefuses) {
    Opened o = open_on_cpu(GetParam());
    Session s(o.m.file, o.plan, options(64));
    EXPECT_THROW(s.hidden_states(2, {1}, 0), Error);            // no such sequence
    EXPECT_THROW(s.hidden_states(0, {}, 0), Error);             // no tokens
    EXPECT_THROW(s.hidden_states(0, {1}, 64), Error);           // past the context
    EXPECT_THROW(s.hidden_states(0, {int32_t(o.m.file.hparams.n_vocab)}, 0), Error);  // outside the vocabulary
}

INSTANTIATE_TEST_SUITE_P(Models, HiddenStates,
                         testing::Values(std::string(HETERO_SOURCE_DIR "/models/stories260K.gguf"), random_f32("llama"), random_f32("gemma2")),
                         [](const testing::TestParamInfo<std::string>& info) { return std::to_string(info.index); });

TEST(Embedding, EmbedTokensPoolsAndNormalises) {
    Opened o = open_on_cpu(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    Session s(o.m.file, o.plan, options(64));
    const std::vector<float> hidden = s.hidden_states(0, kPrompt, 0);
    const size_t D = size_t(o.m.file.hparams.n_embd);
    std::vector<float> mean = pool_hidden_states(hidden.data(), kPrompt.size(), D, Pooling::mean);
    l2_normalize(mean);
    const std::vector<float> v = embed_tokens(s, 1, kPrompt);
    ASSERT_EQ(v.size(), D);
    double sq = 0;
    for (size_t i = 0; i < D; ++i) {
        EXPECT_NEAR(v[i], mean[i], 1e-6f);
        sq += double(v[i]) * v[i];
    }
    EXPECT_NEAR(sq, 1.0, 1e-5);
    const std::vector<float> last = embed_tokens(s, 1, kPrompt, {Pooling::last, false});
    for (size_t i = 0; i < D; ++i) EXPECT_EQ(last[i], hidden[(kPrompt.size() - 1) * D + i]);
    EXPECT_THROW(embed_tokens(s, 1, {}), Error);
    EXPECT_THROW(embed_tokens(s, 1, std::vector<int32_t>(65, 1)), Error);  // longer than the context
}

TEST(Embedding, Pooling) {
    const float rows[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // three tokens of width 3
    EXPECT_EQ(pool_hidden_states(rows, 3, 3, Pooling::mean), (std::vector<float>{4, 5, 6}));
    EXPECT_EQ(pool_hidden_states(rows, 3, 3, Pooling::last), (std::vector<float>{7, 8, 9}));
    EXPECT_EQ(pool_hidden_states(rows, 3, 3, Pooling::first), (std::vector<float>{1, 2, 3}));
    EXPECT_THROW(pool_hidden_states(rows, 0, 3, Pooling::mean), Error);
    std::vector<float> v = {3, 4};
    l2_normalize(v);
    EXPECT_FLOAT_EQ(v[0], 0.6f);
    EXPECT_FLOAT_EQ(v[1], 0.8f);
    std::vector<float> zero = {0, 0};
    l2_normalize(zero);
    EXPECT_EQ(zero, (std::vector<float>{0, 0}));
}

TEST(Embedding, PoolingNamesAndTheModelsKey) {
    EXPECT_EQ(pooling_from_name("mean"), Pooling::mean);
    EXPECT_EQ(pooling_from_name("last"), Pooling::last);
    EXPECT_EQ(pooling_from_name("cls"), Pooling::first);
    EXPECT_EQ(pooling_from_name("first"), Pooling::first);
    EXPECT_THROW(pooling_from_name("max"), Error);
    EXPECT_STREQ(pooling_name(Pooling::first), "cls");
    LlamaHParams hp;
    hp.arch = "llama";
    EXPECT_EQ(model_pooling(hp), Pooling::mean);  // no key
    hp.pooling_type = 0;
    EXPECT_EQ(model_pooling(hp), Pooling::mean);  // none: one vector is still asked for
    hp.pooling_type = 2;
    EXPECT_EQ(model_pooling(hp), Pooling::first);
    hp.pooling_type = 3;
    EXPECT_EQ(model_pooling(hp), Pooling::last);
    hp.pooling_type = 4;
    EXPECT_THROW(model_pooling(hp), Error);  // a reranker
}

}  // namespace
}  // namespace hetero
