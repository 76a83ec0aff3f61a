#include "bpe_tokenizer.hpp"

#include "pair_merge.hpp"
#include "utf8.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>


namespace hetero {

using tokenizer_detail::utf8_char_len;

BpeTokenizer::BpeTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)), pretokenizer_(this->vocab().pre) {
    const auto& merges = this->vocab().merges;
    if (merges.empty()) throw Error("gpt2 vocabulary has no merges (tokenizer.ggml.merges)");
    ranks_.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
        const std::string& m = merges[i];
        const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
        if (space == std::string::npos || space + 1 >= m.size())
            throw Error(fmt::format("merge {} ('{}') is not two tokens separated by a space", i, m));
        ranks_.emplace(m, int32_t(i));  // the first occurrence keeps its (higher) priority
    }
}

int32_t BpeTokenizer::rank(std::string_view left, std::string_view right, std::string& scratch) const {
    scratch.assign(left);
    scratch += ' ';
    scratch += right;
    const auto it = ranks_.find(std::string_view(scratch));
    return it == ranks_.end() ? -1 : it->second;
}

void BpeTokenizer::encode_text(std::string_view text, bool, std::vector<int32_t>& out) const {
    std::string word;
    for (const std::string_view raw : pretokenizer_.split(text)) {
        word.clear();
        for (const char c : raw) word += bytes_.encode(uint8_t(c));
        encode_word(word, out);
    }
}

void BpeTokenizer::encode_word(const std::string& word, std::vector<int32_t>& out) const {
    if (pretokenizer_.whole_words_first())
        if (const auto id = find_token(word)) {
            out.push_back(*id);
            return;
        }

    std::string scratch;
    tokenizer_detail::merge_pairs<int32_t>(
        word,
        [&](std::string_view left, std::string_view right) -> std::optional<int32_t> {
            const int32_t rk = rank(left, right, scratch);
            if (rk < 0) return std::nullopt;
            return rk;
        },
        [&](std::string_view piece) {
            if (const auto id = find_token(piece)) {
                out.push_back(*id);
                return;
            }
            // A merge whose result is not in the vocabulary: spell it character by character.
            for (size_t pos = 0; pos < piece.size();) {
                const size_t len = utf8_char_len(piece, pos);
                const std::string_view ch = piece.substr(pos, len);
                pos += len;
                if (const auto id = find_token(ch))
                    out.push_back(*id);
                else if (unk() >= 0)
                    out.push_back(unk());
                else
                    throw Error(fmt::format("cannot encode the bytes {}: the vocabulary has no token for them and no <unk>",
                                            tokenizer_detail::hex_bytes(ch)));
            }
        });
}

std::string BpeTokenizer::decode_normal(int32_t token) const {
    const std::string& text = token_text(token);
    if (type(token) == TokenType::UserDefined) return text;  // stored as plain text, not byte characters
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const size_t start = pos;
        const auto cp = tokenizer_detail::next_code_point(text, pos);
        const auto byte = cp ? bytes_.decode(*cp) : std::nullopt;
        if (byte)
            out += char(*byte);
        else
            out.append(text, start, pos - start);  // not a byte character: keep it as written
    }
    return out;
}

}  // namespace hetero
