#include "text.hpp"

#include <algorithm>
#include <cwctype>
#include <locale.h>
#include <wctype.h>

namespace hetero::jinja {

std::u32string decode_utf8(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            out.push_back(b);
            ++i;
            continue;
        }
        int len = 0;
        char32_t c = 0, min = 0;
        if ((b & 0xE0) == 0xC0) len = 2, c = b & 0x1F, min = 0x80;
        else if ((b & 0xF0) == 0xE0) len = 3, c = b & 0x0F, min = 0x800;
        else if ((b & 0xF8) == 0xF0) len = 4, c = b & 0x07, min = 0x10000;
        bool ok = len > 0 && i + size_t(len) <= s.size();
        for (int k = 1; ok && k < len; ++k) {
            const auto cb = static_cast<unsigned char>(s[i + size_t(k)]);
            if ((cb & 0xC0) != 0x80) ok = false;
            else c = (c << 6) | (cb & 0x3F);
        }
        if (ok && (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))) ok = false;
        if (!ok) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        out.push_back(c);
        i += size_t(len);
    }
    return out;
}

void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(char(c));
    } else if (c < 0x800) {
        out.push_back(char(0xC0 | (c >> 6)));
        out.push_back(char(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(char(0xE0 | (c >> 12)));
        out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(char(0x80 | (c & 0x3F)));
    } else {
        out.push_back(char(0xF0 | (c >> 18)));
        out.push_back(char(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(char(0x80 | (c & 0x3F)));
    }
}

std::string encode_utf8(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) append_utf8(out, c);
    return out;
}

bool is_ascii(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

std::string sanitize_utf8(std::string_view s) {
    if (is_ascii(s)) return std::string(s);
    return encode_utf8(decode_utf8(s));
}

size_t count_code_points(std::string_view s) {
    size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

bool is_space(char32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

namespace {

// Case mapping beyond ASCII comes from the C library's Unicode tables
// (C.UTF-8); without that locale non-ASCII letters keep their case.
locale_t unicode_locale() {
    static const locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t(0));
    return loc;
}

}  // namespace

char32_t to_upper(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
    locale_t loc = unicode_locale();
    return loc ? char32_t(towupper_l(wint_t(c), loc)) : c;
}

char32_t to_lower(char32_t c) {
    if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
    locale_t loc = unicode_locale();
    return loc ? char32_t(towlower_l(wint_t(c), loc)) : c;
}

bool is_cased_upper(char32_t c) { return to_lower(c) != c; }
bool is_cased_lower(char32_t c) { return to_upper(c) != c; }

bool is_alpha(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    locale_t loc = unicode_locale();
    return loc && iswalpha_l(wint_t(c), loc);
}

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_alnum(char32_t c) { return is_alpha(c) || is_digit(c); }

namespace {

template <class F>
std::string map_code_points(std::string_view s, F f) {
    std::string out;
    out.reserve(s.size());
    if (is_ascii(s)) {
        for (char c : s) out.push_back(char(f(char32_t(c))));
        return out;
    }
    for (char32_t c : decode_utf8(s)) append_utf8(out, f(c));
    return out;
}

bool is_cased(char32_t c) { return is_cased_upper(c) || is_cased_lower(c); }

}  // namespace

std::string upper(std::string_view s) { return map_code_points(s, to_upper); }
std::string lower(std::string_view s) { return map_code_points(s, to_lower); }

std::string capitalize(std::string_view s) {
    std::u32string u = decode_utf8(s);
    for (size_t i = 0; i < u.size(); ++i) u[i] = i == 0 ? to_upper(u[i]) : to_lower(u[i]);
    return encode_utf8(u);
}

std::string py_title(std::string_view s) {
    std::u32string u = decode_utf8(s);
    bool previous_cased = false;
    for (char32_t& c : u) {
        const bool cased = is_cased(c);
        c = previous_cased ? to_lower(c) : to_upper(c);
        previous_cased = cased;
    }
    return encode_utf8(u);
}

std::string strip(std::string_view s, bool left, bool right, const std::optional<std::string>& chars) {
    std::u32string u = decode_utf8(s);
    std::u32string set;
    if (chars) set = decode_utf8(*chars);
    auto strip_it = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_space(c); };
    size_t b = 0, e = u.size();
    if (left)
        while (b < e && strip_it(u[b])) ++b;
    if (right)
        while (e > b && strip_it(u[e - 1])) --e;
    return encode_utf8(std::u32string_view(u).substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, long maxsplit, bool from_right) {
    std::vector<std::string> parts;
    if (sep) {
        if (from_right) {
            size_t end = s.size();
            while (maxsplit != 0) {
                const size_t at = end >= sep->size() ? s.rfind(*sep, end - sep->size()) : std::string_view::npos;
                if (at == std::string_view::npos || end < sep->size()) break;
                parts.emplace_back(s.substr(at + sep->size(), end - at - sep->size()));
                end = at;
                if (maxsplit > 0) --maxsplit;
            }
            parts.emplace_back(s.substr(0, end));
            std::reverse(parts.begin(), parts.end());
            return parts;
        }
        size_t start = 0;
        while (maxsplit != 0) {
            const size_t at = s.find(*sep, start);
            if (at == std::string_view::npos) break;
            parts.emplace_back(s.substr(start, at - start));
            start = at + sep->size();
            if (maxsplit > 0) --maxsplit;
        }
        parts.emplace_back(s.substr(start));
        return parts;
    }
    // Whitespace runs; empty pieces never appear.
    std::u32string u = decode_utf8(s);
    if (from_right) {
        long i = long(u.size()) - 1;
        while (i >= 0) {
            while (i >= 0 && is_space(u[size_t(i)])) --i;
            if (i < 0) break;
            if (maxsplit == 0) {
                parts.push_back(encode_utf8(std::u32string_view(u).substr(0, size_t(i) + 1)));
                break;
            }
            long j = i;
            while (j >= 0 && !is_space(u[size_t(j)])) --j;
            parts.push_back(encode_utf8(std::u32string_view(u).substr(size_t(j + 1), size_t(i - j))));
            if (maxsplit > 0) --maxsplit;
            i = j;
        }
        std::reverse(parts.begin(), parts.end());
        return parts;
    }
    size_t i = 0;
    while (i < u.size()) {
        while (i < u.size() && is_space(u[i])) ++i;
        if (i >= u.size()) break;
        if (maxsplit == 0) {
            size_t e = u.size();
            while (e > i && is_space(u[e - 1])) --e;
            parts.push_back(encode_utf8(std::u32string_view(u).substr(i, e - i)));
            break;
        }
        size_t j = i;
        while (j < u.size() && !is_space(u[j])) ++j;
        parts.push_back(encode_utf8(std::u32string_view(u).substr(i, j - i)));
        if (maxsplit > 0) --maxsplit;
        i = j;
    }
    return parts;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
    std::u32string u = decode_utf8(s);
    std::vector<std::string> lines;
    size_t start = 0, i = 0;
    auto is_break = [](char32_t c) {
        return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
               c == 0x2028 || c == 0x2029;
    };
    while (i < u.size()) {
        if (!is_break(u[i])) {
            ++i;
            continue;
        }
        size_t end = i + 1;
        if (u[i] == '\r' && end < u.size() && u[end] == '\n') ++end;
        lines.push_back(encode_utf8(std::u32string_view(u).substr(start, (keepends ? end : i) - start)));
        start = i = end;
    }
    if (start < u.size()) lines.push_back(encode_utf8(std::u32string_view(u).substr(start)));
    return lines;
}

size_t count_occurrences(std::string_view s, std::string_view needle) {
    if (needle.empty()) return count_code_points(s) + 1;
    size_t n = 0;
    for (size_t at = s.find(needle); at != std::string_view::npos; at = s.find(needle, at + needle.size())) ++n;
    return n;
}

std::string replace_all(std::string_view s, std::string_view old_text, std::string_view new_text, long count) {
    std::string out;
    if (old_text.empty()) {
        // Python inserts the replacement before every code point and at the end.
        std::u32string u = decode_utf8(s);
        size_t i = 0;
        for (; i < u.size() && (count < 0 || long(i) < count); ++i) {
            out += new_text;
            append_utf8(out, u[i]);
        }
        if (count < 0 || long(i) < count) out += new_text;
        out += encode_utf8(std::u32string_view(u).substr(i));
        return out;
    }
    size_t start = 0;
    long done = 0;
    while (count < 0 || done < count) {
        const size_t at = s.find(old_text, start);
        if (at == std::string_view::npos) break;
        out.append(s.substr(start, at - start));
        out.append(new_text);
        start = at + old_text.size();
        ++done;
    }
    out.append(s.substr(start));
    return out;
}

}  // namespace hetero::jinja
