#include <hetero/chat/completion_stream.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero {

namespace {
double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

CompletionStream::CompletionStream(const Tokenizer& tokenizer, const std::vector<int32_t>& prompt, int32_t n_ctx, CompletionOptions options,
                                   std::function<bool(std::string_view)> on_text)
    : tokenizer_(tokenizer),
      options_(std::move(options)),
      n_ctx_(n_ctx),
      text_(options_.stop, std::move(on_text)),
      sampler_(options_.sampling),
      started_(std::chrono::steady_clock::now()) {
    r_.n_prompt = int32_t(prompt.size());
    if (prompt.empty()) throw Error("the prompt encodes to no tokens");
    if (r_.n_prompt >= n_ctx)
        throw Error(fmt::format("the prompt has {} tokens but the context holds {} (and one more is needed for the reply)", r_.n_prompt, n_ctx));
    sampler_.add_context(prompt);  // the repetition penalty looks back over the prompt too
    prev_ = prompt.back();
    decode_started_ = started_;
}

void CompletionStream::prompt_done(int32_t n_reused) {
    r_.n_reused = n_reused;
    r_.prefill_seconds = since(started_);
    decode_started_ = std::chrono::steady_clock::now();
}

std::optional<int32_t> CompletionStream::next(const float* logits, size_t n_vocab) {
    if (done_) return std::nullopt;
    if (options_.max_tokens > 0 && r_.n_generated >= options_.max_tokens) return finish(FinishReason::length);
    if (options_.interrupt && options_.interrupt->load()) return finish(FinishReason::interrupted);
    row_.assign(logits, logits + n_vocab);
    if (options_.constraint) options_.constraint->mask(row_, options_.stop_tokens);  // the sampler sees only what the schema allows
    const int32_t next = sampler_.sample(row_);
    if (r_.n_generated == 0) r_.first_token_seconds = since(started_);
    if (std::find(options_.stop_tokens.begin(), options_.stop_tokens.end(), next) != options_.stop_tokens.end()) return finish(FinishReason::stop);
    ++r_.n_generated;
    if (options_.on_sample) options_.on_sample(row_, next);
    if (options_.constraint) options_.constraint->accept(next);
    if (text_.push(tokenizer_.decode_next(prev_, next))) return finish(text_.cancelled() ? FinishReason::cancelled : FinishReason::stop);
    prev_ = next;
    if (options_.constraint && !options_.constraint->can_continue()) return finish(FinishReason::stop);  // the value is closed
    // The KV cache holds the prompt and every token before this one.
    if (int64_t(r_.n_prompt) + r_.n_generated - 1 >= n_ctx_) return finish(FinishReason::context_full);
    return next;
}

void CompletionStream::end(FinishReason reason) {
    if (!done_) finish(reason);
}

std::optional<int32_t> CompletionStream::finish(FinishReason reason) {
    r_.finish = reason;
    if (reason != FinishReason::cancelled) text_.finish();
    r_.text = text_.text();
    r_.decode_seconds = since(decode_started_);
    done_ = true;
    return std::nullopt;
}

}  // namespace hetero
