#include "markup.hpp"

namespace hetero::jinja {

std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '\'': out += "&#39;"; break;
        case '"': out += "&#34;"; break;
        default: out += c;
        }
    }
    return out;
}

Value markup_concat(const Value& a, const Value& b) {
    if (a.is_markup() == b.is_markup()) return Value::string(a.as_string() + b.as_string(), a.is_markup());
    if (a.is_markup()) return Value::string(a.as_string() + html_escape(b.as_string()), true);
    return Value::string(html_escape(a.as_string()) + b.as_string(), true);
}

}  // namespace hetero::jinja
