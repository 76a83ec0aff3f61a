#include <hetero/chat/completion.hpp>
#include <hetero/chat/completion_stream.hpp>

#include <optional>

namespace hetero {

const char* finish_reason_name(FinishReason reason) {
    switch (reason) {
        case FinishReason::stop: return "stop";
        case FinishReason::length: return "length";
        case FinishReason::context_full: return "context_full";
        case FinishReason::interrupted: return "interrupted";
        case FinishReason::cancelled: return "cancelled";
    }
    return "unknown";
}

CompletionResult complete(PrefixCache& cache, const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                          const CompletionOptions& options, const std::function<bool(std::string_view)>& on_text) {
    // One completion alone: the stream's rules, driven by one cache.
    CompletionStream stream(tokenizer, prompt, cache.n_ctx(), options, on_text);
    const std::vector<float>* logits = &cache.prefill(prompt);
    stream.prompt_done(cache.last_reused());
    while (const std::optional<int32_t> next = stream.next(*logits)) logits = &cache.append(*next);
    return stream.take_result();
}

}  // namespace hetero
