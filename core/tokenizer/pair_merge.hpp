// The merge loop SentencePiece and BPE share: the text is a linked list of
// character symbols; the adjacent pair with the best priority is merged
// (leftmost on ties) until no pair qualifies. O(n log n) in the text length.
#pragma once

#include "utf8.hpp"

#include <optional>
#include <queue>
#include <string_view>
#include <vector>

namespace hetero::tokenizer_detail {

struct Symbol {
    size_t start = 0;
    size_t len = 0;  // 0 once merged into its left neighbour
    int32_t prev = -1;
    int32_t next = -1;
};

// `priority(left, right)` (adjacent views into `text`) returns the pair's key (lower merges first), or
// nullopt when the pair may not merge. Calls `emit(piece)` for each final
// symbol in text order.
template <class Key, class Priority, class Emit>
void merge_pairs(std::string_view text, Priority priority, Emit emit) {
    std::vector<Symbol> symbols;
    symbols.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const size_t len = utf8_char_len(text, pos);
        const int32_t index = int32_t(symbols.size());
        symbols.push_back({pos, len, index - 1, -1});
        if (index > 0) symbols[size_t(index) - 1].next = index;
        pos += len;
    }

    struct Candidate {
        Key key;
        int32_t left;
        int32_t right;
        size_t len;  // combined length when queued; differs later when the candidate is stale
    };
    auto later = [](const Candidate& a, const Candidate& b) { return b.key < a.key || (!(a.key < b.key) && a.left > b.left); };
    std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
    auto piece = [&](int32_t i) { return text.substr(symbols[size_t(i)].start, symbols[size_t(i)].len); };
    auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        if (const std::optional<Key> key = priority(piece(left), piece(right)))
            queue.push({*key, left, right, symbols[size_t(left)].len + symbols[size_t(right)].len});
    };
    for (size_t i = 1; i < symbols.size(); ++i) consider(int32_t(i) - 1, int32_t(i));

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = symbols[size_t(c.left)];
        Symbol& r = symbols[size_t(c.right)];
        if (l.len == 0 || r.len == 0 || l.next != c.right || l.len + r.len != c.len) continue;
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) symbols[size_t(r.next)].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }

    for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[size_t(i)].next) emit(piece(i));
}

}  // namespace hetero::tokenizer_detail
