// The sampler's steps on small logit vectors, each against the distribution
// worked out by hand: temperature, top-k, top-p, min-p, the repetition,
// presence and frequency penalties, logit_bias, their order, and seeds.
#include <hetero/error.hpp>
#include <hetero/runtime/sampler.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <limits>
#include <vector>

namespace {

using hetero::Sampler;
using hetero::SamplerOptions;
using hetero::TokenChance;

constexpr float kNever = -std::numeric_limits<float>::infinity();

SamplerOptions plain(float temperature) {
    SamplerOptions o;
    o.temperature = temperature;
    o.top_k = 0;
    o.top_p = 1.f;
    return o;
}

// `expected`: {token, probability} most likely first.
void expect_distribution(const std::vector<TokenChance>& got, const std::vector<TokenChance>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].token, expected[i].token) << "rank " << i;
        EXPECT_NEAR(got[i].p, expected[i].p, 1e-6) << "token " << expected[i].token;
    }
}

std::vector<float> logs(const std::vector<double>& p) {
    std::vector<float> out;
    for (double x : p) out.push_back(float(std::log(x)));
    return out;
}

TEST(SamplerSteps, TemperatureIsASoftmaxOfTheScaledLogits) {
    Sampler s(plain(1.f));
    expect_distribution(s.distribution(logs({0.2, 0.5, 0.3})), {{1, 0.5}, {2, 0.3}, {0, 0.2}});
    // At 0.5, probabilities square before they are normalised.
    Sampler cold(plain(0.5f));
    expect_distribution(cold.distribution(logs({0.2, 0.5, 0.3})), {{1, 0.25 / 0.38}, {2, 0.09 / 0.38}, {0, 0.04 / 0.38}});
    Sampler greedy(plain(0.f));
    expect_distribution(greedy.distribution(logs({0.2, 0.5, 0.3})), {{1, 1.0}});
}

TEST(SamplerSteps, TopKAndTopPCutAfterTheTemperature) {
    SamplerOptions k = plain(1.f);
    k.top_k = 2;
    Sampler top_k(k);
    expect_distribution(top_k.distribution(logs({0.2, 0.5, 0.3})), {{1, 0.5 / 0.8}, {2, 0.3 / 0.8}});
    // top-p 0.6 keeps two tokens at temperature 1 (0.5 < 0.6) but one at 0.5 (0.25 / 0.38 >= 0.6).
    SamplerOptions p = plain(1.f);
    p.top_p = 0.6f;
    Sampler warm(p);
    expect_distribution(warm.distribution(logs({0.2, 0.5, 0.3})), {{1, 0.5 / 0.8}, {2, 0.3 / 0.8}});
    p.temperature = 0.5f;
    Sampler cold(p);
    expect_distribution(cold.distribution(logs({0.2, 0.5, 0.3})), {{1, 1.0}});
}

TEST(SamplerSteps, MinPDropsTokensLessLikelyThanAShareOfTheLikeliest) {
    SamplerOptions o = plain(1.f);
    o.min_p = 0.4f;  // keeps p >= 0.2
    Sampler s(o);
    expect_distribution(s.distribution(logs({0.5, 0.25, 0.15, 0.1})), {{0, 0.5 / 0.75}, {1, 0.25 / 0.75}});
    o.min_p = 0.25f;  // keeps p >= 0.125
    Sampler wider(o);
    expect_distribution(wider.distribution(logs({0.5, 0.25, 0.15, 0.1})), {{0, 0.5 / 0.9}, {1, 0.25 / 0.9}, {2, 0.15 / 0.9}});
    // After the temperature: at 2 the weights are sqrt(p), 1 : 0.707 : 0.548 : 0.447 of the likeliest, so min-p 0.5 keeps three.
    o.temperature = 2.f;
    o.min_p = 0.5f;
    Sampler hot(o);
    const double w1 = std::sqrt(0.5), w2 = std::sqrt(0.3), sum = 1 + w1 + w2;
    expect_distribution(hot.distribution(logs({0.5, 0.25, 0.15, 0.1})), {{0, 1 / sum}, {1, w1 / sum}, {2, w2 / sum}});
    // 0 is off, 1 keeps only the likeliest.
    o.min_p = 1.f;
    Sampler only(o);
    expect_distribution(only.distribution(logs({0.5, 0.25, 0.15, 0.1})), {{0, 1.0}});
}

TEST(SamplerSteps, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogitsOfRecentTokens) {
    SamplerOptions o = plain(1.f);
    o.repetition_penalty = 2.f;
    o.repetition_window = -1;
    Sampler s(o);
    s.add_context({0, 1, 0});  // counted once each, however often they appear
    // {2, -1, 0.5, 1} -> {1, -2, 0.5, 1}
    const double e1 = std::exp(1.0), em2 = std::exp(-2.0), eh = std::exp(0.5), sum = 2 * e1 + em2 + eh;
    expect_distribution(s.distribution({2.f, -1.f, 0.5f, 1.f}), {{0, e1 / sum}, {3, e1 / sum}, {2, eh / sum}, {1, em2 / sum}});
    // Greedy follows the adjusted logits: 1 beats the penalised 2.
    o.temperature = 0.f;
    o.repetition_penalty = 4.f;
    Sampler greedy(o);
    greedy.add_context({0});
    EXPECT_EQ(greedy.sample({2.f, -1.f, 0.6f, 1.f}), 3);  // {0.5, -1, 0.6, 1}
    // Sampled tokens join the window: 3 is now penalised too (1 / 4 < 0.6).
    EXPECT_EQ(greedy.sample({2.f, -1.f, 0.6f, 1.f}), 2);
}

TEST(SamplerSteps, RepetitionWindowLooksBackOnlyThatFar) {
    SamplerOptions o = plain(0.f);
    o.repetition_penalty = 4.f;
    o.repetition_window = 1;
    Sampler last_one(o);
    last_one.add_context({0, 1});  // only 1 is within the window: {2, 0.25, 0.6}
    EXPECT_EQ(last_one.sample({2.f, 1.f, 0.6f}), 0);
    o.repetition_window = 2;
    Sampler last_two(o);
    last_two.add_context({0, 1});
    EXPECT_EQ(last_two.sample({2.f, 1.f, 0.6f}), 2);  // {0.5, 0.25, 0.6}
    o.repetition_window = 0;  // none
    Sampler none(o);
    none.add_context({0, 1});
    EXPECT_EQ(none.sample({2.f, 1.f, 0.6f}), 0);
}

TEST(SamplerSteps, PresenceAndFrequencyPenaltiesCountTheReplyOnly) {
    SamplerOptions o = plain(1.f);
    o.frequency_penalty = 0.5f;
    o.presence_penalty = 0.25f;
    Sampler s(o);
    s.add_context({2, 2, 2});  // the prompt: not counted
    // A reply of 0, 0, 1 (each draw certain).
    ASSERT_EQ(s.sample({0.f, kNever, kNever}), 0);
    ASSERT_EQ(s.sample({0.f, kNever, kNever}), 0);
    ASSERT_EQ(s.sample({kNever, 0.f, kNever}), 1);
    // {1, 1, 1} -> {1 - 2 * 0.5 - 0.25, 1 - 0.5 - 0.25, 1} = {-0.25, 0.25, 1}
    const double a = std::exp(-0.25), b = std::exp(0.25), c = std::exp(1.0), sum = a + b + c;
    expect_distribution(s.distribution({1.f, 1.f, 1.f}), {{2, c / sum}, {1, b / sum}, {0, a / sum}});
    // Negative penalties make repeats likelier.
    SamplerOptions eager = plain(1.f);
    eager.presence_penalty = -2.f;
    Sampler e(eager);
    ASSERT_EQ(e.sample({kNever, 0.f}), 1);
    const double up = std::exp(2.0);
    expect_distribution(e.distribution({0.f, 0.f}), {{1, up / (up + 1)}, {0, 1 / (up + 1)}});
}

TEST(SamplerSteps, LogitBiasIsAddedToTheLogits) {
    SamplerOptions o = plain(1.f);
    o.logit_bias = {{1, float(std::log(2.0))}};
    Sampler s(o);
    expect_distribution(s.distribution({0.f, 0.f, 0.f}), {{1, 0.5}, {0, 0.25}, {2, 0.25}});
    SamplerOptions g = plain(0.f);
    g.logit_bias = {{0, -100.f}, {2, 3.f}};
    Sampler greedy(g);
    EXPECT_EQ(greedy.sample({5.f, 4.f, 1.5f}), 2);  // {-95, 4, 4.5}
}

TEST(SamplerSteps, PenaltiesComeBeforeTheBias) {
    // Token 0: 2 halved by the repetition penalty, then +1: 2. (Bias first would give (2 + 1) / 2.)
    SamplerOptions o = plain(1.f);
    o.repetition_penalty = 2.f;
    o.logit_bias = {{0, 1.f}};
    Sampler s(o);
    s.add_context({0});
    const double e2 = std::exp(2.0);
    expect_distribution(s.distribution({2.f, 0.f}), {{0, e2 / (e2 + 1)}, {1, 1 / (e2 + 1)}});
}

TEST(SamplerSteps, LogitBiasIdsAreRangeChecked) {
    SamplerOptions o = plain(1.f);
    o.logit_bias = {{3, 1.f}};
    EXPECT_NO_THROW(hetero::check_logit_bias(o, 4));
    EXPECT_THROW(hetero::check_logit_bias(o, 3), hetero::Error);
    Sampler s(o);
    EXPECT_THROW(s.sample({0.f, 0.f, 0.f}), hetero::Error);
    o.logit_bias = {{-1, 1.f}};
    EXPECT_THROW(Sampler{o}, hetero::Error);
    o.logit_bias = {{0, 100.5f}};
    EXPECT_THROW(Sampler{o}, hetero::Error);
    o.logit_bias = {{0, std::nanf("")}};
    EXPECT_THROW(Sampler{o}, hetero::Error);
}

TEST(SamplerSteps, OptionsOutOfRangeAreRefused) {
    const auto refused = [](auto change) {
        SamplerOptions o;
        change(o);
        EXPECT_THROW(Sampler{o}, hetero::Error);
    };
    refused([](SamplerOptions& o) { o.min_p = 1.5f; });
    refused([](SamplerOptions& o) { o.min_p = -0.1f; });
    refused([](SamplerOptions& o) { o.repetition_penalty = 0.f; });
    refused([](SamplerOptions& o) { o.repetition_window = -2; });
    refused([](SamplerOptions& o) { o.presence_penalty = 2.5f; });
    refused([](SamplerOptions& o) { o.frequency_penalty = -3.f; });
    refused([](SamplerOptions& o) { o.temperature = std::numeric_limits<float>::infinity(); });
}

TEST(SamplerSteps, ASeedReproducesItsDrawsAndAnotherSeedDiffers) {
    const std::vector<float> flat(16, 0.f);
    const auto draws = [&](uint64_t seed) {
        SamplerOptions o = plain(1.f);
        o.seed = seed;
        o.min_p = 0.05f;
        o.presence_penalty = 0.1f;
        Sampler s(o);
        std::vector<int32_t> out;
        for (int i = 0; i < 64; ++i) out.push_back(s.sample(flat));
        return out;
    };
    EXPECT_EQ(draws(7), draws(7));
    EXPECT_NE(draws(7), draws(8));
}

}  // namespace

// Greedy picks the first of the largest logits, as std::max_element does,
// wherever the ties fall: in one lane of the vectorized scan, across lanes,
// in the tail past the last whole group, and in vectors shorter than a group.
TEST(SamplerSteps, GreedyTakesTheFirstLargestLogitWhereverTheTiesFall) {
    std::mt19937 rng(20261128);
    for (size_t n : {1, 2, 7, 8, 15, 16, 17, 23, 24, 31, 33, 100, 257, 32000, 32003}) {
        for (int trial = 0; trial < 40; ++trial) {
            std::vector<float> logits(n);
            // Few distinct values, so ties of the largest are common.
            std::uniform_int_distribution<int> level(-3, trial % 2 ? 3 : 40);
            for (float& x : logits) x = float(level(rng)) * 0.5f;
            const int32_t expected = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
            Sampler s(plain(0.f));
            ASSERT_EQ(s.sample(logits), expected) << "n " << n << ", trial " << trial;
        }
    }
}
