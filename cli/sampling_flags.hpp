// The sampling flags of `run` and `chat` (--temp, --top-k, --top-p, --min-p,
// the penalties, --logit-bias, -s/--seed) and the library's SamplerOptions
// made of them. Without --seed each run draws a seed of its own, which the
// command prints so that the run can be repeated.
#pragma once

#include <hetero/runtime/sampler.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <optional>

namespace hetero::cli {

struct SamplingFlags {
    SamplerOptions options;         // everything but the seed
    std::optional<uint64_t> seed;   // nullopt: a random one
};

void add_sampling_flags(CLI::App& cmd, SamplingFlags& flags);

// "ID=BIAS", "ID+BIAS" or "ID-BIAS" (llama.cpp's form) as token -> bias, the
// bias in [-100, 100]; throws CLI::ValidationError naming what is wrong.
std::pair<int32_t, float> parse_logit_bias(const std::string& text);

// The options with the seed given or a random one; --logit-bias token ids
// checked against the model's vocabulary (hetero::Error naming the token).
SamplerOptions sampler_options(const SamplingFlags& flags, int64_t n_vocab);

}  // namespace hetero::cli
