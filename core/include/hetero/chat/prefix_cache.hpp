// Keeps track of the tokens an Evaluator's KV cache holds, so that a new
// prompt is evaluated only past its longest common prefix with them (a chat's
// next turn, or a server request that repeats a conversation).
#pragma once

#include <hetero/runtime/session.hpp>

#include <cstdint>
#include <vector>

namespace hetero {

class PrefixCache {
public:
    explicit PrefixCache(Evaluator& evaluator) : evaluator_(evaluator) {}

    // Makes the cache hold exactly `prompt` and returns the logits of its last
    // token. Tokens shared with what the cache holds are not evaluated again
    // (the last prompt token always is: its logits are not kept). Throws
    // hetero::Error when `prompt` is empty or longer than the context.
    const std::vector<float>& prefill(const std::vector<int32_t>& prompt);
    // The same in steps, for a server that interleaves a prompt with other
    // streams' decoding: start() keeps the longest common prefix with what
    // the cache holds and returns how many tokens remain to be evaluated
    // (at least one); each advance() evaluates up to `max_tokens` of them
    // and returns the last prompt token's logits once the whole prompt is
    // in, nullptr before. Throws as prefill does.
    int32_t start(const std::vector<int32_t>& prompt);
    const std::vector<float>* advance(int32_t max_tokens);
    // Tokens of the started prompt not evaluated yet (0 when none is started).
    int32_t pending() const { return target_.empty() ? 0 : int32_t(target_.size() - held_.size()); }
    // Evaluates one more token after those held; returns its logits.
    const std::vector<float>& append(int32_t token);
    // Records one more token that the caller evaluated at the next position
    // itself (in a batched decode step of several sequences).
    void appended(int32_t token);
    // Forgets everything (the next prefill evaluates from position 0).
    void clear() {
        held_.clear();
        target_.clear();
    }

    const std::vector<int32_t>& tokens() const { return held_; }
    int32_t n_ctx() const { return evaluator_.n_ctx(); }
    // How many tokens the last prefill reused / evaluated.
    int32_t last_reused() const { return last_reused_; }
    int32_t last_evaluated() const { return last_evaluated_; }
    // How many tokens `prompt` shares with what the cache holds (what a
    // prefill of it would reuse, but for the last token).
    size_t common_prefix(const std::vector<int32_t>& prompt) const;

private:
    Evaluator& evaluator_;
    std::vector<int32_t> held_;    // tokens the KV cache holds, in order from position 0
    std::vector<int32_t> target_;  // the prompt being prefilled in steps (held_ is a prefix of it); empty otherwise
    int32_t last_reused_ = 0, last_evaluated_ = 0;
};

}  // namespace hetero
