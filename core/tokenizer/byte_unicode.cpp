#include "byte_unicode.hpp"

#include "utf8.hpp"

namespace hetero::tokenizer_detail {

namespace {

std::string utf8_of(uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += char(cp);
    } else if (cp < 0x800) {
        s += char(0xC0 | (cp >> 6));
        s += char(0x80 | (cp & 0x3F));
    } else {
        s += char(0xE0 | (cp >> 12));
        s += char(0x80 | ((cp >> 6) & 0x3F));
        s += char(0x80 | (cp & 0x3F));
    }
    return s;
}

// Printable Latin-1 bytes stand for themselves; the others (controls, space,
// DEL, NBSP, soft hyphen...) take code points 256, 257, ... in byte order.
bool is_self_mapped(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

}  // namespace

ByteUnicode::ByteUnicode() {
    to_byte_.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
        const uint32_t cp = is_self_mapped(b) ? uint32_t(b) : next++;
        to_char_[size_t(b)] = utf8_of(cp);
        to_byte_[cp] = int16_t(b);
    }
}

std::optional<uint8_t> ByteUnicode::decode(uint32_t code_point) const {
    if (code_point >= to_byte_.size() || to_byte_[code_point] < 0) return std::nullopt;
    return uint8_t(to_byte_[code_point]);
}

std::optional<uint32_t> next_code_point(std::string_view s, size_t& pos) {
    const size_t len = utf8_char_len(s, pos);
    const uint8_t lead = uint8_t(s[pos]);
    pos += len;
    const size_t expected = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (expected != len) return std::nullopt;
    if (len == 1) return lead;
    uint32_t cp = lead & (0x7F >> len);
    for (size_t i = 1; i < len; ++i) cp = (cp << 6) | (uint8_t(s[pos - len + i]) & 0x3F);
    return cp;
}

}  // namespace hetero::tokenizer_detail
