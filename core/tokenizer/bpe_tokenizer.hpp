// Byte-level BPE (GGUF "gpt2": GPT-2, Llama 3, Qwen2): pre-tokenize with the
// model's regular expression, spell each word's bytes with GPT-2's byte
// characters, then merge adjacent pairs by rank (tokenizer.ggml.merges order,
// leftmost first on ties).
#pragma once

#include <hetero/tokenizer/tokenizer.hpp>

#include "byte_unicode.hpp"
#include "pretokenizer.hpp"
#include "string_map.hpp"

namespace hetero {

class BpeTokenizer final : public Tokenizer {
public:
    explicit BpeTokenizer(Vocab vocab);

protected:
    void encode_text(std::string_view text, bool at_start, std::vector<int32_t>& out) const override;
    std::string decode_normal(int32_t token) const override;

private:
    void encode_word(const std::string& word, std::vector<int32_t>& out) const;
    int32_t rank(std::string_view left, std::string_view right, std::string& scratch) const;

    Pretokenizer pretokenizer_;
    tokenizer_detail::ByteUnicode bytes_;
    tokenizer_detail::StringMap<int32_t> ranks_;  // "left right" -> priority
};

}  // namespace hetero
