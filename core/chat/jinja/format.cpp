#include "format.hpp"

#include "errors.hpp"
#include "text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace hetero::jinja {

std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    const std::string sci(buf, res.ptr);  // "-1.2345e+17"
    const size_t e_at = sci.find('e');
    std::string mantissa = sci.substr(0, e_at);
    const int exponent = std::stoi(sci.substr(e_at + 1));
    std::string sign;
    if (mantissa[0] == '-') {
        sign = "-";
        mantissa.erase(0, 1);
    }
    std::string digits;
    for (char c : mantissa)
        if (c != '.') digits.push_back(c);
    if (exponent >= -4 && exponent < 16) {
        std::string out;
        if (exponent >= 0) {
            const size_t int_len = size_t(exponent) + 1;
            if (digits.size() <= int_len) {
                out = digits + std::string(int_len - digits.size(), '0') + ".0";
            } else {
                out = digits.substr(0, int_len) + "." + digits.substr(int_len);
            }
        } else {
            out = "0." + std::string(size_t(-exponent - 1), '0') + digits;
        }
        return sign + out;
    }
    std::string out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return sign + out + exp;
}

namespace {

// Python's str.isprintable() for what templates meet; unassigned code points
// are not known here and count as printable.
bool printable(char32_t c) {
    if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return false;
    if (c == 0x061C || c == 0x180E || (c >= 0x200B && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E)) return false;
    if ((c >= 0x2060 && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB)) return false;
    if ((c >= 0xD800 && c <= 0xF8FF) || c >= 0xF0000) return false;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F || c == 0x3000) return false;
    return true;
}

void repr_into(std::string& out, const Value& v, int depth);

void sequence_repr(std::string& out, const List& items, bool tuple, int depth) {
    out += tuple ? '(' : '[';
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        repr_into(out, items[i], depth + 1);
    }
    if (tuple && items.size() == 1) out += ',';
    out += tuple ? ')' : ']';
}

void repr_into(std::string& out, const Value& v, int depth) {
    if (depth > int(kMaxValueNesting)) throw BudgetExceeded("value nested too deeply to print");
    switch (v.type()) {
    case Value::Type::String:
        if (v.is_markup()) {
            out += "Markup(" + string_repr(v.as_string()) + ")";
        } else {
            out += string_repr(v.as_string());
        }
        return;
    case Value::Type::Undefined: out += "Undefined"; return;
    case Value::Type::List:
        switch (v.seq_kind()) {
        case Value::Seq::List:
        case Value::Seq::Tuple: sequence_repr(out, v.as_list(), v.is_tuple(), depth); return;
        case Value::Seq::Generator:
        case Value::Seq::ReverseIterator: out += "<" + v.type_name() + " object>"; return;
        default:
            out += v.type_name() + "(";
            sequence_repr(out, v.as_list(), false, depth);
            out += ")";
            return;
        }
    case Value::Type::Dict: {
        out += '{';
        bool first = true;
        for (const auto& [k, item] : v.as_dict().items()) {
            if (!first) out += ", ";
            first = false;
            repr_into(out, k, depth + 1);
            out += ": ";
            repr_into(out, item, depth + 1);
        }
        out += '}';
        return;
    }
    default: out += to_str(v); return;
    }
}

}  // namespace

std::string string_repr(std::string_view s) {
    const bool has_single = s.find('\'') != std::string_view::npos;
    const bool has_double = s.find('"') != std::string_view::npos;
    const char quote = has_single && !has_double ? '"' : '\'';
    std::string out(1, quote);
    for (char32_t c : decode_utf8(s)) {
        if (c == char32_t(quote) || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (printable(c)) {
            append_utf8(out, c);
        } else {
            char buf[16];
            if (c <= 0xFF) std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(c));
            else if (c <= 0xFFFF) std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            else std::snprintf(buf, sizeof buf, "\\U%08x", unsigned(c));
            out += buf;
        }
    }
    out += quote;
    return out;
}

std::string to_str(const Value& v) {
    switch (v.type()) {
    case Value::Type::Undefined: return "";
    case Value::Type::None: return "None";
    case Value::Type::Bool: return v.as_bool() ? "True" : "False";
    case Value::Type::Int: return std::to_string(v.as_int());
    case Value::Type::Float: return float_repr(v.as_double());
    case Value::Type::String: return v.as_string();
    case Value::Type::Object: return v.as_object()->repr();
    default: {
        std::string out;
        repr_into(out, v, 0);
        return out;
    }
    }
}

std::string repr(const Value& v) {
    std::string out;
    repr_into(out, v, 0);
    return out;
}

}  // namespace hetero::jinja
