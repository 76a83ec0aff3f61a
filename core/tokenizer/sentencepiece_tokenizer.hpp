// SentencePiece-style encoding (GGUF "llama" and llama2.c's tokenizer.bin):
// split into characters, then repeatedly merge the adjacent pair whose
// concatenation is a token with the highest score (leftmost on ties);
// characters with no token fall back to byte tokens "<0xNN>", else <unk>.
#pragma once

#include <hetero/tokenizer/tokenizer.hpp>

#include <array>
#include <string>

namespace hetero {

class SentencePieceTokenizer final : public Tokenizer {
public:
    static constexpr const char* kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

    // `space` is how the vocabulary spells a space: U+2581 in GGUF, " " in
    // llama2.c's tokenizer.bin (which also never matches special-token texts).
    SentencePieceTokenizer(Vocab vocab, std::string space);

protected:
    void encode_text(std::string_view text, bool at_start, std::vector<int32_t>& out) const override;
    std::string decode_normal(int32_t token) const override;
    bool adds_space_prefix() const override { return vocab().add_space_prefix; }
    bool matches_special_texts() const override { return space_ != " "; }

private:
    float score(int32_t token) const { return vocab().scores.empty() ? 0.0f : vocab().scores[size_t(token)]; }
    void encode_unknown_char(std::string_view ch, std::vector<int32_t>& out) const;

    std::string space_;
    std::array<int32_t, 256> byte_tokens_{};  // -1 where the vocabulary has no "<0xNN>"
};

}  // namespace hetero
