// Picks the next token from logits. In this order:
//   1. the logits are adjusted: repetition penalty (tokens among the last
//      `repetition_window` of the context and reply), presence and frequency
//      penalties (tokens of the reply so far), then logit_bias;
//   2. temperature 0 takes the largest adjusted logit (greedy); otherwise
//      3. top-k keeps the k largest, 4. a softmax at the temperature,
//      5. top-p keeps the smallest set reaching that probability,
//      6. min-p drops tokens less likely than min_p times the likeliest,
//      and a token is drawn from what is left with a seeded generator.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <unordered_map>
#include <vector>

namespace hetero {

// Told of each sampled token and the logits it was sampled from (generate()
// and complete() say which tokens they report). The logits are the model's,
// before any penalty or bias.
using OnSample = std::function<void(const std::vector<float>& logits, int32_t token)>;

struct SamplerOptions {
    float temperature = 0.8f;  // 0 = greedy
    int32_t top_k = 40;        // 0 = whole vocabulary
    float top_p = 0.95f;       // 1 = off
    uint64_t seed = 0;
    float min_p = 0.f;  // 0 = off; in [0, 1]
    // llama.cpp's repeat penalty: a positive logit of a recent token is
    // divided by it, a negative one multiplied. 1 = off; > 0.
    float repetition_penalty = 1.f;
    // How far back the repetition penalty looks: the last N tokens of the
    // prompt and reply; -1 = all of them, 0 = none.
    int32_t repetition_window = 64;
    // OpenAI's penalties, over the reply's tokens so far: a token's logit
    // loses frequency_penalty per time it appeared and presence_penalty once
    // if it appeared at all. 0 = off; each in [-2, 2].
    float presence_penalty = 0.f;
    float frequency_penalty = 0.f;
    // Added to the logit of a token id; each in [-100, 100] (-100 in effect
    // bans a token, 100 all but forces it).
    std::map<int32_t, float> logit_bias = {};
};

// Throws hetero::Error naming a logit_bias token that is not in a vocabulary
// of `n_vocab` tokens.
void check_logit_bias(const SamplerOptions& options, int64_t n_vocab);

// A token and the probability the next draw gives it.
struct TokenChance {
    int32_t token;
    double p;
};

class Sampler {
public:
    // Throws hetero::Error for an option out of its range (the message names it).
    explicit Sampler(const SamplerOptions& options);

    // Tokens already in the context before the reply (the prompt): the
    // repetition penalty looks back over them too. Not counted by the
    // presence and frequency penalties, which are about the reply.
    void add_context(const std::vector<int32_t>& tokens);
    // Draws the next token and remembers it as part of the reply.
    int32_t sample(const std::vector<float>& logits);
    // What the next draw would choose from, most likely first, with
    // probabilities that sum to 1 (one token with p = 1 when greedy). Draws
    // nothing and remembers nothing.
    std::vector<TokenChance> distribution(const std::vector<float>& logits);

private:
    bool adjusts_logits() const;
    // The penalties and biases on logits[token] (candidates_ in token order).
    void adjust(std::vector<std::pair<float, int32_t>>& by_token) const;
    // Fills candidates_ with the kept tokens, most likely first, and their
    // unnormalised weights; returns how many are kept. Greedy: one, weight 1.
    size_t prepare(const std::vector<float>& logits);
    void remember(int32_t token, bool in_reply);

    SamplerOptions options_;
    std::mt19937_64 rng_;
    std::vector<std::pair<float, int32_t>> candidates_;
    // The repetition window, oldest first, and how often each token is in it.
    std::deque<int32_t> window_;
    std::unordered_map<int32_t, int32_t> window_counts_;
    // How often each token appeared in the reply (presence and frequency penalties).
    std::unordered_map<int32_t, int32_t> reply_counts_;
};

}  // namespace hetero
