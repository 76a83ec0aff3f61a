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
    // Evaluates one more token after those held; returns its logits.
    const std::vector<float>& append(int32_t token);
    // Forgets everything (the next prefill evaluates from position 0).
    void clear() { held_.clear(); }

    const std::vector<int32_t>& tokens() const { return held_; }
    int32_t n_ctx() const { return evaluator_.n_ctx(); }
    // How many tokens the last prefill reused / evaluated.
    int32_t last_reused() const { return last_reused_; }
    int32_t last_evaluated() const { return last_evaluated_; }

private:
    Evaluator& evaluator_;
    std::vector<int32_t> held_;
    int32_t last_reused_ = 0, last_evaluated_ = 0;
};

}  // namespace hetero
