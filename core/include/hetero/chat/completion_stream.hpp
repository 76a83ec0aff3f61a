// complete()'s generation loop turned inside out, for a server that advances
// many completions in one batched decode step: the caller evaluates (the
// prompt, then each token the stream asks for) and hands the stream the
// logits; the stream samples, passes the text on and says when the
// completion ends, by the same rules as complete(): a stop token or string,
// the token limit, a full context, an interrupt or a cancelling consumer.
#pragma once

#include <hetero/chat/completion.hpp>
#include <hetero/chat/text_stream.hpp>
#include <hetero/runtime/sampler.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace hetero {

class CompletionStream {
public:
    // `n_ctx`: the context of the sequence the prompt goes into. Throws
    // hetero::Error when the prompt leaves no room for a reply. The tokenizer
    // must outlive the stream.
    CompletionStream(const Tokenizer& tokenizer, const std::vector<int32_t>& prompt, int32_t n_ctx, CompletionOptions options,
                     std::function<bool(std::string_view)> on_text);

    // The prompt is in the KV cache, `n_reused` of its tokens from before:
    // decoding starts.
    void prompt_done(int32_t n_reused);
    // The logits after the prompt, or after the token it returned last: the
    // next token to evaluate, or nullopt once the completion has ended.
    std::optional<int32_t> next(const float* logits, size_t n_vocab);
    std::optional<int32_t> next(const std::vector<float>& logits) { return next(logits.data(), logits.size()); }
    bool done() const { return done_; }
    // Ends it before its own end (its sequence failed): the text so far is
    // final, the finish reason `reason`.
    void end(FinishReason reason);
    // Valid once done().
    const CompletionResult& result() const { return r_; }
    CompletionResult take_result() { return std::move(r_); }

private:
    std::optional<int32_t> finish(FinishReason reason);

    const Tokenizer& tokenizer_;
    CompletionOptions options_;
    int32_t n_ctx_;
    TextStream text_;
    Sampler sampler_;
    std::vector<float> row_;  // the logits the sampler reads
    CompletionResult r_;
    int32_t prev_ = 0;  // the token before the next one (for the tokenizer's spacing)
    bool done_ = false;
    std::chrono::steady_clock::time_point started_, decode_started_;
};

}  // namespace hetero
