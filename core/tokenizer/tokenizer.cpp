// The parts every tokenizer shares: vocabulary checks, text -> id lookup,
// splitting out special tokens, BOS, and the decoding conventions.
#include <hetero/tokenizer/tokenizer.hpp>

#include <hetero/error.hpp>

#include "bpe_tokenizer.hpp"
#include "sentencepiece_tokenizer.hpp"
#include "string_map.hpp"
#include "utf8.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace hetero {

namespace {

struct TextPiece {
    std::string_view text;  // empty when this is a token
    int32_t token = -1;
};

}  // namespace

struct Tokenizer::Lookup {
    tokenizer_detail::StringMap<int32_t> by_text;
    std::vector<int32_t> specials;  // longest text first, so "<|a|>x" never loses to a shorter prefix
};

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)), lookup_(std::make_unique<Lookup>()) {
    const size_t n = vocab_.tokens.size();
    if (n == 0) throw Error(fmt::format("{} vocabulary has no tokens", vocab_.model));
    if (n > size_t(INT32_MAX)) throw Error(fmt::format("{} vocabulary has too many tokens ({})", vocab_.model, n));
    if (!vocab_.scores.empty() && vocab_.scores.size() != n)
        throw Error(fmt::format("vocabulary has {} tokens but {} scores", n, vocab_.scores.size()));
    if (!vocab_.types.empty() && vocab_.types.size() != n)
        throw Error(fmt::format("vocabulary has {} tokens but {} token types", n, vocab_.types.size()));
    for (const auto& [name, id] : {std::pair{"bos", vocab_.bos}, {"eos", vocab_.eos}, {"unk", vocab_.unk}, {"pad", vocab_.pad}})
        if (id < -1 || id >= int32_t(n))
            throw Error(fmt::format("{} token id {} is outside the vocabulary of {} tokens", name, id, n));
    if (vocab_.bos < 0) vocab_.add_bos = false;

    lookup_->by_text.reserve(n);
    for (size_t i = 0; i < n; ++i) lookup_->by_text[vocab_.tokens[i]] = int32_t(i);
    for (size_t i = 0; i < n; ++i) {
        const TokenType t = type(int32_t(i));
        if ((t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown) && !vocab_.tokens[i].empty())
            lookup_->specials.push_back(int32_t(i));
    }
    std::stable_sort(lookup_->specials.begin(), lookup_->specials.end(),
                     [&](int32_t a, int32_t b) { return vocab_.tokens[a].size() > vocab_.tokens[b].size(); });
}

Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::create(Vocab vocab) {
    if (vocab.model == "llama") return std::make_unique<SentencePieceTokenizer>(std::move(vocab), SentencePieceTokenizer::kSpaceMarker);
    if (vocab.model == "llama2c") return std::make_unique<SentencePieceTokenizer>(std::move(vocab), " ");
    if (vocab.model == "gpt2") return std::make_unique<BpeTokenizer>(std::move(vocab));
    throw Error(fmt::format("unknown tokenizer model '{}' (supported: llama, gpt2, llama2c)", vocab.model));
}

void Tokenizer::check_id(int32_t token) const {
    if (token < 0 || token >= n_vocab())
        throw Error(fmt::format("token id {} is outside the vocabulary of {} tokens", token, n_vocab()));
}

TokenType Tokenizer::type(int32_t token) const {
    check_id(token);
    if (vocab_.types.empty()) return TokenType::Normal;
    const int32_t t = vocab_.types[size_t(token)];
    return t >= 0 && t <= int32_t(TokenType::Byte) ? TokenType(t) : TokenType::Undefined;
}

const std::string& Tokenizer::token_text(int32_t token) const {
    check_id(token);
    return vocab_.tokens[size_t(token)];
}

std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
    const auto it = lookup_->by_text.find(text);
    if (it == lookup_->by_text.end()) return std::nullopt;
    return it->second;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
    std::vector<TextPiece> pieces{{text, -1}};
    if (matches_special_texts()) {
        for (const int32_t id : lookup_->specials) {
            if (!parse_special && type(id) != TokenType::UserDefined) continue;
            const std::string_view special = vocab_.tokens[size_t(id)];
            std::vector<TextPiece> split;
            split.reserve(pieces.size());
            for (const TextPiece& p : pieces) {
                if (p.token >= 0) {
                    split.push_back(p);
                    continue;
                }
                std::string_view rest = p.text;
                for (size_t at; (at = rest.find(special)) != std::string_view::npos;) {
                    if (at > 0) split.push_back({rest.substr(0, at), -1});
                    split.push_back({{}, id});
                    rest.remove_prefix(at + special.size());
                }
                if (!rest.empty()) split.push_back({rest, -1});
            }
            pieces = std::move(split);
        }
    }

    std::vector<int32_t> out;
    out.reserve(text.size() / 2 + 2);
    if (add_bos && vocab_.add_bos) out.push_back(vocab_.bos);
    bool at_start = true;
    for (const TextPiece& p : pieces) {
        if (p.token >= 0) {
            out.push_back(p.token);
            at_start = true;
        } else if (!p.text.empty()) {
            encode_text(p.text, at_start, out);
            at_start = false;
        }
    }
    return out;
}

std::string Tokenizer::decode(int32_t token) const {
    switch (type(token)) {
        case TokenType::Control:
        case TokenType::Unused:
            return {};
        case TokenType::Byte: {
            // "<0xNN>" -> the byte itself
            if (const auto byte = tokenizer_detail::parse_byte_token(vocab_.tokens[size_t(token)]))
                return std::string(1, char(*byte));
            return decode_normal(token);
        }
        default:
            return decode_normal(token);
    }
}

std::string Tokenizer::decode_next(int32_t prev, int32_t token) const {
    std::string piece = decode(token);
    if (adds_space_prefix() && prev == vocab_.bos && prev >= 0 && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    return piece;
}

std::string Tokenizer::decode(const std::vector<int32_t>& tokens) const {
    std::string text;
    bool first_text = true;
    for (const int32_t token : tokens) {
        std::string piece = decode(token);
        if (piece.empty()) continue;
        if (first_text && adds_space_prefix() && piece[0] == ' ') piece.erase(0, 1);
        first_text = false;
        text += piece;
    }
    return text;
}

}  // namespace hetero
