#include <hetero/chat/prefix_cache.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero {

const std::vector<float>& PrefixCache::prefill(const std::vector<int32_t>& prompt) {
    if (prompt.empty()) throw Error("the prompt encodes to no tokens");
    if (int64_t(prompt.size()) > evaluator_.n_ctx())
        throw Error(fmt::format("the prompt has {} tokens but the context holds {}", prompt.size(), evaluator_.n_ctx()));
    const size_t common = size_t(std::mismatch(held_.begin(), held_.end(), prompt.begin(), prompt.end()).first - held_.begin());
    // The last token is evaluated again when the whole prompt is cached: its
    // logits are needed and were not kept.
    const size_t keep = std::min(common, prompt.size() - 1);
    // Until the forward succeeds only the kept prefix is known to be intact.
    held_.resize(keep);
    const std::vector<int32_t> suffix(prompt.begin() + std::ptrdiff_t(keep), prompt.end());
    const std::vector<float>& logits = evaluator_.forward(suffix, int32_t(keep));
    held_ = prompt;
    last_reused_ = int32_t(keep);
    last_evaluated_ = int32_t(suffix.size());
    return logits;
}

const std::vector<float>& PrefixCache::append(int32_t token) {
    if (int64_t(held_.size()) >= evaluator_.n_ctx())
        throw Error(fmt::format("the context of {} tokens is full", evaluator_.n_ctx()));
    const std::vector<float>& logits = evaluator_.forward({token}, int32_t(held_.size()));
    held_.push_back(token);
    return logits;
}

}  // namespace hetero
