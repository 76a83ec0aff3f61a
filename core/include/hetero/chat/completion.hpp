// The generation loop shared by `hetero chat` and `hetero serve`: prefill a
// prompt through a PrefixCache, then sample until a stop token, a stop string,
// the token limit, a full context, an interrupt or a cancelling consumer.
#pragma once

#include <hetero/chat/prefix_cache.hpp>
#include <hetero/chat/token_constraint.hpp>
#include <hetero/runtime/sampler.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

struct CompletionOptions {
    int32_t max_tokens = 256;  // <= 0: until the context is full
    SamplerOptions sampling;
    std::vector<std::string> stop;      // stop strings; not part of the text
    std::vector<int32_t> stop_tokens;   // EOS, end-of-turn tokens; not part of the text
    const std::atomic<bool>* interrupt = nullptr;  // checked before every token
    OnSample on_sample;  // each sampled token of the reply (stop tokens are not)
    // Structured output: only tokens that keep the reply a text the schema
    // allows are sampled; the reply ends when the value is whole and a stop
    // token comes, or at once when nothing can follow it. Advanced as it goes
    // (one per completion).
    std::shared_ptr<TokenConstraint> constraint;
};

enum class FinishReason {
    stop,          // a stop token or stop string
    length,        // max_tokens reached
    context_full,  // the context holds no more tokens
    interrupted,   // *interrupt became true
    cancelled,     // the text consumer returned false
};
const char* finish_reason_name(FinishReason reason);  // "stop", "length", ...

struct CompletionResult {
    std::string text;  // the generated text (without stop strings / tokens)
    FinishReason finish = FinishReason::stop;
    int32_t n_prompt = 0;     // prompt tokens
    int32_t n_reused = 0;     // prompt tokens the cache already held
    int32_t n_generated = 0;  // sampled tokens, stop token excluded
    double prefill_seconds = 0, decode_seconds = 0;
    double first_token_seconds = 0;  // from the start to the first sampled token (a stop token too)
};

// `on_text` gets the text as it becomes final; returning false cancels.
// Throws hetero::Error when the prompt does not fit the context. The loop's
// rules are CompletionStream's (completion_stream.hpp), which a server
// drives for several completions at once (completion_slots.hpp).
CompletionResult complete(PrefixCache& cache, const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                          const CompletionOptions& options, const std::function<bool(std::string_view)>& on_text = {});

}  // namespace hetero
