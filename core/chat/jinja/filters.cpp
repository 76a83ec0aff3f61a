#include "filters.hpp"

#include "args.hpp"
#include "attributes.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "json.hpp"
#include "markup.hpp"
#include "operators.hpp"
#include "renderer.hpp"
#include "text.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace hetero::jinja {

namespace {

// markupsafe.soft_str: strings (Markup included) as they are, others through str().
Value soft_str(const Value& v) { return v.is_string() ? v : Value::string(to_str(v)); }

int64_t int_param(const Value& v, const char* what) {
    if (v.is_integral()) return v.as_int();
    if (v.is_float() && std::isfinite(v.as_double())) return int64_t(v.as_double());
    type_error(std::string("'") + v.type_name() + "' object cannot be interpreted as an integer (" + what + ")");
}

Value generator(List items) { return Value::sequence(std::move(items), Value::Seq::Generator); }

// make_attrgetter: "a.b.0" walks items and attributes as Jinja2 does.
Value attr_path(Renderer& r, const Value& item, const Value& attribute, const Value* fallback = nullptr) {
    if (attribute.is_none()) return item;
    Value cur = item;
    std::vector<Value> parts;
    if (attribute.is_string()) {
        for (const std::string& p : split(attribute.as_string(), std::string("."), -1)) {
            const bool digits = !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
            parts.push_back(digits ? Value::integer(std::stoll(p.substr(0, 18))) : Value::string(p));
        }
    } else {
        parts.push_back(attribute);
    }
    for (const Value& part : parts) {
        cur = r.item(cur, part);
        if (fallback && cur.is_undefined()) cur = *fallback;
    }
    return cur;
}

Value lower_if_string(const Value& v) { return v.is_string() ? Value::string(lower(v.as_string())) : v; }

// Python's sorted(): stable, using < only.
void python_sort(std::vector<std::pair<Value, Value>>& keyed, bool reverse) {
    auto less = [](const Value& a, const Value& b) { return compare(CompareOp::Lt, a, b); };
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
        return reverse ? less(b.first, a.first) : less(a.first, b.first);
    });
}

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

Value f_attr(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_attr", {"name"});
    if (!a.has(0) || !a[0].is_string()) type_error("attribute name must be string");
    return get_python_attribute(v, a[0].as_string());
}

Value f_batch(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_batch", {"linecount", "fill_with"});
    const int64_t n = int_param(a[0], "linecount");
    if (n <= 0) throw RenderError("ValueError", "batch size must be positive");
    List out, cur;
    for (const Value& item : iterate(v)) {
        if (int64_t(cur.size()) == n) {
            out.push_back(Value::list(std::move(cur)));
            cur.clear();
        }
        cur.push_back(item);
    }
    if (!cur.empty()) {
        if (a.has(1) && !a[1].is_none()) {
            r.budget().check_items(uint64_t(n));
            while (int64_t(cur.size()) < n) cur.push_back(a[1]);
        }
        out.push_back(Value::list(std::move(cur)));
    }
    return generator(std::move(out));
}

Value f_capitalize(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_capitalize", {});
    const Value s = soft_str(v);
    return Value::string(capitalize(s.as_string()), s.is_markup());
}

Value f_center(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_center", {"width"});
    const int64_t width = a.has(0) ? int_param(a[0], "width") : 80;
    CallArgs method_args;
    method_args.positional.push_back(Value::integer(width));
    return r.call(r.attribute(soft_str(v), "center"), method_args);
}

Value f_length(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "len", {});
    return Value::integer(int64_t(length(v)));
}

Value f_default(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_default", {"default_value", "boolean"});
    const bool boolean = a.has(1) && a[1].truthy();
    if (v.is_undefined() || (boolean && !v.truthy())) return a.get_or(0, Value::string(""));
    return v;
}

Value f_dictsort(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_dictsort", {"case_sensitive", "by", "reverse"});
    const bool case_sensitive = a.has(0) && a[0].truthy();
    const std::string by = a.has(1) && a[1].is_string() ? a[1].as_string() : "key";
    if (by != "key" && by != "value") throw RenderError("FilterArgumentError", "You can only sort by either \"key\" or \"value\"");
    require_defined(v);
    if (!v.is_dict()) type_error("'" + v.type_name() + "' object has no attribute 'items'");
    std::vector<std::pair<Value, Value>> keyed;
    for (const auto& [k, item] : v.as_dict().items()) {
        Value key = by == "key" ? k : item;
        keyed.emplace_back(case_sensitive ? key : lower_if_string(key), Value::tuple({k, item}));
    }
    python_sort(keyed, a.has(2) && a[2].truthy());
    List out;
    for (auto& kv : keyed) out.push_back(std::move(kv.second));
    return Value::list(std::move(out));
}

Value f_escape(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "escape", {});
    if (v.is_markup()) return v;
    return Value::string(html_escape(to_str(v)), true);
}

Value f_forceescape(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_forceescape", {});
    return Value::string(html_escape(to_str(v)), true);
}

Value f_first(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_first", {});
    const List items = iterate(v);
    if (items.empty()) {
        UndefinedInfo info;
        info.hint = "No first item, sequence was empty.";
        return Value::undefined(std::move(info));
    }
    return items.front();
}

Value f_last(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_last", {});
    if (v.is_iterator()) type_error("'" + v.type_name() + "' object is not reversible");
    if (!v.is_string() && !v.is_items() && !v.is_dict() && !v.is_undefined()) type_error("'" + v.type_name() + "' object is not reversible");
    const List items = iterate(v);
    if (items.empty()) {
        UndefinedInfo info;
        info.hint = "No last item, sequence was empty.";
        return Value::undefined(std::move(info));
    }
    return items.back();
}

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

Value f_format(Renderer& r, const Value& v, CallArgs& args) {
    if (!args.positional.empty() && !args.keywords.empty())
        throw RenderError("FilterArgumentError", "can't handle positional and keyword arguments at the same time");
    Value values;
    if (!args.keywords.empty()) {
        Dict d;
        for (auto& [k, item] : args.keywords) d.set(k, item);
        values = Value::dict(std::move(d));
    } else {
        values = Value::tuple(args.positional);
    }
    const Value s = soft_str(v);
    return Value::string(percent_format(s.as_string(), values, r.budget()), s.is_markup());
}

Value f_indent(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_indent", {"width", "first", "blank"});
    std::string indention;
    if (a.has(0) && a[0].is_string()) {
        indention = a[0].as_string();
    } else {
        const int64_t width = a.has(0) ? int_param(a[0], "width") : 4;
        if (width > 0) {
            r.budget().check_string_size(uint64_t(width));
            indention.assign(size_t(width), ' ');
        }
    }
    require_defined(v);
    if (!v.is_string()) type_error("unsupported operand type(s) for +=: '" + v.type_name() + "' and 'str'");
    const std::vector<std::string> lines = splitlines(v.as_string() + "\n", false);
    r.budget().check_string_size(v.as_string().size() + (lines.size() + 1) * indention.size());
    std::string out;
    if (a.has(2) && a[2].truthy()) {
        for (size_t i = 0; i < lines.size(); ++i) {
            if (i) out += "\n" + indention;
            out += lines[i];
        }
    } else {
        out = lines.empty() ? std::string() : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) out += "\n" + (lines[i].empty() ? std::string() : indention + lines[i]);
    }
    if (a.has(1) && a[1].truthy()) out = indention + out;
    return Value::string(std::move(out), v.is_markup());
}

Value f_items(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_items", {});
    if (v.is_undefined()) return generator({});
    if (!v.is_dict()) type_error("Can only get item pairs from a mapping.");
    List out;
    for (const auto& [k, item] : v.as_dict().items()) out.push_back(Value::tuple({k, item}));
    return generator(std::move(out));
}

Value f_join(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_join", {"d", "attribute"});
    const std::string sep = a.has(0) ? to_str(a[0]) : std::string();
    std::string out;
    bool first = true;
    for (const Value& item : iterate(v)) {
        if (!first) out += sep;
        first = false;
        out += to_str(a.has(1) && !a[1].is_none() ? attr_path(r, item, a[1]) : item);
        r.budget().check_string_size(out.size());
    }
    return Value::string(std::move(out));
}

Value f_list(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "list", {});
    return Value::list(iterate(v));
}

Value f_lower(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_lower", {});
    const Value s = soft_str(v);
    return Value::string(lower(s.as_string()), s.is_markup());
}

Value f_upper(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_upper", {});
    const Value s = soft_str(v);
    return Value::string(upper(s.as_string()), s.is_markup());
}

Value f_map(Renderer& r, const Value& v, CallArgs& args) {
    if (!v.truthy()) return generator({});
    List out;
    if (args.positional.empty()) {
        Value attribute, fallback = Value::none();
        bool has_attribute = false;
        for (const auto& [k, item] : args.keywords) {
            if (k == "attribute") {
                attribute = item;
                has_attribute = true;
            } else if (k == "default") {
                fallback = item;
            } else {
                throw RenderError("FilterArgumentError", "Unexpected keyword argument " + string_repr(k));
            }
        }
        if (!has_attribute) throw RenderError("FilterArgumentError", "map requires a filter argument");
        for (const Value& item : iterate(v)) {
            r.budget().step();
            out.push_back(attr_path(r, item, attribute, fallback.is_none() ? nullptr : &fallback));
        }
        return generator(std::move(out));
    }
    const Value name = args.positional[0];
    if (!name.is_string()) type_error("filter name must be a string");
    CallArgs rest;
    rest.positional.assign(args.positional.begin() + 1, args.positional.end());
    rest.keywords = args.keywords;
    for (const Value& item : iterate(v)) {
        CallArgs call_args = rest;
        out.push_back(r.filter(name.as_string(), item, call_args));
    }
    return generator(std::move(out));
}

Value select_or_reject(Renderer& r, const Value& v, CallArgs& args, bool select, bool by_attribute) {
    if (!v.truthy()) return generator({});
    size_t next = 0;
    Value attribute;
    if (by_attribute) {
        if (args.positional.empty()) throw RenderError("FilterArgumentError", "Missing parameter for attribute name");
        attribute = args.positional[next++];
    }
    std::optional<std::string> test_name;
    CallArgs test_args;
    if (next < args.positional.size()) {
        if (!args.positional[next].is_string()) type_error("test name must be a string");
        test_name = args.positional[next].as_string();
        test_args.positional.assign(args.positional.begin() + long(next) + 1, args.positional.end());
        test_args.keywords = args.keywords;
    }
    List out;
    for (const Value& item : iterate(v)) {
        r.budget().step();
        const Value probe = by_attribute ? attr_path(r, item, attribute) : item;
        bool pass;
        if (test_name) {
            CallArgs call_args = test_args;
            pass = r.test(*test_name, probe, call_args);
        } else {
            pass = probe.truthy();
        }
        if (pass == select) out.push_back(item);
    }
    return generator(std::move(out));
}

Value f_select(Renderer& r, const Value& v, CallArgs& a) { return select_or_reject(r, v, a, true, false); }
Value f_reject(Renderer& r, const Value& v, CallArgs& a) { return select_or_reject(r, v, a, false, false); }
Value f_selectattr(Renderer& r, const Value& v, CallArgs& a) { return select_or_reject(r, v, a, true, true); }
Value f_rejectattr(Renderer& r, const Value& v, CallArgs& a) { return select_or_reject(r, v, a, false, true); }

Value min_or_max(Renderer& r, const Value& v, CallArgs& args, bool want_max, const char* name) {
    const BoundArgs a(args, name, {"case_sensitive", "attribute"});
    const bool case_sensitive = a.has(0) && a[0].truthy();
    const List items = iterate(v);
    if (items.empty()) {
        UndefinedInfo info;
        info.hint = "No aggregated item, sequence was empty.";
        return Value::undefined(std::move(info));
    }
    auto key = [&](const Value& item) {
        Value k = a.has(1) ? attr_path(r, item, a[1]) : item;
        return case_sensitive ? k : lower_if_string(k);
    };
    size_t best = 0;
    Value best_key = key(items[0]);
    for (size_t i = 1; i < items.size(); ++i) {
        Value k = key(items[i]);
        if (compare(CompareOp::Lt, want_max ? best_key : k, want_max ? k : best_key)) {
            best = i;
            best_key = std::move(k);
        }
    }
    return items[best];
}

Value f_min(Renderer& r, const Value& v, CallArgs& a) { return min_or_max(r, v, a, false, "do_min"); }
Value f_max(Renderer& r, const Value& v, CallArgs& a) { return min_or_max(r, v, a, true, "do_max"); }

Value f_replace(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_replace", {"old", "new", "count"});
    if (!a.has(0) || !a.has(1)) type_error("do_replace() missing required arguments: 'old' and 'new'");
    const std::string s = to_str(v), old_text = to_str(a[0]), new_text = to_str(a[1]);
    const int64_t count = a.has(2) && !a[2].is_none() ? int_param(a[2], "count") : -1;
    uint64_t n = count_occurrences(s, old_text);
    if (count >= 0 && uint64_t(count) < n) n = uint64_t(count);
    r.budget().check_string_size(s.size() + n * new_text.size());
    return Value::string(replace_all(s, old_text, new_text, long(count)));
}

Value f_reverse(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_reverse", {});
    if (v.is_string()) {
        std::u32string u = decode_utf8(v.as_string());
        std::reverse(u.begin(), u.end());
        return Value::string(encode_utf8(u), v.is_markup());
    }
    List items = iterate(v);
    std::reverse(items.begin(), items.end());
    if (v.is_iterator()) return Value::list(std::move(items));  // reversed() fails, Jinja2 falls back to a list
    return Value::sequence(std::move(items), Value::Seq::ReverseIterator);
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

Value f_safe(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_mark_safe", {});
    return Value::string(to_str(v), true);
}

Value f_slice(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_slice", {"slices", "fill_with"});
    const int64_t slices = int_param(a[0], "slices");
    if (slices <= 0) throw RenderError("ZeroDivisionError", "integer division or modulo by zero");
    r.budget().check_items(uint64_t(slices));
    const List seq = iterate(v);
    const int64_t n = int64_t(seq.size());
    const int64_t per = n / slices, extra = n % slices;
    int64_t offset = 0;
    List out;
    for (int64_t i = 0; i < slices; ++i) {
        const int64_t start = offset + i * per;
        if (i < extra) ++offset;
        const int64_t end = offset + (i + 1) * per;
        List part(seq.begin() + start, seq.begin() + end);
        if (a.has(1) && !a[1].is_none() && i >= extra) part.push_back(a[1]);
        out.push_back(Value::list(std::move(part)));
    }
    return generator(std::move(out));
}

Value f_sort(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_sort", {"reverse", "case_sensitive", "attribute"});
    const bool case_sensitive = a.has(1) && a[1].truthy();
    std::vector<Value> attributes;
    if (a.has(2) && !a[2].is_none()) {
        if (a[2].is_string()) {
            for (const std::string& part : split(a[2].as_string(), std::string(","), -1)) attributes.push_back(Value::string(part));
        } else {
            attributes.push_back(a[2]);
        }
    }
    std::vector<std::pair<Value, Value>> keyed;
    for (const Value& item : iterate(v)) {
        List key;
        if (attributes.empty()) {
            key.push_back(case_sensitive ? item : lower_if_string(item));
        } else {
            for (const Value& attribute : attributes) {
                const Value k = attr_path(r, item, attribute);
                key.push_back(case_sensitive ? k : lower_if_string(k));
            }
        }
        keyed.emplace_back(Value::list(std::move(key)), item);
    }
    python_sort(keyed, a.has(0) && a[0].truthy());
    List out;
    for (auto& kv : keyed) out.push_back(std::move(kv.second));
    return Value::list(std::move(out));
}

Value f_string(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "soft_str", {});
    return soft_str(v);
}

Value f_sum(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_sum", {"attribute", "start"});
    Value total = a.get_or(1, Value::integer(0));
    for (const Value& item : iterate(v)) {
        const Value x = a.has(0) && !a[0].is_none() ? attr_path(r, item, a[0]) : item;
        if (total.is_string()) type_error("sum() can't sum strings [use ''.join(seq) instead]");
        total = binary_op(BinaryOp::Add, total, x, r.budget());
    }
    return total;
}

Value f_title(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_title", {});
    // Jinja2's own title: words begin after runs of -, whitespace, ( { [ <.
    const Value s = soft_str(v);
    const std::u32string u = decode_utf8(s.as_string());
    auto is_separator = [](char32_t c) { return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || is_space(c); };
    std::u32string out;
    size_t i = 0;
    while (i < u.size()) {
        size_t j = i;
        const bool sep = is_separator(u[i]);
        while (j < u.size() && is_separator(u[j]) == sep) ++j;
        if (sep) {
            out.append(u, i, j - i);
        } else {
            out.push_back(to_upper(u[i]));
            for (size_t k = i + 1; k < j; ++k) out.push_back(to_lower(u[k]));
        }
        i = j;
    }
    return Value::string(encode_utf8(out), s.is_markup());
}

Value f_tojson(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "_tojson", {"indent", "ensure_ascii", "sort_keys", "separators"});
    JsonStyle style;
    if (a.has(0) && !a[0].is_none()) {
        if (a[0].is_string()) {
            style.indent = a[0].as_string();
        } else {
            const int64_t n = int_param(a[0], "indent");
            r.budget().check_string_size(uint64_t(std::max<int64_t>(n, 0)));
            style.indent = std::string(size_t(std::max<int64_t>(n, 0)), ' ');
        }
        style.item_separator = ",";
    }
    if (a.has(1) && a[1].truthy()) throw RenderError("TypeError", "tojson(ensure_ascii=True) is not supported by this engine");
    style.sort_keys = a.has(2) && a[2].truthy();
    if (a.has(3) && !a[3].is_none()) {
        const List seps = iterate(a[3]);
        if (seps.size() != 2 || !seps[0].is_string() || !seps[1].is_string()) type_error("separators must be a pair of strings");
        style.item_separator = seps[0].as_string();
        style.key_separator = seps[1].as_string();
    }
    std::string out = to_json(v, style);
    r.budget().check_string_size(out.size());
    return Value::string(std::move(out));
}

Value f_trim(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_trim", {"chars"});
    const Value s = soft_str(v);
    std::optional<std::string> chars;
    if (a.has(0) && !a[0].is_none()) {
        if (!a[0].is_string()) type_error("strip arg must be None or str");
        chars = a[0].as_string();
    }
    return Value::string(strip(s.as_string(), true, true, chars), s.is_markup());
}

Value f_truncate(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_truncate", {"length", "killwords", "end", "leeway"});
    const int64_t len = a.has(0) ? int_param(a[0], "length") : 255;
    const bool killwords = a.has(1) && a[1].truthy();
    const std::string end = a.has(2) ? to_str(a[2]) : "...";
    const int64_t leeway = a.has(3) && !a[3].is_none() ? int_param(a[3], "leeway") : 5;
    const int64_t end_len = int64_t(count_code_points(end));
    if (len < end_len) throw RenderError("AssertionError", "expected length >= " + std::to_string(end_len) + ", got " + std::to_string(len));
    if (leeway < 0) throw RenderError("AssertionError", "expected leeway >= 0, got " + std::to_string(leeway));
    const std::u32string u = decode_utf8(to_str(v));
    if (int64_t(u.size()) <= len + leeway) return Value::string(encode_utf8(u));
    std::string head = encode_utf8(std::u32string_view(u).substr(0, size_t(len - end_len)));
    if (killwords) return Value::string(head + end);
    const size_t space = head.rfind(' ');
    if (space != std::string::npos) head = head.substr(0, space);
    return Value::string(head + end);
}

Value f_unique(Renderer& r, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_unique", {"case_sensitive", "attribute"});
    const bool case_sensitive = a.has(0) && a[0].truthy();
    Dict seen;
    List out;
    for (const Value& item : iterate(v)) {
        Value key = a.has(1) && !a[1].is_none() ? attr_path(r, item, a[1]) : item;
        if (!case_sensitive) key = lower_if_string(key);
        if (seen.find(key)) continue;
        seen.set(key, Value::none());
        out.push_back(item);
    }
    return generator(std::move(out));
}

Value f_wordcount(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_wordcount", {});
    int64_t words = 0;
    bool in_word = false;
    for (char32_t c : decode_utf8(to_str(v))) {
        const bool word_char = is_alnum(c) || c == '_';
        if (word_char && !in_word) ++words;
        in_word = word_char;
    }
    return Value::integer(words);
}

// Jinja2 filters chat templates do not use; Renderer::filter names them in its error.
Value f_unsupported(Renderer&, const Value&, CallArgs&) { throw RenderError("TemplateRuntimeError", "filter not supported"); }

const std::pair<const char*, FilterFn> kFilters[] = {
    {"abs", f_abs},
    {"attr", f_attr},
    {"batch", f_batch},
    {"capitalize", f_capitalize},
    {"center", f_center},
    {"count", f_length},
    {"d", f_default},
    {"default", f_default},
    {"dictsort", f_dictsort},
    {"e", f_escape},
    {"escape", f_escape},
    {"filesizeformat", f_unsupported},
    {"first", f_first},
    {"float", f_float},
    {"forceescape", f_forceescape},
    {"format", f_format},
    {"groupby", f_unsupported},
    {"indent", f_indent},
    {"int", f_int},
    {"join", f_join},
    {"last", f_last},
    {"length", f_length},
    {"list", f_list},
    {"lower", f_lower},
    {"items", f_items},
    {"map", f_map},
    {"min", f_min},
    {"max", f_max},
    {"pprint", f_unsupported},
    {"random", f_unsupported},
    {"reject", f_reject},
    {"rejectattr", f_rejectattr},
    {"replace", f_replace},
    {"reverse", f_reverse},
    {"round", f_round},
    {"safe", f_safe},
    {"select", f_select},
    {"selectattr", f_selectattr},
    {"slice", f_slice},
    {"sort", f_sort},
    {"string", f_string},
    {"striptags", f_unsupported},
    {"sum", f_sum},
    {"title", f_title},
    {"trim", f_trim},
    {"truncate", f_truncate},
    {"unique", f_unique},
    {"upper", f_upper},
    {"urlencode", f_unsupported},
    {"urlize", f_unsupported},
    {"wordcount", f_wordcount},
    {"wordwrap", f_unsupported},
    {"xmlattr", f_unsupported},
    {"tojson", f_tojson},
};

}  // namespace

FilterFn find_filter(std::string_view name) {
    for (const auto& [n, fn] : kFilters)
        if (name == n) return fn;
    return nullptr;
}

bool has_filter(std::string_view name) { return find_filter(name) != nullptr; }

bool filter_unsupported(std::string_view name) { return find_filter(name) == f_unsupported; }

}  // namespace hetero::jinja
