// Text <-> token ids for the model families the core runs:
//   "llama"   SentencePiece (GGUF tokenizer.ggml.model = llama): score-ordered
//             merges, U+2581 for spaces, byte fallback;
//   "gpt2"    byte-level BPE (GGUF tokenizer.ggml.model = gpt2): regex
//             pre-tokenizer chosen by `pre`, rank-ordered merges;
//   "llama2c" llama2.c's tokenizer.bin: SentencePiece scores with plain spaces.
// Encoding is compatible with llama.cpp's tokenizers and with llama2.c's run.c.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

class GgufFile;

// Token types as GGUF stores them in tokenizer.ggml.token_type.
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

struct Vocab {
    std::string model;  // "llama" (SentencePiece), "gpt2" (BPE), "llama2c"
    std::string pre;    // pre-tokenizer of gpt2 vocabularies: "default", "gpt-2", "llama-bpe"/"llama3", "qwen2"
    std::vector<std::string> tokens;
    std::vector<float> scores;     // empty or one per token
    std::vector<int32_t> types;    // empty or one per token (TokenType values)
    std::vector<std::string> merges;  // gpt2: "left right", highest priority first
    int32_t bos = -1, eos = -1, unk = -1, pad = -1;
    bool add_bos = true;
    bool add_space_prefix = true;  // SentencePiece: prefix the text with a space
};

// Reads the tokenizer.ggml.* keys; a missing token list or arrays whose
// lengths disagree are errors naming the key.
Vocab vocab_from_gguf(const GgufFile& gguf);

// Reads a llama2.c tokenizer.bin holding `vocab_size` tokens.
Vocab vocab_from_llama2c(const std::string& tokenizer_bin, int32_t vocab_size);

class Tokenizer {
public:
    // Builds the tokenizer named by vocab.model; an unknown model, a
    // malformed merge or an out-of-range special id is a hetero::Error.
    static std::unique_ptr<Tokenizer> create(Vocab vocab);

    virtual ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    // Any bytes are accepted (invalid UTF-8 goes through byte fallback).
    // With parse_special, control/user-defined token texts in `text` (e.g.
    // "<|begin_of_text|>") become those single tokens; user-defined tokens are
    // always matched. add_bos prepends BOS when the vocabulary has one.
    virtual std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = true) const;

    // The bytes of one token as generated text: byte tokens give their raw
    // byte, SentencePiece's U+2581 gives a space, GPT-2's byte mapping is
    // undone, control tokens give nothing. Out-of-range ids are an error.
    virtual std::string decode(int32_t token) const;
    // The inverse of encode(text, any): the space prefix added by encode is
    // removed and control tokens are dropped.
    std::string decode(const std::vector<int32_t>& tokens) const;
    // Streaming: decode(token), minus the leading space of the first piece
    // after BOS where encode adds a space prefix (llama2.c's convention).
    std::string decode_next(int32_t prev, int32_t token) const;

    int32_t bos() const { return vocab_.bos; }
    int32_t eos() const { return vocab_.eos; }
    int32_t unk() const { return vocab_.unk; }
    int32_t pad() const { return vocab_.pad; }
    int32_t n_vocab() const { return int32_t(vocab_.tokens.size()); }
    bool adds_bos() const { return vocab_.add_bos; }
    const std::string& model() const { return vocab_.model; }

    TokenType type(int32_t token) const;
    bool is_control(int32_t token) const { return type(token) == TokenType::Control; }
    bool is_byte(int32_t token) const { return type(token) == TokenType::Byte; }
    const std::string& token_text(int32_t token) const;
    // The id whose stored text is exactly `text` (the last one on duplicates).
    std::optional<int32_t> find_token(std::string_view text) const;

protected:
    explicit Tokenizer(Vocab vocab);

    // Encodes a stretch of ordinary text (no special tokens in it);
    // `at_start` is true for the text's first stretch and for stretches that
    // follow a special token (where SentencePiece adds its space prefix).
    virtual void encode_text(std::string_view text, bool at_start, std::vector<int32_t>& out) const = 0;
    // The bytes of a normal (or user-defined) token.
    virtual std::string decode_normal(int32_t token) const = 0;
    // Whether encode prefixes text with a space that decoding must drop.
    virtual bool adds_space_prefix() const { return false; }
    // Whether literal special-token texts are looked for at all.
    virtual bool matches_special_texts() const { return true; }

    const Vocab& vocab() const { return vocab_; }
    void check_id(int32_t token) const;

private:
    struct Lookup;
    Vocab vocab_;
    std::unique_ptr<Lookup> lookup_;
};

}  // namespace hetero
