#include "api_params.hpp"

#include <hetero/engine/errors.hpp>

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace hetero::api {

namespace {

std::vector<std::string> split(const char* text, char sep) {
    std::vector<std::string> out;
    if (!text) return out;
    std::string item;
    for (const char* c = text;; ++c) {
        if (*c == sep || *c == '\0') {
            if (!item.empty()) out.push_back(item);
            item.clear();
            if (*c == '\0') break;
        } else {
            item += *c;
        }
    }
    return out;
}

}  // namespace

void throw_bad_struct_size(size_t size) {
    throw ArgumentError(fmt::format("struct_size {} is too small: initialise parameters with their *_params_init function", size));
}

RuntimeOptions runtime_options(const hetero_runtime_params& p) {
    RuntimeOptions o;
    if (p.config_path) o.config_path = p.config_path;
    if (p.config_json) o.config_json = p.config_json;
    o.providers = split(p.providers, ',');
    for (size_t i = 0; i < o.providers.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (o.providers[i] == o.providers[j]) throw ArgumentError(fmt::format("providers names {} twice", o.providers[i]));
    if (p.threads < 0) throw ArgumentError(fmt::format("threads is {}: give 0 (the provider's default) or more", p.threads));
    o.threads = p.threads;
    o.plugin_dirs = split(p.plugin_dirs, ':');
    return o;
}

ModelLoadOptions load_options(const hetero_model_params& p) {
    ModelLoadOptions o;
    if (p.path) o.path = p.path;
    if (p.tokenizer_path) o.tokenizer = p.tokenizer_path;
    if (p.n_ctx < 0) throw ArgumentError(fmt::format("n_ctx is {}: give 0 (the model's) or more", p.n_ctx));
    o.n_ctx = p.n_ctx;
    switch (p.cache_type) {
        case HETERO_CACHE_AUTO: o.cache_type = CacheType::automatic; break;
        case HETERO_CACHE_F32: o.cache_type = CacheType::f32; break;
        case HETERO_CACHE_F16: o.cache_type = CacheType::f16; break;
        default: throw ArgumentError(fmt::format("cache_type {} is not one of HETERO_CACHE_AUTO, _F32, _F16", p.cache_type));
    }
    if (p.chat_template) {
        o.chat_template = p.chat_template;
        o.template_origin = "the app's chat template";
    }
    if (p.expected_prompt_tokens < 0 || p.expected_reply_tokens < 0) throw ArgumentError("expected token counts must not be negative");
    o.expected_prompt = p.expected_prompt_tokens;
    if (p.expected_reply_tokens > 0) o.expected_reply = p.expected_reply_tokens;
    return o;
}

SamplerOptions sampler_options(const hetero_generate_params& p, int64_t n_vocab) {
    if (!std::isfinite(p.temperature) || p.temperature < 0)
        throw ArgumentError(fmt::format("temperature is {}: give 0 (greedy) or more", p.temperature));
    if (p.top_k < 0) throw ArgumentError(fmt::format("top_k is {}: give 0 (off) or more", p.top_k));
    if (!(p.top_p > 0 && p.top_p <= 1)) throw ArgumentError(fmt::format("top_p is {}: give a value in (0, 1]", p.top_p));
    SamplerOptions s;
    s.temperature = p.temperature;
    s.top_k = p.top_k;
    s.top_p = p.top_p;
    s.seed = p.seed;
    if (!(p.min_p >= 0 && p.min_p <= 1)) throw ArgumentError(fmt::format("min_p is {}: give a value in [0, 1] (0 = off)", p.min_p));
    if (!std::isfinite(p.repetition_penalty) || p.repetition_penalty <= 0)
        throw ArgumentError(fmt::format("repetition_penalty is {}: give a value > 0 (1 = off)", p.repetition_penalty));
    if (p.repetition_window < -1)
        throw ArgumentError(fmt::format("repetition_window is {}: give a number of tokens, 0 (none) or -1 (all)", p.repetition_window));
    if (!(p.presence_penalty >= -2 && p.presence_penalty <= 2))
        throw ArgumentError(fmt::format("presence_penalty is {}: give a value in [-2, 2]", p.presence_penalty));
    if (!(p.frequency_penalty >= -2 && p.frequency_penalty <= 2))
        throw ArgumentError(fmt::format("frequency_penalty is {}: give a value in [-2, 2]", p.frequency_penalty));
    s.min_p = p.min_p;
    s.repetition_penalty = p.repetition_penalty;
    s.repetition_window = p.repetition_window;
    s.presence_penalty = p.presence_penalty;
    s.frequency_penalty = p.frequency_penalty;
    if (p.n_logit_bias && !p.logit_bias) throw ArgumentError(fmt::format("n_logit_bias is {} but logit_bias is NULL", p.n_logit_bias));
    for (size_t i = 0; i < p.n_logit_bias; ++i) {
        const hetero_logit_bias& b = p.logit_bias[i];
        if (b.token < 0 || b.token >= n_vocab)
            throw ArgumentError(fmt::format("logit_bias[{}] names token {}, which is not in the vocabulary (token ids 0 .. {})", i, b.token, n_vocab - 1));
        if (!(b.bias >= -100 && b.bias <= 100))
            throw ArgumentError(fmt::format("logit_bias[{}] (token {}) is {}: give a value in [-100, 100]", i, b.token, b.bias));
        if (!s.logit_bias.emplace(b.token, b.bias).second) throw ArgumentError(fmt::format("logit_bias names token {} twice", b.token));
    }
    return s;
}

CompletionOptions completion_options(const hetero_generate_params& p, int64_t n_vocab) {
    CompletionOptions o;
    o.max_tokens = p.max_tokens;
    o.sampling = sampler_options(p, n_vocab);
    if (p.n_stop && !p.stop) throw ArgumentError(fmt::format("n_stop is {} but stop is NULL", p.n_stop));
    for (size_t i = 0; i < p.n_stop; ++i) {
        if (!p.stop[i] || !*p.stop[i]) throw ArgumentError(fmt::format("stop string {} is NULL or empty", i));
        o.stop.emplace_back(p.stop[i]);
    }
    return o;
}

std::vector<int32_t> end_tokens(const LoadedModel& model) {
    std::vector<int32_t> out;
    for (int32_t t : {model.tokenizer().eos(), model.tokenizer().bos()})
        if (t >= 0) out.push_back(t);
    return out;
}

}  // namespace hetero::api
