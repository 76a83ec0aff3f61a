#include "sampling_flags.hpp"

#include "common.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>

namespace hetero::cli {

std::pair<int32_t, float> parse_logit_bias(const std::string& text) {
    const auto invalid = [&](const std::string& why) {
        return CLI::ValidationError("--logit-bias", fmt::format("'{}': {} (give TOKEN_ID=BIAS, TOKEN_ID+BIAS or TOKEN_ID-BIAS, "
                                                                "e.g. 2=-100)", text, why));
    };
    size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0 || digits > 9 || digits == text.size()) throw invalid("no token id followed by =, + or -");
    const char sign = text[digits];
    if (sign != '=' && sign != '+' && sign != '-') throw invalid("no token id followed by =, + or -");
    const std::string number = text.substr(digits + 1);
    char* end = nullptr;
    errno = 0;
    const float value = std::strtof(number.c_str(), &end);
    if (number.empty() || *end != '\0' || errno != 0 || !std::isfinite(value)) throw invalid("the bias is not a number");
    const float bias = sign == '-' ? -value : value;
    if (!(bias >= -100.f && bias <= 100.f)) throw invalid("the bias must be in [-100, 100]");
    return {std::stoi(text.substr(0, digits)), bias};
}

void add_sampling_flags(CLI::App& cmd, SamplingFlags& f) {
    SamplerOptions& s = f.options;
    cmd.add_option("--temp", s.temperature, "temperature; 0 = greedy")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd.add_option("--top-k", s.top_k, "keep the K likeliest tokens; 0 = off")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd.add_option("--top-p", s.top_p, "keep the likeliest tokens up to this probability; 1 = off")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    cmd.add_option("--min-p", s.min_p, "drop tokens less likely than P times the likeliest; 0 = off")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    cmd.add_option("--repeat-penalty", s.repetition_penalty,
                   "divide the positive (multiply the negative) logits of recent tokens by this; 1 = off")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd.add_option("--repeat-last-n", s.repetition_window, "tokens of prompt and reply --repeat-penalty looks back over; -1 = all, 0 = none")
        ->check(CLI::Range(-1, INT32_MAX))
        ->capture_default_str();
    cmd.add_option("--presence-penalty", s.presence_penalty, "subtract this from the logit of every token already in the reply (-2 .. 2)")
        ->check(CLI::Range(-2.0, 2.0))
        ->capture_default_str();
    cmd.add_option("--frequency-penalty", s.frequency_penalty, "subtract this per time a token is already in the reply (-2 .. 2)")
        ->check(CLI::Range(-2.0, 2.0))
        ->capture_default_str();
    cmd.add_option_function<std::vector<std::string>>(
           "--logit-bias",
           [&s](const std::vector<std::string>& items) {
               for (const std::string& item : items) {
                   const auto [token, bias] = parse_logit_bias(item);
                   s.logit_bias[token] = bias;
               }
           },
           "add BIAS to token ID's logit: ID=BIAS, ID+BIAS or ID-BIAS, BIAS in -100 .. 100 (repeatable)")
        ->type_name("ID=BIAS");
    cmd.add_option_function<std::string>(
           "-s,--seed", [&f](const std::string& text) { f.seed = parse_seed(text, "--seed"); },
           "random seed (0 .. 2^64-1); default: a new one each run, printed on stderr")
        ->type_name("UINT64");
}

SamplerOptions sampler_options(const SamplingFlags& f, int64_t n_vocab) {
    SamplerOptions s = f.options;
    s.seed = f.seed ? *f.seed : (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    for (const auto& [token, bias] : s.logit_bias)
        if (token >= n_vocab)
            throw Error(fmt::format("--logit-bias names token {}, which is not in the model's vocabulary (token ids 0 .. {})", token, n_vocab - 1));
    return s;
}

}  // namespace hetero::cli
