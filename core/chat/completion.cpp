#include <hetero/chat/completion.hpp>
#include <hetero/chat/text_stream.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace hetero {

namespace {
double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

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
    CompletionResult r;
    r.n_prompt = int32_t(prompt.size());
    if (r.n_prompt >= cache.n_ctx())
        throw Error(fmt::format("the prompt has {} tokens but the context holds {} (and one more is needed for the reply)",
                                r.n_prompt, cache.n_ctx()));
    TextStream stream(options.stop, on_text);
    Sampler sampler(options.sampling);
    const auto t_prefill = std::chrono::steady_clock::now();
    const std::vector<float>* logits = &cache.prefill(prompt);
    r.n_reused = cache.last_reused();
    r.prefill_seconds = since(t_prefill);
    const auto t_decode = std::chrono::steady_clock::now();
    int32_t prev = prompt.back();
    for (;;) {
        if (options.max_tokens > 0 && r.n_generated >= options.max_tokens) {
            r.finish = FinishReason::length;
            break;
        }
        if (options.interrupt && options.interrupt->load()) {
            r.finish = FinishReason::interrupted;
            break;
        }
        const int32_t next = sampler.sample(*logits);
        if (std::find(options.stop_tokens.begin(), options.stop_tokens.end(), next) != options.stop_tokens.end()) {
            r.finish = FinishReason::stop;
            break;
        }
        ++r.n_generated;
        if (options.on_sample) options.on_sample(*logits, next);
        if (stream.push(tokenizer.decode_next(prev, next))) {
            r.finish = stream.cancelled() ? FinishReason::cancelled : FinishReason::stop;
            break;
        }
        prev = next;
        if (int64_t(cache.tokens().size()) >= cache.n_ctx()) {
            r.finish = FinishReason::context_full;
            break;
        }
        logits = &cache.append(next);
    }
    if (r.finish != FinishReason::cancelled) stream.finish();
    r.text = stream.text();
    r.decode_seconds = since(t_decode);
    return r;
}

}  // namespace hetero
