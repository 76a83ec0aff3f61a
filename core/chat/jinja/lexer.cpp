#include "lexer.hpp"

#include "errors.hpp"
#include "text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace hetero::jinja {

namespace {

// Jinja2 turns \r\n and \r into \n and drops one trailing newline.
std::string normalize_newlines(const std::string& source) {
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out.push_back('\n');
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out.push_back(source[i]);
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

// The byte length of Python whitespace starting at `pos` (UTF-8 aware).
size_t space_length_at(std::string_view s, size_t pos) {
    const auto b = static_cast<unsigned char>(s[pos]);
    if (b < 0x80) return is_space(b) ? 1 : 0;
    size_t len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
    if (pos + len > s.size()) return 0;
    const std::u32string c = decode_utf8(s.substr(pos, len));
    return c.size() == 1 && is_space(c[0]) ? len : 0;
}

size_t skip_spaces(std::string_view s, size_t pos) {
    while (pos < s.size()) {
        const size_t n = space_length_at(s, pos);
        if (!n) break;
        pos += n;
    }
    return pos;
}

bool all_spaces(std::string_view s) { return skip_spaces(s, 0) == s.size(); }

int count_newlines(std::string_view s) { return int(std::count(s.begin(), s.end(), '\n')); }

bool is_name_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80; }
bool is_name_char(unsigned char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_dec(char c) { return c >= '0' && c <= '9'; }

// (\d+_)*\d+ : digits with single underscores between them.
size_t match_digits(std::string_view s, size_t pos) {
    if (pos >= s.size() || !is_dec(s[pos])) return 0;
    size_t i = pos;
    while (true) {
        while (i < s.size() && is_dec(s[i])) ++i;
        if (i + 1 < s.size() && s[i] == '_' && is_dec(s[i + 1])) {
            ++i;
            continue;
        }
        return i - pos;
    }
}

size_t match_float(std::string_view s, size_t pos) {
    if (pos > 0 && s[pos - 1] == '.') return 0;
    size_t i = pos + match_digits(s, pos);
    if (i == pos) return 0;
    size_t frac_end = 0;
    if (i < s.size() && s[i] == '.') {
        const size_t d = match_digits(s, i + 1);
        if (d) frac_end = i + 1 + d;
    }
    auto exponent_at = [&](size_t at) -> size_t {
        if (at >= s.size() || (s[at] != 'e' && s[at] != 'E')) return 0;
        size_t j = at + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        const size_t d = match_digits(s, j);
        return d ? j + d : 0;
    };
    if (frac_end) {
        if (size_t e = exponent_at(frac_end)) return e - pos;
        return frac_end - pos;
    }
    if (size_t e = exponent_at(i)) return e - pos;
    return 0;
}

// Returns the length and sets `value`; 0 when no integer starts here.
size_t match_integer(std::string_view s, size_t pos, int64_t& value, int line) {
    auto digit_value = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return 99;
    };
    auto run = [&](size_t start, int base) -> size_t {  // (_?digit)+
        size_t i = start;
        while (true) {
            size_t j = i;
            if (j < s.size() && s[j] == '_') ++j;
            if (j < s.size() && digit_value(s[j]) < base) {
                i = j + 1;
            } else {
                break;
            }
        }
        return i;
    };
    size_t end = 0;
    int base = 10;
    size_t digits_from = pos;
    if (s[pos] == '0' && pos + 1 < s.size()) {
        const char p = char(s[pos + 1] | 0x20);
        base = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 10;
        if (base != 10) {
            end = run(pos + 2, base);
            if (end == pos + 2) return 0;
            digits_from = pos + 2;
        }
    }
    if (base == 10) {
        if (!is_dec(s[pos])) return 0;
        if (s[pos] == '0') {
            end = pos + 1;
            while (true) {  // 0(_?0)*
                size_t j = end;
                if (j < s.size() && s[j] == '_') ++j;
                if (j < s.size() && s[j] == '0') end = j + 1;
                else break;
            }
        } else {
            end = run(pos + 1, 10);
        }
    }
    std::string digits;
    for (size_t i = digits_from; i < end; ++i)
        if (s[i] != '_') digits.push_back(s[i]);
    const auto res = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (res.ec != std::errc()) throw SyntaxError(line, "integer literal too large: " + std::string(s.substr(pos, end - pos)));
    return end - pos;
}

// A quoted literal starting at `pos` (a quote): its length, the unescaped
// value (Python's unicode-escape rules) and the newlines it spans.
size_t match_string(std::string_view s, size_t pos, std::string& value, int line) {
    const char quote = s[pos];
    size_t i = pos + 1;
    std::string raw;
    while (i < s.size() && s[i] != quote) {
        if (s[i] == '\\' && i + 1 < s.size()) {
            raw.push_back(s[i++]);
        }
        raw.push_back(s[i++]);
    }
    if (i >= s.size()) return 0;
    value.clear();
    for (size_t k = 0; k < raw.size(); ++k) {
        if (raw[k] != '\\' || k + 1 >= raw.size()) {
            value.push_back(raw[k]);
            continue;
        }
        const char e = raw[++k];
        auto hex = [&](int n) {
            uint32_t cp = 0;
            for (int d = 1; d <= n; ++d) {
                const size_t at = k + size_t(d);
                const char c = at < raw.size() ? raw[at] : '\0';
                int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
                if (v < 0) throw SyntaxError(line, "truncated \\" + std::string(1, e) + " escape");
                cp = cp * 16 + uint32_t(v);
            }
            k += size_t(n);
            if (cp > 0x10FFFF) throw SyntaxError(line, "illegal Unicode character");
            append_utf8(value, cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFD : cp);
        };
        switch (e) {
        case '\n': break;
        case '\\': value.push_back('\\'); break;
        case '\'': value.push_back('\''); break;
        case '"': value.push_back('"'); break;
        case 'a': value.push_back('\a'); break;
        case 'b': value.push_back('\b'); break;
        case 'f': value.push_back('\f'); break;
        case 'n': value.push_back('\n'); break;
        case 'r': value.push_back('\r'); break;
        case 't': value.push_back('\t'); break;
        case 'v': value.push_back('\v'); break;
        case 'x': hex(2); break;
        case 'u': hex(4); break;
        case 'U': hex(8); break;
        case 'N': throw SyntaxError(line, "\\N{...} escapes are not supported");
        default:
            if (e >= '0' && e <= '7') {
                uint32_t cp = uint32_t(e - '0');
                for (int d = 0; d < 2 && k + 1 < raw.size() && raw[k + 1] >= '0' && raw[k + 1] <= '7'; ++d) cp = cp * 8 + uint32_t(raw[++k] - '0');
                append_utf8(value, cp);
            } else {
                value.push_back('\\');
                value.push_back(e);
            }
        }
    }
    return i + 1 - pos;
}

const char* const kOperators[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]", "(", ")",
                                  "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"};

class Lexer {
public:
    explicit Lexer(const std::string& source) : src_(normalize_newlines(source)) {}

    std::vector<Token> run() {
        while (pos_ < src_.size()) root();
        push(Token::Kind::Eof, "");
        return std::move(tokens_);
    }

private:
    void push(Token::Kind kind, std::string text) {
        Token t;
        t.kind = kind;
        t.text = std::move(text);
        t.line = line_;
        tokens_.push_back(std::move(t));
    }

    // Text up to the next tag, trimmed as the tag's whitespace control says.
    void emit_data(std::string_view text, char sign, bool lstrip_allowed) {
        const int newlines = count_newlines(text);
        std::string_view kept = text;
        if (sign == '-') {
            const std::u32string u = decode_utf8(text);
            size_t n = u.size();
            while (n > 0 && is_space(u[n - 1])) --n;
            kept = text.substr(0, text.size() - encode_utf8(std::u32string_view(u).substr(n)).size());
        } else if (sign != '+' && lstrip_allowed) {
            const size_t l_pos = text.rfind('\n') == std::string_view::npos ? 0 : text.rfind('\n') + 1;
            if ((l_pos > 0 || line_starting_) && l_pos < text.size() && all_spaces(text.substr(l_pos))) kept = text.substr(0, l_pos);
        }
        if (!kept.empty()) push(Token::Kind::Data, std::string(kept));
        line_ += newlines;
    }

    void root() {
        size_t at = pos_;
        char kind = 0;
        while (true) {
            at = src_.find('{', at);
            if (at == std::string::npos || at + 1 >= src_.size()) break;
            const char c = src_[at + 1];
            if (c == '%' || c == '{' || c == '#') {
                kind = c;
                break;
            }
            ++at;
        }
        if (!kind) {
            push(Token::Kind::Data, src_.substr(pos_));
            line_ += count_newlines(std::string_view(src_).substr(pos_));
            pos_ = src_.size();
            return;
        }
        const std::string_view text = std::string_view(src_).substr(pos_, at - pos_);
        size_t after = at + 2;
        char sign = 0;
        if (after < src_.size() && (src_[after] == '-' || src_[after] == '+')) sign = src_[after++];
        if (kind == '%') {
            if (size_t raw_end = match_raw_begin(after)) {
                emit_data(text, sign, true);
                pos_ = raw_end;
                line_starting_ = src_[raw_end - 1] == '\n';
                raw_block();
                return;
            }
        }
        emit_data(text, sign, kind != '{');
        pos_ = after;
        if (kind == '#') {
            comment();
        } else {
            tag(kind == '%');
        }
    }

    // {%[-+]?\s*raw\s*(-%}\s*|%}) : the end of the opening tag, or 0.
    size_t match_raw_begin(size_t i) {
        i = skip_spaces(src_, i);
        if (src_.compare(i, 3, "raw") != 0) return 0;
        i = skip_spaces(src_, i + 3);
        if (src_.compare(i, 3, "-%}") == 0) return skip_spaces(src_, i + 3);
        if (src_.compare(i, 2, "%}") == 0) return i + 2;
        return 0;
    }

    // After a tag's end: the whitespace control that follows it.
    size_t block_end_suffix(size_t end_of_delimiter, char sign) {
        if (sign == '-') return skip_spaces(src_, end_of_delimiter);
        if (sign == '+') return end_of_delimiter;
        return end_of_delimiter < src_.size() && src_[end_of_delimiter] == '\n' ? end_of_delimiter + 1 : end_of_delimiter;
    }

    void raw_block() {
        const int start_line = line_;
        size_t search = pos_;
        while (true) {
            const size_t at = src_.find("{%", search);
            if (at == std::string::npos) throw SyntaxError(start_line, "Missing end of raw directive");
            size_t i = at + 2;
            char sign = 0;
            if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) sign = src_[i++];
            i = skip_spaces(src_, i);
            if (src_.compare(i, 6, "endraw") == 0) {
                i = skip_spaces(src_, i + 6);
                char end_sign = 0;
                if (i < src_.size() && (src_[i] == '-' || src_[i] == '+') && src_.compare(i + 1, 2, "%}") == 0) end_sign = src_[i++];
                if (src_.compare(i, 2, "%}") == 0) {
                    emit_data(std::string_view(src_).substr(pos_, at - pos_), sign, true);
                    const size_t end = block_end_suffix(i + 2, end_sign);
                    line_ += count_newlines(std::string_view(src_).substr(at, end - at));
                    line_starting_ = end > 0 && src_[end - 1] == '\n';
                    pos_ = end;
                    return;
                }
            }
            search = at + 2;
        }
    }

    void comment() {
        const size_t close = src_.find("#}", pos_);
        if (close == std::string::npos) throw SyntaxError(line_, "Missing end of comment tag");
        char sign = 0;
        if (close > pos_ && (src_[close - 1] == '-' || src_[close - 1] == '+')) sign = src_[close - 1];
        const size_t end = block_end_suffix(close + 2, sign);
        line_ += count_newlines(std::string_view(src_).substr(pos_, end - pos_));
        line_starting_ = src_[end - 1] == '\n';
        pos_ = end;
    }

    void tag(bool block) {
        push(block ? Token::Kind::BlockBegin : Token::Kind::VariableBegin, "");
        std::vector<char> balance;
        const std::string_view s = src_;
        while (true) {
            if (pos_ >= s.size()) return;  // the parser reports the missing end
            if (balance.empty()) {
                if (size_t end = match_tag_end(block)) {
                    push(block ? Token::Kind::BlockEnd : Token::Kind::VariableEnd, "");
                    line_ += count_newlines(s.substr(pos_, end - pos_));
                    line_starting_ = s[end - 1] == '\n';
                    pos_ = end;
                    return;
                }
            }
            if (size_t n = space_length_at(s, pos_)) {
                const size_t end = skip_spaces(s, pos_ + n);
                line_ += count_newlines(s.substr(pos_, end - pos_));
                pos_ = end;
                continue;
            }
            if (size_t n = match_float(s, pos_)) {
                std::string digits;
                for (char c : s.substr(pos_, n))
                    if (c != '_') digits.push_back(c);
                push(Token::Kind::Float, "");
                tokens_.back().floating = std::strtod(digits.c_str(), nullptr);
                pos_ += n;
                continue;
            }
            int64_t value = 0;
            if (size_t n = match_integer(s, pos_, value, line_)) {
                push(Token::Kind::Integer, "");
                tokens_.back().integer = value;
                pos_ += n;
                continue;
            }
            if (is_name_start(static_cast<unsigned char>(s[pos_]))) {
                size_t e = pos_;
                while (e < s.size() && is_name_char(static_cast<unsigned char>(s[e]))) ++e;
                push(Token::Kind::Name, std::string(s.substr(pos_, e - pos_)));
                pos_ = e;
                continue;
            }
            if (s[pos_] == '\'' || s[pos_] == '"') {
                std::string value_text;
                const size_t n = match_string(s, pos_, value_text, line_);
                if (n) {
                    push(Token::Kind::String, std::move(value_text));
                    line_ += count_newlines(s.substr(pos_, n));
                    pos_ += n;
                    continue;
                }
            }
            bool matched = false;
            for (const char* op : kOperators) {
                const std::string_view o(op);
                if (s.compare(pos_, o.size(), o) != 0) continue;
                if (o == "{" || o == "(" || o == "[") balance.push_back(o == "{" ? '}' : o == "(" ? ')' : ']');
                if (o == "}" || o == ")" || o == "]") {
                    if (balance.empty()) throw SyntaxError(line_, "unexpected '" + std::string(o) + "'");
                    const char expected = balance.back();
                    balance.pop_back();
                    if (expected != o[0])
                        throw SyntaxError(line_, "unexpected '" + std::string(o) + "', expected '" + std::string(1, expected) + "'");
                }
                push(Token::Kind::Operator, std::string(o));
                pos_ += o.size();
                matched = true;
                break;
            }
            if (!matched) {
                const std::u32string c = decode_utf8(s.substr(pos_, 4));
                std::string ch;
                append_utf8(ch, c.empty() ? U'?' : c[0]);
                throw SyntaxError(line_, "unexpected char '" + ch + "' at " + std::to_string(pos_));
            }
        }
    }

    // The end of the tag at pos_ ("%}" with trimming, "-%}" + spaces, "+%}";
    // "}}" or "-}}" + spaces), or 0.
    size_t match_tag_end(bool block) {
        const std::string_view s = src_;
        const std::string_view close = block ? "%}" : "}}";
        if (block && s.compare(pos_, 3, "+%}") == 0) return pos_ + 3;
        if (s[pos_] == '-' && s.compare(pos_ + 1, 2, close) == 0) return skip_spaces(s, pos_ + 3);
        if (s.compare(pos_, 2, close) == 0) return block ? block_end_suffix(pos_ + 2, 0) : pos_ + 2;
        return 0;
    }

    std::string src_;
    size_t pos_ = 0;
    int line_ = 1;
    bool line_starting_ = true;
    std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) { return Lexer(source).run(); }

}  // namespace hetero::jinja
