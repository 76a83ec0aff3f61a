// Picks the next token from logits: greedy at temperature 0, otherwise
// temperature, top-k and top-p (nucleus) sampling with a seeded generator.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace hetero {

// Told of each sampled token and the logits it was sampled from (generate()
// and complete() say which tokens they report).
using OnSample = std::function<void(const std::vector<float>& logits, int32_t token)>;

struct SamplerOptions {
    float temperature = 0.8f;  // 0 = greedy
    int32_t top_k = 40;        // 0 = whole vocabulary
    float top_p = 0.95f;       // 1 = off
    uint64_t seed = 0;
};

class Sampler {
public:
    explicit Sampler(const SamplerOptions& options);
    int32_t sample(const std::vector<float>& logits);

private:
    SamplerOptions options_;
    std::mt19937_64 rng_;
    std::vector<std::pair<float, int32_t>> candidates_;
};

}  // namespace hetero
