// The text-generation loop: batched prefill of the prompt, then one token at a
// time until EOS (or BOS, which llama2.c-style models emit between stories) or
// the requested count.
#pragma once

#include <hetero/runtime/sampler.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace hetero {

struct GenerationStats {
    int32_t n_prompt = 0;     // prompt tokens including BOS
    int32_t n_generated = 0;  // sampled tokens
    double prefill_seconds = 0, decode_seconds = 0;
    double first_token_seconds = 0;  // from the start of generate() to the first sampled token
    bool context_full = false;       // stopped because the context was full, before n_predict
    bool interrupted = false;        // stopped because *stop became true
};

struct GenerationResult {
    std::vector<int32_t> tokens;  // prompt (with BOS) followed by generated tokens
    GenerationStats stats;
};

// Runs on a Session, or a ResilientSession that survives a device failing.
// Calls on_text with each piece of text as it becomes known: first the prompt,
// then every generated token, and on_sample with every sampled token, the
// end-of-generation token included. When `stop` becomes true (e.g. from a
// signal handler), generation ends before the next token.
GenerationResult generate(Evaluator& session, const Tokenizer& tokenizer, const std::string& prompt, int32_t n_predict,
                          Sampler& sampler, const std::function<void(const std::string&)>& on_text = {},
                          const std::atomic<bool>* stop = nullptr, const OnSample& on_sample = {});

}  // namespace hetero
