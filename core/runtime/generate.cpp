#include <hetero/runtime/generate.hpp>

#include <fmt/format.h>

#include <chrono>

namespace hetero {

namespace {
double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

GenerationResult generate(Evaluator& session, const Tokenizer& tokenizer, const std::string& prompt, int32_t n_predict,
                          Sampler& sampler, const std::function<void(const std::string&)>& on_text,
                          const std::atomic<bool>* stop, const OnSample& on_sample) {
    GenerationResult r;
    const auto start = std::chrono::steady_clock::now();
    r.tokens = tokenizer.encode(prompt, true);
    if (r.tokens.empty()) throw Error("the prompt encodes to no tokens and the vocabulary has no BOS");
    r.stats.n_prompt = int32_t(r.tokens.size());
    if (r.stats.n_prompt > session.n_ctx())
        throw Error(fmt::format("the prompt has {} tokens but the context holds {}", r.stats.n_prompt, session.n_ctx()));
    if (on_text) {
        // The prompt is echoed piece by piece, exactly as generated text will be.
        for (size_t i = 0; i < r.tokens.size(); ++i)
            on_text(i == 0 ? tokenizer.decode(r.tokens[0]) : tokenizer.decode_next(r.tokens[i - 1], r.tokens[i]));
    }
    sampler.add_context(r.tokens);  // the repetition penalty looks back over the prompt too
    const auto t_prefill = std::chrono::steady_clock::now();
    const std::vector<float>* logits = &session.forward(r.tokens, 0);
    r.stats.prefill_seconds = since(t_prefill);
    const auto t_decode = std::chrono::steady_clock::now();
    for (int32_t i = 0; i < n_predict; ++i) {
        if (stop && stop->load()) {
            r.stats.interrupted = true;
            break;
        }
        const int32_t next = sampler.sample(*logits);
        if (i == 0) r.stats.first_token_seconds = since(start);
        if (on_sample) on_sample(*logits, next);
        if (next == tokenizer.eos() || next == tokenizer.bos()) break;
        const int32_t prev = r.tokens.back();
        r.tokens.push_back(next);
        ++r.stats.n_generated;
        if (on_text) on_text(tokenizer.decode_next(prev, next));
        if (i + 1 == n_predict) break;
        if (int32_t(r.tokens.size()) >= session.n_ctx()) {
            r.stats.context_full = true;
            break;
        }
        logits = &session.forward({next}, int32_t(r.tokens.size()) - 1);
    }
    r.stats.decode_seconds = since(t_decode);
    return r;
}

}  // namespace hetero
