#include "sentencepiece_tokenizer.hpp"

#include "pair_merge.hpp"
#include "utf8.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace hetero {

using tokenizer_detail::parse_byte_token;

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

    // A pair merges when its concatenation is a token; the higher score first
    // (a NaN score from a damaged file ranks last rather than breaking the order).
    tokenizer_detail::merge_pairs<float>(
        s,
        [&](std::string_view left, std::string_view right) -> std::optional<float> {
            const auto id = find_token(std::string_view(left.data(), left.size() + right.size()));
            if (!id) return std::nullopt;
            const float sc = score(*id);
            return std::isnan(sc) ? std::numeric_limits<float>::infinity() : -sc;
        },
        [&](std::string_view piece) {
            if (const auto id = find_token(piece))
                out.push_back(*id);
            else
                encode_unknown_char(piece, out);  // merges only form tokens, so this is one character
        });
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
