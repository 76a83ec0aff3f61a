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

// The offset of the first byte where `s` stops being well-formed UTF-8
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF, no
// truncated sequence), or nullopt when all of it is.
inline std::optional<size_t> utf8_invalid_at(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        const uint8_t b = uint8_t(s[i]);
        if (b < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
        if (b >= 0xC2 && b <= 0xDF) len = 2;
        else if (b >= 0xE0 && b <= 0xEF) {
            len = 3;
            if (b == 0xE0) lo = 0xA0;       // overlong
            else if (b == 0xED) hi = 0x9F;  // surrogates
        } else if (b >= 0xF0 && b <= 0xF4) {
            len = 4;
            if (b == 0xF0) lo = 0x90;       // overlong
            else if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
        } else {
            return i;  // continuation byte, C0/C1 or F5..FF as a lead byte
        }
        if (i + len > s.size()) return i;
        const uint8_t second = uint8_t(s[i + 1]);
        if (second < lo || second > hi) return i;
        for (size_t k = 2; k < len; ++k)
            if ((uint8_t(s[i + k]) & 0xC0) != 0x80) return i;
        i += len;
    }
    return std::nullopt;
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
