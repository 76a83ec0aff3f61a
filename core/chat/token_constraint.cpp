#include <hetero/chat/token_constraint.hpp>

#include <limits>

namespace hetero {

TokenTrie::TokenTrie(const Tokenizer& tokenizer) {
    nodes_.emplace_back();
    texts_.resize(size_t(tokenizer.n_vocab()));
    for (int32_t id = 0; id < tokenizer.n_vocab(); ++id) {
        if (tokenizer.is_control(id)) continue;
        std::string text = tokenizer.decode(id);
        if (text.empty()) continue;
        int32_t at = 0;
        for (unsigned char b : text) {
            int32_t next = -1;
            for (const auto& [byte, child] : nodes_[size_t(at)].children)
                if (byte == b) next = child;
            if (next < 0) {
                next = int32_t(nodes_.size());
                nodes_[size_t(at)].children.emplace_back(b, next);
                nodes_.emplace_back();
            }
            at = next;
        }
        nodes_[size_t(at)].tokens.push_back(id);
        texts_[size_t(id)] = std::move(text);
    }
}

TokenConstraint::TokenConstraint(std::shared_ptr<const JsonSchema> schema, std::shared_ptr<const TokenTrie> trie, JsonFraming framing)
    : TokenConstraint(std::make_unique<FramedJsonMatcher>(std::move(schema), std::move(framing)), std::move(trie)) {}

TokenConstraint::TokenConstraint(std::unique_ptr<ByteMatcher> matcher, std::shared_ptr<const TokenTrie> trie)
    : trie_(std::move(trie)), matcher_(std::move(matcher)) {
    if (!matcher_ || !trie_) throw Error("a token constraint needs a matcher and a vocabulary trie");
}

namespace {

// Bytes that leave an unconstrained string's state as it is (ASCII: no UTF-8 sequence begins).
bool plain_string_byte(unsigned char b) { return b >= 0x20 && b < 0x80 && b != '"' && b != '\\'; }

}  // namespace

void TokenConstraint::walk(int32_t node, const ByteMatcher& state, std::vector<char>& allowed) const {
    const bool free_string = state.in_free_string();
    std::unique_ptr<ByteMatcher> next;  // one copy per node, reassigned per edge
    for (const auto& [byte, child] : trie_->node(node).children) {
        if (free_string && plain_string_byte(byte)) {  // the same state: no copy
            for (int32_t t : trie_->node(child).tokens) allowed[size_t(t)] = 1;
            walk(child, state, allowed);
            continue;
        }
        if (next) next->assign(state);
        else next = state.clone();
        if (!next->feed(char(byte))) continue;
        for (int32_t t : trie_->node(child).tokens) allowed[size_t(t)] = 1;
        walk(child, *next, allowed);
    }
}

void TokenConstraint::mask(std::vector<float>& logits, const std::vector<int32_t>& end_tokens) const {
    constexpr size_t kMaxCachedMasks = 32;
    const std::string key = matcher_->state_key();
    auto it = masks_.find(key);
    if (it == masks_.end()) {
        std::vector<char> walked(trie_->size(), 0);
        if (matcher_->can_continue()) walk(0, *matcher_, walked);
        if (masks_.size() >= kMaxCachedMasks) masks_.clear();
        it = masks_.emplace(key, std::move(walked)).first;
    }
    std::vector<char> allowed = it->second;
    allowed.resize(logits.size(), 0);
    if (matcher_->complete())
        for (int32_t t : end_tokens)
            if (t >= 0 && size_t(t) < allowed.size()) allowed[size_t(t)] = 1;
    for (size_t i = 0; i < logits.size(); ++i)
        if (!allowed[i]) logits[i] = -std::numeric_limits<float>::infinity();
}

bool TokenConstraint::accept(int32_t token) {
    if (token < 0 || size_t(token) >= trie_->size()) return false;
    const std::string& text = trie_->text(token);
    return !text.empty() && matcher_->feed(text);
}

}  // namespace hetero
