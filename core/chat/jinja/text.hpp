// Text helpers with Python's str semantics over UTF-8: code points, Python's
// whitespace, case mapping and the strip/split family used by filters and
// string methods.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetero::jinja {

// Decodes UTF-8; each invalid byte becomes U+FFFD (as Python's
// errors="replace" does), so every string inside the engine is valid UTF-8.
std::u32string decode_utf8(std::string_view text);
std::string encode_utf8(std::u32string_view text);
void append_utf8(std::string& out, char32_t c);
std::string sanitize_utf8(std::string_view text);
size_t count_code_points(std::string_view text);
bool is_ascii(std::string_view text);

// str.isspace() / the characters Python's \s matches.
bool is_space(char32_t c);
char32_t to_upper(char32_t c);
char32_t to_lower(char32_t c);
bool is_cased_upper(char32_t c);
bool is_cased_lower(char32_t c);
bool is_alpha(char32_t c);
bool is_digit(char32_t c);
bool is_alnum(char32_t c);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);  // str.capitalize()
std::string py_title(std::string_view s);    // str.title()

// str.strip / lstrip / rstrip; `chars` unset strips whitespace.
std::string strip(std::string_view s, bool left, bool right, const std::optional<std::string>& chars = std::nullopt);
// str.split / rsplit; `sep` unset splits on whitespace runs.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, long maxsplit, bool from_right = false);
std::vector<std::string> splitlines(std::string_view s, bool keepends);
// str.replace with a count (-1: all), the byte size of the result computed first by the caller.
size_t count_occurrences(std::string_view s, std::string_view needle);
std::string replace_all(std::string_view s, std::string_view old_text, std::string_view new_text, long count);

}  // namespace hetero::jinja
