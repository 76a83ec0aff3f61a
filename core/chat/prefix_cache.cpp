#include <hetero/chat/prefix_cache.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero {

size_t PrefixCache::common_prefix(const std::vector<int32_t>& prompt) const {
    return size_t(std::mismatch(held_.begin(), held_.end(), prompt.begin(), prompt.end()).first - held_.begin());
}

int32_t PrefixCache::start(const std::vector<int32_t>& prompt) {
    if (prompt.empty()) throw Error("the prompt encodes to no tokens");
    if (int64_t(prompt.size()) > evaluator_.n_ctx())
        throw Error(fmt::format("the prompt has {} tokens but the context holds {}", prompt.size(), evaluator_.n_ctx()));
    // The last token is evaluated again when the whole prompt is cached: its
    // logits are needed and were not kept.
    const size_t keep = std::min(common_prefix(prompt), prompt.size() - 1);
    held_.resize(keep);
    target_ = prompt;
    last_reused_ = int32_t(keep);
    last_evaluated_ = 0;
    return pending();
}

const std::vector<float>* PrefixCache::advance(int32_t max_tokens) {
    if (target_.empty()) throw Error("internal: no prompt is being prefilled");
    if (max_tokens < 1) throw Error("internal: a prefill step of no tokens");
    const size_t from = held_.size();
    const size_t n = std::min(size_t(max_tokens), target_.size() - from);
    const std::vector<int32_t> chunk(target_.begin() + std::ptrdiff_t(from), target_.begin() + std::ptrdiff_t(from + n));
    // Until the forward succeeds only the tokens before it are known to be intact.
    const std::vector<float>& logits = evaluator_.forward(chunk, int32_t(from));
    held_.insert(held_.end(), chunk.begin(), chunk.end());
    last_evaluated_ += int32_t(n);
    if (held_.size() < target_.size()) return nullptr;
    target_.clear();
    return &logits;
}

const std::vector<float>& PrefixCache::prefill(const std::vector<int32_t>& prompt) {
    const int32_t remaining = start(prompt);
    return *advance(remaining);
}

const std::vector<float>& PrefixCache::append(int32_t token) {
    if (!target_.empty()) throw Error("internal: a token appended while a prompt is half prefilled");
    if (int64_t(held_.size()) >= evaluator_.n_ctx())
        throw Error(fmt::format("the context of {} tokens is full", evaluator_.n_ctx()));
    const std::vector<float>& logits = evaluator_.forward({token}, int32_t(held_.size()));
    held_.push_back(token);
    return logits;
}

void PrefixCache::appended(int32_t token) {
    if (!target_.empty()) throw Error("internal: a token appended while a prompt is half prefilled");
    held_.push_back(token);
}

}  // namespace hetero
