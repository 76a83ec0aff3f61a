// Number filters: abs, int, float, round, with Python's parsing and rounding
// rules.
#include "filters_parts.hpp"

#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "operators.hpp"
#include "text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace hetero::jinja::filters {

namespace {

// Python's float(str): surrounding whitespace, underscores between digits, inf and nan.
std::optional<double> parse_python_float(const std::string& text) {
    const std::string t = strip(text, true, true);
    std::string clean;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '_') {
            if (i == 0 || i + 1 >= t.size() || !is_digit(char32_t(t[i - 1])) || !is_digit(char32_t(t[i + 1]))) return std::nullopt;
            continue;
        }
        clean.push_back(t[i]);
    }
    if (clean.empty()) return std::nullopt;
    const std::string l = lower(clean);
    const std::string body = (l[0] == '+' || l[0] == '-') ? l.substr(1) : l;
    if (body == "inf" || body == "infinity") return l[0] == '-' ? -INFINITY : INFINITY;
    if (body == "nan") return NAN;
    if (body.find_first_not_of("0123456789.e+-") != std::string::npos) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const double d = std::strtod(clean.c_str(), &end);
    if (end != clean.c_str() + clean.size()) return std::nullopt;
    return d;
}

// Python's int(str, base): whitespace, a sign, underscores between digits.
std::optional<int64_t> parse_python_int(const std::string& text, int base) {
    const std::string t = strip(text, true, true);
    size_t i = 0;
    bool negative = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) negative = t[i++] == '-';
    std::string digits;
    if (base == 0 || base == 16 || base == 8 || base == 2) {
        if (i + 1 < t.size() && t[i] == '0') {
            const char p = char(t[i + 1] | 0x20);
            const int prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
            if (prefixed && (base == 0 || base == prefixed)) {
                base = prefixed;
                i += 2;
                if (i < t.size() && t[i] == '_') ++i;
            }
        }
        if (base == 0) base = 10;
    }
    for (; i < t.size(); ++i) {
        if (t[i] == '_' && !digits.empty() && i + 1 < t.size() && t[i + 1] != '_') continue;
        digits.push_back(t[i]);
    }
    if (digits.empty()) return std::nullopt;
    int64_t value = 0;
    for (char c : digits) {
        const int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10 : 99;
        if (d >= base) return std::nullopt;
        if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, d, &value))
            throw RenderError("OverflowError", "integer too large for this engine (64-bit integers)");
    }
    return negative ? -value : value;
}

// round(x, n) as Python does it: correctly rounded, ties to even.
double python_round(double x, int64_t digits) {
    if (!std::isfinite(x)) return x;
    if (digits > 300) return x;
    if (digits < -308) return 0.0 * x;
    char buf[512];
    if (digits >= 0) {
        std::snprintf(buf, sizeof buf, "%.*f", int(digits), x);
        return std::strtod(buf, nullptr);
    }
    const double scale = std::pow(10.0, double(-digits));
    return std::nearbyint(x / scale) * scale;
}

}  // namespace

Value f_abs(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "abs", {});
    require_defined(v);
    if (v.is_integral()) {
        if (v.as_int() == INT64_MIN) throw RenderError("OverflowError", "integer result too large for this engine (64-bit integers)");
        return Value::integer(std::llabs(v.as_int()));
    }
    if (v.is_float()) return Value::floating(std::fabs(v.as_double()));
    type_error("bad operand type for abs(): '" + v.type_name() + "'");
}

Value f_int(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_int", {"default", "base"});
    const Value fallback = a.get_or(0, Value::integer(0));
    const int base = a.has(1) ? int(int_param(a[1], "base")) : 10;
    if (v.is_integral()) return Value::integer(v.as_int());
    if (v.is_float()) {
        if (!std::isfinite(v.as_double())) return fallback;
        return Value::integer(int64_t(v.as_double()));
    }
    if (v.is_string()) {
        if (auto i = parse_python_int(v.as_string(), base)) return Value::integer(*i);
        if (auto d = parse_python_float(v.as_string()); d && std::isfinite(*d)) return Value::integer(int64_t(*d));
    }
    return fallback;
}

Value f_float(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_float", {"default"});
    const Value fallback = a.get_or(0, Value::floating(0.0));
    if (v.is_number()) return Value::floating(v.as_double());
    if (v.is_string())
        if (auto d = parse_python_float(v.as_string())) return Value::floating(*d);
    return fallback;
}

Value f_round(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_round", {"precision", "method"});
    const int64_t precision = a.has(0) ? int_param(a[0], "precision") : 0;
    const std::string method = a.has(1) ? to_str(a[1]) : "common";
    if (method != "common" && method != "ceil" && method != "floor")
        throw RenderError("FilterArgumentError", "method must be common, ceil or floor");
    require_defined(v);
    if (!v.is_number()) type_error("type " + v.type_name() + " doesn't define __round__ method");
    if (method == "common") {
        if (v.is_integral()) {
            if (precision >= 0) return Value::integer(v.as_int());
            return Value::integer(int64_t(python_round(double(v.as_int()), precision)));
        }
        return Value::floating(python_round(v.as_double(), precision));
    }
    const double scale = std::pow(10.0, double(precision));
    const double scaled = v.as_double() * scale;
    const double r = method == "ceil" ? std::ceil(scaled) : std::floor(scaled);
    return Value::floating(r / scale);
}

}  // namespace hetero::jinja::filters
