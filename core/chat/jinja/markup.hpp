// markupsafe's Markup as far as templates without autoescape meet it: the
// escape filter makes Markup, safe marks a string as Markup, and + between
// Markup and a plain string escapes the plain one.
#pragma once

#include "value.hpp"

#include <string>
#include <string_view>

namespace hetero::jinja {

// markupsafe.escape: & < > ' " as HTML entities.
std::string html_escape(std::string_view s);
// a + b for two strings, following Markup's rules.
Value markup_concat(const Value& a, const Value& b);

}  // namespace hetero::jinja
