// GPT-2's reversible byte <-> character mapping: byte-level BPE vocabularies
// spell every byte as a printable character (a space is "Ġ", U+0120).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hetero::tokenizer_detail {

class ByteUnicode {
public:
    ByteUnicode();
    // UTF-8 of the character standing for `byte`.
    const std::string& encode(uint8_t byte) const { return to_char_[byte]; }
    // The byte a code point stands for, if it is one of the 256 characters.
    std::optional<uint8_t> decode(uint32_t code_point) const;

private:
    std::array<std::string, 256> to_char_;
    std::array<int16_t, 324> to_byte_{};  // code points used are below 256 + 68
};

// Decodes one UTF-8 character at `pos` (advancing it); nullopt when invalid.
std::optional<uint32_t> next_code_point(std::string_view s, size_t& pos);

}  // namespace hetero::tokenizer_detail
