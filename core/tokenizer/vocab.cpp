// Vocabularies from GGUF metadata (tokenizer.ggml.*) and llama2.c's tokenizer.bin.
#include <hetero/tokenizer/tokenizer.hpp>

#include <hetero/error.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/llama2c.hpp>

#include "utf8.hpp"

#include <fmt/format.h>

namespace hetero {

namespace {

int32_t token_id(const GgufFile& gguf, std::string_view key, size_t n_tokens) {
    const auto value = gguf.get_int(key);
    if (!value) return -1;
    // llama.cpp writers store "none" as -1 (or as a huge unsigned value).
    if (*value < 0 || *value == int64_t(UINT32_MAX)) return -1;
    if (uint64_t(*value) >= n_tokens)
        throw Error(fmt::format("{}: {} = {} is outside the vocabulary of {} tokens", gguf.path(), key, *value, n_tokens));
    return int32_t(*value);
}

const char* type_name(int32_t type) {
    switch (TokenType(type)) {
        case TokenType::Normal: return "normal";
        case TokenType::Unknown: return "unknown";
        case TokenType::Control: return "control";
        case TokenType::UserDefined: return "user-defined";
        case TokenType::Unused: return "unused";
        case TokenType::Byte: return "byte";
        default: return "undefined";
    }
}

// The rule every vocabulary meets when it loads (documented in README.md
// under "Supported models"):
//  - a token's text is well-formed UTF-8. SentencePiece writes raw bytes as
//    "<0xNN>" byte tokens and GPT-2-style BPE maps every byte to a printable
//    code point, so real vocabularies are; a token that is not is a corrupt
//    or hand-made file whose decoded text could not be trusted either.
//  - a token's text is empty only when its type says it is never produced
//    from text: unknown, control or unused. A normal, user-defined or byte
//    token (or one of no or another type) with no text could never be
//    matched by the tokenizer and would decode to nothing.
// Checked against llama.cpp's ggml-vocab-*.gguf test vocabularies (SentencePiece,
// BPE, WordPiece, Unigram) and the TinyStories ones: none has an empty or a
// non-UTF-8 token.
void check_token_texts(const Vocab& v, const std::string& origin) {
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        const std::string& text = v.tokens[i];
        const int32_t type = v.types.empty() ? int32_t(TokenType::Normal) : v.types[i];
        if (text.empty()) {
            const TokenType t = TokenType(type);
            if (t == TokenType::Unknown || t == TokenType::Control || t == TokenType::Unused) continue;
            throw Error(fmt::format("{}: token {} is empty but of type {} ({}); only unknown, control and unused tokens may have no text",
                                    origin, i, type_name(type), type));
        }
        if (const auto at = tokenizer_detail::utf8_invalid_at(text)) {
            throw Error(fmt::format("{}: token {} is not valid UTF-8 (at byte {} of {}: {}); a token's text must be UTF-8, raw "
                                    "bytes are byte tokens such as <0xFF>",
                                    origin, i, *at, text.size(), tokenizer_detail::hex_bytes(std::string_view(text).substr(*at, 4))));
        }
    }
}

}  // namespace

Vocab vocab_from_gguf(const GgufFile& gguf) {
    Vocab v;
    const auto model = gguf.get_string("tokenizer.ggml.model");
    if (!model) throw Error(fmt::format("{}: no tokenizer (tokenizer.ggml.model is missing)", gguf.path()));
    v.model = *model;
    v.pre = gguf.get_string("tokenizer.ggml.pre").value_or("default");
    v.tokens = gguf.get_string_array("tokenizer.ggml.tokens");
    if (v.tokens.empty()) throw Error(fmt::format("{}: tokenizer.ggml.tokens is missing or empty", gguf.path()));
    const size_t n = v.tokens.size();
    v.scores = gguf.get_float_array("tokenizer.ggml.scores");
    if (!v.scores.empty() && v.scores.size() != n)
        throw Error(fmt::format("{}: tokenizer.ggml.scores has {} entries but tokenizer.ggml.tokens has {}", gguf.path(),
                                v.scores.size(), n));
    v.types = gguf.get_int_array("tokenizer.ggml.token_type");
    if (!v.types.empty() && v.types.size() != n)
        throw Error(fmt::format("{}: tokenizer.ggml.token_type has {} entries but tokenizer.ggml.tokens has {}", gguf.path(),
                                v.types.size(), n));
    v.merges = gguf.get_string_array("tokenizer.ggml.merges");
    if (v.model == "llama" && v.scores.empty())
        throw Error(fmt::format("{}: a SentencePiece (llama) vocabulary needs tokenizer.ggml.scores", gguf.path()));
    if (v.model == "gpt2" && v.merges.empty())
        throw Error(fmt::format("{}: a BPE (gpt2) vocabulary needs tokenizer.ggml.merges", gguf.path()));

    check_token_texts(v, gguf.path() + ": tokenizer.ggml.tokens");

    v.bos = token_id(gguf, "tokenizer.ggml.bos_token_id", n);
    v.eos = token_id(gguf, "tokenizer.ggml.eos_token_id", n);
    v.unk = token_id(gguf, "tokenizer.ggml.unknown_token_id", n);
    v.pad = token_id(gguf, "tokenizer.ggml.padding_token_id", n);
    // Defaults as llama.cpp has them: SentencePiece adds BOS and a space
    // prefix, BPE neither, except that Llama 3 starts with <|begin_of_text|>.
    const bool spm = v.model == "llama";
    const bool llama3 = v.model == "gpt2" && (v.pre == "llama-bpe" || v.pre == "llama3");
    v.add_bos = gguf.get_bool("tokenizer.ggml.add_bos_token").value_or(spm || llama3);
    v.add_space_prefix = gguf.get_bool("tokenizer.ggml.add_space_prefix").value_or(spm);
    return v;
}

Vocab vocab_from_llama2c(const std::string& tokenizer_bin, int32_t vocab_size) {
    Llama2cVocab raw = read_llama2c_tokenizer(tokenizer_bin, vocab_size);
    Vocab v;
    v.model = "llama2c";
    v.pre = "default";
    v.tokens = std::move(raw.tokens);
    v.scores = std::move(raw.scores);
    // llama2.c's fixed ids: 0 <unk>, 1 BOS, 2 EOS, then the byte tokens.
    const size_t n = v.tokens.size();
    v.types.assign(n, int32_t(TokenType::Normal));
    if (n > 0) v.types[0] = int32_t(TokenType::Unknown);
    for (size_t i = 1; i < n && i < 3; ++i) v.types[i] = int32_t(TokenType::Control);
    for (size_t i = 3; i < n; ++i)
        if (tokenizer_detail::parse_byte_token(v.tokens[i])) v.types[i] = int32_t(TokenType::Byte);
    check_token_texts(v, tokenizer_bin);
    v.unk = n > 0 ? 0 : -1;
    v.bos = n > 1 ? 1 : -1;
    v.eos = n > 2 ? 2 : -1;
    v.add_bos = true;
    v.add_space_prefix = true;
    return v;
}

}  // namespace hetero
