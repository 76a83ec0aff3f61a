#include "operators.hpp"

#include "errors.hpp"
#include "format.hpp"
#include "markup.hpp"
#include "text.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace hetero::jinja {

void fail_undefined(const Value& v) {
    const UndefinedInfo& info = v.undefined_info();
    if (info.unsafe) throw RenderError("SecurityError", undefined_message(info));
    throw RenderError("UndefinedError", undefined_message(info));
}

std::string object_type_repr(const Value& v) {
    if (v.is_none()) return "None";
    return v.type_name() + " object";
}

namespace {

[[noreturn]] void unsupported(const char* op, const Value& a, const Value& b) {
    type_error(std::string("unsupported operand type(s) for ") + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

[[noreturn]] void overflow() { throw RenderError("OverflowError", "integer result too large for this engine (64-bit integers)"); }

// a op b on int64, OverflowError where Python would grow a big integer.
template <class Op>
int64_t checked(Op op, int64_t a, int64_t b) {
    int64_t r = 0;
    if (op(a, b, &r)) overflow();
    return r;
}
bool add_overflow(int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); }
bool sub_overflow(int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); }
bool mul_overflow(int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); }

int64_t floor_div(int64_t a, int64_t b) {
    if (b == -1 && a == std::numeric_limits<int64_t>::min()) overflow();
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

double float_floor_div(double a, double b) {
    double mod = std::fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0.0) return std::copysign(0.0, a / b);
    double floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
}

double float_mod(double a, double b) {
    double mod = std::fmod(a, b);
    if (mod != 0.0) {
        if ((b < 0) != (mod < 0)) mod += b;
    } else {
        mod = std::copysign(0.0, b);
    }
    return mod;
}

int64_t int_pow(int64_t base, int64_t exp) {
    int64_t result = 1;
    while (exp > 0) {
        if (exp & 1) result = checked(mul_overflow, result, base);
        exp >>= 1;
        if (exp) base = checked(mul_overflow, base, base);
    }
    return result;
}

Value repeat(const Value& seq, int64_t n, Budget& budget) {
    if (n <= 0) return seq.is_string() ? Value::string("", seq.is_markup()) : Value::sequence({}, seq.seq_kind());
    if (seq.is_string()) {
        const std::string& s = seq.as_string();
        budget.check_string_size(uint64_t(s.size()) * uint64_t(n));
        std::string out;
        out.reserve(s.size() * size_t(n));
        for (int64_t i = 0; i < n; ++i) out += s;
        return Value::string(std::move(out), seq.is_markup());
    }
    const List& items = seq.as_list();
    budget.check_items(uint64_t(items.size()) * uint64_t(n));
    List out;
    out.reserve(items.size() * size_t(n));
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
    return Value::sequence(std::move(out), seq.seq_kind());
}

int compare_order(const Value& a, const Value& b, const char* op);

int compare_sequences(const List& x, const List& y, const char* op) {
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (equals(x[i], y[i])) continue;
        return compare_order(x[i], y[i], op);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
}

// -1, 0, 1 the way Python orders the two, or TypeError.
int compare_order(const Value& a, const Value& b, const char* op) {
    if (a.is_number() && b.is_number()) {
        if (a.is_integral() && b.is_integral()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
        const double x = a.as_double(), y = b.as_double();
        if (std::isnan(x) || std::isnan(y)) return 2;  // every comparison false
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.is_string() && b.is_string()) {
        const int c = a.as_string().compare(b.as_string());
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    if (a.is_sequence() && b.is_sequence() && a.seq_kind() == b.seq_kind()) return compare_sequences(a.as_list(), b.as_list(), op);
    if (a.is_undefined()) fail_undefined(a);
    if (b.is_undefined()) fail_undefined(b);
    type_error(std::string("'") + op + "' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

// Python's // or % of two numbers: of integers exactly, else of floats;
// ZeroDivisionError on a zero divisor.
Value floored(const Value& a, const Value& b, bool ints, int64_t (*int_op)(int64_t, int64_t), double (*float_op)(double, double),
              const char* float_zero_message) {
    if (ints) {
        if (b.as_int() == 0) throw RenderError("ZeroDivisionError", "integer division or modulo by zero");
        return Value::integer(int_op(a.as_int(), b.as_int()));
    }
    if (b.as_double() == 0.0) throw RenderError("ZeroDivisionError", float_zero_message);
    return Value::floating(float_op(a.as_double(), b.as_double()));
}

}  // namespace

Value binary_op(BinaryOp op, const Value& a, const Value& b, Budget& budget) {
    require_defined(a);
    require_defined(b);
    const bool numbers = a.is_number() && b.is_number();
    const bool ints = numbers && a.is_integral() && b.is_integral();
    switch (op) {
    case BinaryOp::Add:
        if (ints) return Value::integer(checked(add_overflow, a.as_int(), b.as_int()));
        if (numbers) return Value::floating(a.as_double() + b.as_double());
        if (a.is_string() && b.is_string()) {
            budget.check_string_size(a.as_string().size() + b.as_string().size());
            return markup_concat(a, b);
        }
        if (a.is_string()) type_error("can only concatenate str (not \"" + b.type_name() + "\") to str");
        if (a.is_sequence() && b.is_sequence() && a.seq_kind() == b.seq_kind()) {
            budget.check_items(a.as_list().size() + b.as_list().size());
            List out = a.as_list();
            out.insert(out.end(), b.as_list().begin(), b.as_list().end());
            return Value::sequence(std::move(out), a.seq_kind());
        }
        if (a.is_sequence()) type_error("can only concatenate " + a.type_name() + " (not \"" + b.type_name() + "\") to " + a.type_name());
        unsupported("+", a, b);
    case BinaryOp::Sub:
        if (ints) return Value::integer(checked(sub_overflow, a.as_int(), b.as_int()));
        if (numbers) return Value::floating(a.as_double() - b.as_double());
        unsupported("-", a, b);
    case BinaryOp::Mul:
        if (ints) return Value::integer(checked(mul_overflow, a.as_int(), b.as_int()));
        if (numbers) return Value::floating(a.as_double() * b.as_double());
        if ((a.is_string() || a.is_sequence()) && b.is_integral()) return repeat(a, b.as_int(), budget);
        if ((b.is_string() || b.is_sequence()) && a.is_integral()) return repeat(b, a.as_int(), budget);
        if (a.is_string() || b.is_string() || a.is_sequence() || b.is_sequence())
            type_error("can't multiply sequence by non-int of type '" + (a.is_string() || a.is_sequence() ? b : a).type_name() + "'");
        unsupported("*", a, b);
    case BinaryOp::Div:
        if (numbers) {
            if (b.as_double() == 0.0) throw RenderError("ZeroDivisionError", ints ? "division by zero" : "float division by zero");
            return Value::floating(a.as_double() / b.as_double());
        }
        unsupported("/", a, b);
    case BinaryOp::FloorDiv:
        if (numbers) return floored(a, b, ints, floor_div, float_floor_div, "float floor division by zero");
        unsupported("//", a, b);
    case BinaryOp::Mod:
        if (numbers) return floored(a, b, ints, floor_mod, float_mod, "float modulo");
        if (a.is_string()) return Value::string(percent_format(a.as_string(), b, budget), a.is_markup());
        unsupported("%", a, b);
    case BinaryOp::Pow:
        if (ints && b.as_int() >= 0) return Value::integer(int_pow(a.as_int(), b.as_int()));
        if (numbers) {
            if (a.as_double() == 0.0 && b.as_double() < 0)
                throw RenderError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
            const double r = std::pow(a.as_double(), b.as_double());
            if (std::isnan(r) && !std::isnan(a.as_double()) && !std::isnan(b.as_double()))
                throw RenderError("ValueError", "a negative number raised to a fractional power is complex, not supported");
            if (std::isinf(r) && std::isfinite(a.as_double()) && std::isfinite(b.as_double()))
                throw RenderError("OverflowError", "(34, 'Numerical result out of range')");
            return Value::floating(r);
        }
        unsupported("** or pow()", a, b);
    }
    unsupported("?", a, b);
}

Value negate(const Value& v) {
    require_defined(v);
    if (v.is_integral()) {
        if (v.as_int() == std::numeric_limits<int64_t>::min()) overflow();
        return Value::integer(-v.as_int());
    }
    if (v.is_float()) return Value::floating(-v.as_double());
    type_error("bad operand type for unary -: '" + v.type_name() + "'");
}

Value positive(const Value& v) {
    require_defined(v);
    if (v.is_integral()) return Value::integer(v.as_int());
    if (v.is_float()) return v;
    type_error("bad operand type for unary +: '" + v.type_name() + "'");
}

bool compare(CompareOp op, const Value& a, const Value& b) {
    switch (op) {
    case CompareOp::Eq: return equals(a, b);
    case CompareOp::Ne: return !equals(a, b);
    case CompareOp::Lt: return compare_order(a, b, "<") == -1;
    case CompareOp::Le: {
        const int c = compare_order(a, b, "<=");
        return c == -1 || c == 0;
    }
    case CompareOp::Gt: return compare_order(a, b, ">") == 1;
    case CompareOp::Ge: {
        const int c = compare_order(a, b, ">=");
        return c == 1 || c == 0;
    }
    case CompareOp::In: return contains(b, a);
    case CompareOp::NotIn: return !contains(b, a);
    }
    return false;
}

bool contains(const Value& container, const Value& item) {
    switch (container.type()) {
    case Value::Type::String:
        if (!item.is_string()) type_error("'in <string>' requires string as left operand, not " + item.type_name());
        return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Type::List:
        if (container.seq_kind() == Value::Seq::DictKeys) {
            for (const Value& v : container.as_list())
                if (equals(v, item)) return true;
            return false;
        }
        for (const Value& v : container.as_list())
            if (equals(v, item)) return true;
        return false;
    case Value::Type::Dict: return container.as_dict().find(item) != nullptr;
    case Value::Type::Undefined: return false;
    default: type_error("argument of type '" + container.type_name() + "' is not iterable");
    }
}

size_t length(const Value& v) {
    switch (v.type()) {
    case Value::Type::String: return count_code_points(v.as_string());
    case Value::Type::List:
        if (v.is_iterator()) type_error("object of type '" + v.type_name() + "' has no len()");
        return v.as_list().size();
    case Value::Type::Dict: return v.as_dict().size();
    case Value::Type::Undefined: return 0;
    default: type_error("object of type '" + v.type_name() + "' has no len()");
    }
}

List iterate(const Value& v) {
    switch (v.type()) {
    case Value::Type::List: return v.as_list();
    case Value::Type::Dict: {
        List keys;
        keys.reserve(v.as_dict().size());
        for (const auto& kv : v.as_dict().items()) keys.push_back(kv.first);
        return keys;
    }
    case Value::Type::String: {
        List chars;
        for (char32_t c : decode_utf8(v.as_string())) {
            std::string s;
            append_utf8(s, c);
            chars.push_back(Value::string(std::move(s), v.is_markup()));
        }
        return chars;
    }
    case Value::Type::Undefined: {
        if (v.undefined_info().unsafe) fail_undefined(v);
        return {};
    }
    default: type_error("'" + v.type_name() + "' object is not iterable");
    }
}

int64_t to_index(const Value& v, const char* what) {
    if (v.is_integral()) return v.as_int();
    if (v.is_undefined()) fail_undefined(v);
    type_error(std::string(what) + " must be integers or None or have an __index__ method");
}

Value slice(const Value& v, std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step) {
    const int64_t st = step.value_or(1);
    if (st == 0) throw RenderError("ValueError", "slice step cannot be zero");
    std::u32string chars;
    const bool is_str = v.is_string();
    if (is_str) chars = decode_utf8(v.as_string());
    const int64_t n = is_str ? int64_t(chars.size()) : int64_t(v.as_list().size());
    // Python's PySlice_AdjustIndices.
    auto adjust = [&](std::optional<int64_t> i, int64_t dflt) -> int64_t {
        if (!i) return dflt;
        int64_t x = *i;
        if (x < 0) {
            x += n;
            if (x < 0) x = st < 0 ? -1 : 0;
        } else if (x >= n) {
            x = st < 0 ? n - 1 : n;
        }
        return x;
    };
    const int64_t b = adjust(start, st < 0 ? n - 1 : 0);
    const int64_t e = adjust(stop, st < 0 ? -1 : n);
    std::vector<int64_t> idx;
    if (st > 0) {
        for (int64_t i = b; i < e; i += st) idx.push_back(i);
    } else {
        for (int64_t i = b; i > e; i += st) idx.push_back(i);
    }
    if (is_str) {
        std::u32string out;
        for (int64_t i : idx) out.push_back(chars[size_t(i)]);
        return Value::string(encode_utf8(out), v.is_markup());
    }
    List out;
    for (int64_t i : idx) out.push_back(v.as_list()[size_t(i)]);
    return Value::sequence(std::move(out), v.seq_kind());
}

std::string percent_format(const std::string& format, const Value& values, Budget& budget) {
    List args;
    const Dict* named = values.is_dict() ? &values.as_dict() : nullptr;
    if (values.is_tuple()) args = values.as_list();
    else args.push_back(values);
    size_t next_arg = 0;
    std::string out;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') {
            out += format[i];
            continue;
        }
        if (++i >= format.size()) throw RenderError("ValueError", "incomplete format");
        if (format[i] == '%') {
            out += '%';
            continue;
        }
        const Value* arg = nullptr;
        if (format[i] == '(') {
            const size_t close = format.find(')', i);
            if (close == std::string::npos || !named) throw RenderError("TypeError", "format requires a mapping");
            arg = named->find(std::string_view(format).substr(i + 1, close - i - 1));
            if (!arg) throw RenderError("KeyError", string_repr(format.substr(i + 1, close - i - 1)));
            i = close + 1;
        }
        std::string flags;
        while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string_view::npos) flags += format[i++];
        std::string width, precision;
        while (i < format.size() && is_digit(char32_t(format[i]))) width += format[i++];
        if (i < format.size() && format[i] == '.') {
            ++i;
            while (i < format.size() && is_digit(char32_t(format[i]))) precision += format[i++];
            if (precision.empty()) precision = "0";
        }
        if (i >= format.size()) throw RenderError("ValueError", "incomplete format");
        const char conv = format[i];
        if (!arg) {
            if (next_arg >= args.size()) type_error("not enough arguments for format string");
            arg = &args[next_arg++];
        }
        if (!width.empty()) budget.check_string_size(std::stoull(width.substr(0, 12)));
        if (!precision.empty()) budget.check_string_size(std::stoull(precision.substr(0, 12)));
        std::string piece;
        const std::string spec = "%" + flags + width + (precision.empty() ? "" : "." + precision);
        auto c_format = [&](const std::string& f, auto value) {
            const int n = std::snprintf(nullptr, 0, f.c_str(), value);
            std::string s(size_t(n) + 1, '\0');
            std::snprintf(s.data(), s.size(), f.c_str(), value);
            s.pop_back();
            return s;
        };
        switch (conv) {
        case 's':
        case 'r': {
            std::string text = conv == 's' ? to_str(*arg) : repr(*arg);
            if (!precision.empty()) text = encode_utf8(decode_utf8(text).substr(0, std::stoull(precision)));
            const size_t w = width.empty() ? 0 : std::stoull(width);
            const size_t len = count_code_points(text);
            if (len < w) text = flags.find('-') != std::string::npos ? text + std::string(w - len, ' ') : std::string(w - len, ' ') + text;
            piece = text;
            break;
        }
        case 'd':
        case 'i':
        case 'x':
        case 'X':
        case 'o': {
            require_defined(*arg);
            if (!arg->is_number()) type_error(std::string("%") + conv + " format: a real number is required, not " + arg->type_name());
            const long long n = arg->is_float() ? (long long)(arg->as_double()) : (long long)(arg->as_int());
            piece = c_format(spec + "ll" + (conv == 'i' ? 'd' : conv), n);
            break;
        }
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G': {
            require_defined(*arg);
            if (!arg->is_number()) type_error("must be real number, not " + arg->type_name());
            piece = c_format(spec + conv, arg->as_double());
            break;
        }
        default: throw RenderError("ValueError", std::string("unsupported format character '") + conv + "'");
        }
        out += piece;
        budget.check_string_size(out.size());
    }
    if (!named && next_arg < args.size()) type_error("not all arguments converted during string formatting");
    return out;
}

}  // namespace hetero::jinja
