// Byte-level helpers the tokenizers share; they accept any bytes, so
// invalid UTF-8 in a prompt never stops encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hetero::tokenizer_detail {

// Length of the character starting at `pos`: a lead byte with as many of
// the continuation bytes (10xxxxxx) it announces as follow it. A stray
// continuation byte, an invalid lead byte or a truncated sequence becomes a
// short "character" of its own, which no vocabulary holds and byte fallback
// then encodes byte by byte.
inline size_t utf8_char_len(std::string_view s, size_t pos) {
    const uint8_t lead = uint8_t(s[pos]);
    const size_t expected = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 1;
    size_t n = 1;
    while (n < expected && pos + n < s.size() && (uint8_t(s[pos + n]) & 0xC0) == 0x80) ++n;
    return n;
}

// The byte of a SentencePiece byte token "<0xNN>" (uppercase or lowercase hex).
inline std::optional<uint8_t> parse_byte_token(std::string_view text) {
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = hex(text[3]), lo = hex(text[4]);
    if (hi < 0 || lo < 0) return std::nullopt;
    return uint8_t(hi * 16 + lo);
}

// "e2 96" for error messages about bytes that cannot be encoded.
inline std::string hex_bytes(std::string_view bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (const char c : bytes) {
        if (!out.empty()) out += ' ';
        out += kDigits[uint8_t(c) >> 4];
        out += kDigits[uint8_t(c) & 15];
    }
    return out;
}

}  // namespace hetero::tokenizer_detail
