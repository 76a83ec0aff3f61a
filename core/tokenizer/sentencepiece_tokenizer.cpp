#include "sentencepiece_tokenizer.hpp"

#include "utf8.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <queue>

namespace hetero {

using tokenizer_detail::parse_byte_token;
using tokenizer_detail::utf8_char_len;

namespace {

// One piece of the text being merged; pieces form a doubly linked list in
// text order and a merged-away piece keeps length 0.
struct Symbol {
    size_t start = 0;
    size_t len = 0;
    int32_t prev = -1;
    int32_t next = -1;
};

struct Candidate {
    float score;
    int32_t left;  // index of the left symbol: lower wins ties, i.e. leftmost first
    int32_t right;
    size_t len;    // combined length when queued; a mismatch later means it is stale
};

struct LowerPriority {
    bool operator()(const Candidate& a, const Candidate& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(Vocab vocab, std::string space)
    : Tokenizer(std::move(vocab)), space_(std::move(space)) {
    byte_tokens_.fill(-1);
    // Byte tokens by their "<0xNN>" text (the last one wins, as for every lookup).
    for (int32_t id = 0; id < n_vocab(); ++id)
        if (const auto byte = parse_byte_token(token_text(id))) byte_tokens_[*byte] = id;
}

void SentencePieceTokenizer::encode_unknown_char(std::string_view ch, std::vector<int32_t>& out) const {
    bool all_bytes = true;
    for (const char c : ch) all_bytes = all_bytes && byte_tokens_[uint8_t(c)] >= 0;
    if (all_bytes) {
        for (const char c : ch) out.push_back(byte_tokens_[uint8_t(c)]);
        return;
    }
    if (unk() >= 0) {
        out.push_back(unk());
        return;
    }
    throw Error(fmt::format("cannot encode the bytes {}: the vocabulary has no token, byte token or <unk> for them",
                            tokenizer_detail::hex_bytes(ch)));
}

void SentencePieceTokenizer::encode_text(std::string_view text, bool at_start, std::vector<int32_t>& out) const {
    std::string s;
    s.reserve(text.size() + 8);
    if (at_start && vocab().add_space_prefix) s += space_;
    for (const char c : text) {
        if (c == ' ')
            s += space_;
        else
            s += c;
    }

    std::vector<Symbol> symbols;
    symbols.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) {
        const size_t len = utf8_char_len(s, pos);
        const int32_t index = int32_t(symbols.size());
        symbols.push_back({pos, len, index - 1, -1});
        if (index > 0) symbols[size_t(index) - 1].next = index;
        pos += len;
    }

    std::priority_queue<Candidate, std::vector<Candidate>, LowerPriority> queue;
    auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols[size_t(left)];
        const size_t len = l.len + symbols[size_t(right)].len;
        if (const auto id = find_token(std::string_view(s).substr(l.start, len))) queue.push({score(*id), left, right, len});
    };
    for (size_t i = 1; i < symbols.size(); ++i) consider(int32_t(i) - 1, int32_t(i));

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = symbols[size_t(c.left)];
        Symbol& r = symbols[size_t(c.right)];
        if (l.len == 0 || r.len == 0 || l.len + r.len != c.len || l.next != c.right) continue;  // stale
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) symbols[size_t(r.next)].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }

    for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[size_t(i)].next) {
        const std::string_view piece = std::string_view(s).substr(symbols[size_t(i)].start, symbols[size_t(i)].len);
        if (const auto id = find_token(piece))
            out.push_back(*id);
        else
            encode_unknown_char(piece, out);  // merges only form tokens, so this is one character
    }
}

std::string SentencePieceTokenizer::decode_normal(int32_t token) const {
    const std::string& text = token_text(token);
    if (space_ == " ") return text;
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        if (text.compare(pos, space_.size(), space_) == 0) {
            out += ' ';
            pos += space_.size();
        } else {
            out += text[pos++];
        }
    }
    return out;
}

}  // namespace hetero
