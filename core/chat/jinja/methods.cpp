#include "methods.hpp"

#include "args.hpp"
#include "budget.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "operators.hpp"
#include "renderer.hpp"
#include "text.hpp"

#include <algorithm>
#include <array>

namespace hetero::jinja {

namespace {

constexpr std::array kStrMethods = {
    "capitalize", "casefold", "center",  "count",     "encode",     "endswith",   "expandtabs", "find",       "format",
    "format_map", "index",    "isalnum", "isalpha",   "isascii",    "isdecimal",  "isdigit",    "isidentifier", "islower",
    "isnumeric",  "isprintable", "isspace", "istitle", "isupper",   "join",       "ljust",      "lower",      "lstrip",
    "maketrans",  "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition",
    "rsplit",     "rstrip",   "split",   "splitlines", "startswith", "strip",     "swapcase",   "title",      "translate",
    "upper",      "zfill"};
constexpr std::array kDictMethods = {"clear", "copy", "fromkeys", "get", "items", "keys", "pop", "popitem", "setdefault", "update", "values"};
constexpr std::array kDictMutating = {"clear", "pop", "popitem", "setdefault", "update"};
constexpr std::array kListMethods = {"append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse", "sort"};
constexpr std::array kListMutating = {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};
constexpr std::array kTupleMethods = {"count", "index"};

template <size_t N>
bool in(const std::array<const char*, N>& names, std::string_view name) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

const std::string& str_arg(const BoundArgs& a, size_t i, const std::string& method) {
    if (!a[i].is_string()) type_error(method + "() argument must be str, not " + a[i].type_name());
    return a[i].as_string();
}

std::optional<std::string> optional_str(const BoundArgs& a, size_t i, const std::string& method) {
    if (!a.has(i) || a[i].is_none()) return std::nullopt;
    return str_arg(a, i, method);
}

int64_t int_arg(const BoundArgs& a, size_t i, int64_t fallback) {
    if (!a.has(i)) return fallback;
    if (!a[i].is_integral()) type_error("'" + a[i].type_name() + "' object cannot be interpreted as an integer");
    return a[i].as_int();
}

Value str_list(const std::vector<std::string>& parts) {
    List items;
    for (const auto& p : parts) items.push_back(Value::string(p));
    return Value::list(std::move(items));
}

// Python's code point index of a byte offset.
int64_t code_point_index(const std::string& s, size_t byte_offset) { return int64_t(count_code_points(std::string_view(s).substr(0, byte_offset))); }

Value pad(Renderer& r, const std::string& s, int64_t width, char32_t fill, int where /* -1 left-justify, 0 center, 1 right */) {
    const int64_t len = int64_t(count_code_points(s));
    if (width <= len) return Value::string(s);
    r.budget().check_string_size(uint64_t(width) * 4);
    const int64_t total = width - len;
    int64_t left = where < 0 ? 0 : where > 0 ? total : total / 2 + (total & width & 1);
    std::string out;
    for (int64_t i = 0; i < left; ++i) append_utf8(out, fill);
    out += s;
    for (int64_t i = 0; i < total - left; ++i) append_utf8(out, fill);
    return Value::string(std::move(out));
}

char32_t fill_char(const BoundArgs& a, size_t i, const std::string& method) {
    if (!a.has(i)) return U' ';
    const std::u32string f = decode_utf8(str_arg(a, i, method));
    if (f.size() != 1) type_error("The fill character must be exactly one character long");
    return f[0];
}

// str.format with automatic ({}), numbered ({0}) and named ({name}) fields and !r / !s.
std::string str_format(Renderer& r, const std::string& fmt, const CallArgs& args) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
                out += '}';
                ++i;
                continue;
            }
            throw RenderError("ValueError", "Single '}' encountered in format string");
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        const size_t close = fmt.find('}', i);
        if (close == std::string::npos) throw RenderError("ValueError", "expected '}' before end of string");
        std::string field = fmt.substr(i + 1, close - i - 1);
        i = close;
        char conversion = 0;
        if (const size_t bang = field.find('!'); bang != std::string::npos) {
            conversion = bang + 1 < field.size() ? field[bang + 1] : 0;
            field = field.substr(0, bang);
        }
        if (field.find(':') != std::string::npos) throw RenderError("ValueError", "format specifications are not supported by this engine");
        const Value* v = nullptr;
        if (field.empty()) {
            if (auto_index >= args.positional.size())
                throw RenderError("IndexError", "Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
            v = &args.positional[auto_index++];
        } else if (std::all_of(field.begin(), field.end(), [](char d) { return d >= '0' && d <= '9'; })) {
            const size_t n = std::stoul(field.substr(0, 9));
            if (n >= args.positional.size())
                throw RenderError("IndexError", "Replacement index " + std::to_string(n) + " out of range for positional args tuple");
            v = &args.positional[n];
        } else {
            for (const auto& kv : args.keywords)
                if (kv.first == field) v = &kv.second;
            if (!v) throw RenderError("KeyError", string_repr(field));
        }
        out += conversion == 'r' ? repr(*v) : to_str(*v);
        r.budget().check_string_size(out.size());
    }
    return out;
}

// One call of a str method: the string, the method's name and its arguments.
struct StrCall {
    Renderer& r;
    const Value& self;
    const std::string& s;
    const std::string& name;
    CallArgs& args;
    BoundArgs bind(std::initializer_list<const char*> params) const { return BoundArgs(args, name, params); }
};

Value str_affix_test(const StrCall& c) {  // startswith, endswith
    const BoundArgs a = c.bind({"prefix", "start", "end"});
    if (a.has(1) || a.has(2)) throw RenderError("TypeError", c.name + "() with start/end is not supported by this engine");
    List options;
    if (a[0].is_tuple()) options = a[0].as_list();
    else options.push_back(a[0]);
    for (const Value& o : options) {
        if (!o.is_string())
            type_error(c.name + " first arg must be str or a tuple of str, not " + o.type_name());
        const std::string& p = o.as_string();
        if (p.size() > c.s.size()) continue;
        if (c.name == "startswith" ? c.s.compare(0, p.size(), p) == 0 : c.s.compare(c.s.size() - p.size(), p.size(), p) == 0)
            return Value::boolean(true);
    }
    return Value::boolean(false);
}

Value str_change_case(const StrCall& c) {  // upper, lower, casefold, title, capitalize, swapcase
    c.bind({});
    const std::string& s = c.s;
    if (c.name == "upper") return Value::string(upper(s), c.self.is_markup());
    if (c.name == "lower" || c.name == "casefold") return Value::string(lower(s), c.self.is_markup());
    if (c.name == "title") return Value::string(py_title(s), c.self.is_markup());
    if (c.name == "capitalize") return Value::string(capitalize(s), c.self.is_markup());
    std::u32string u = decode_utf8(s);
    for (char32_t& ch : u) ch = is_cased_upper(ch) ? to_lower(ch) : to_upper(ch);
    return Value::string(encode_utf8(u), c.self.is_markup());
}

Value str_replace(const StrCall& c) {
    const BoundArgs a = c.bind({"old", "new", "count"});
    const std::string& old_text = str_arg(a, 0, c.name);
    const std::string& new_text = str_arg(a, 1, c.name);
    const int64_t count = int_arg(a, 2, -1);
    uint64_t n = count_occurrences(c.s, old_text);
    if (count >= 0 && uint64_t(count) < n) n = uint64_t(count);
    c.r.budget().check_string_size(c.s.size() + n * new_text.size());
    return Value::string(replace_all(c.s, old_text, new_text, long(count)), c.self.is_markup());
}

Value str_find(const StrCall& c) {  // find, rfind, index, rindex, count
    const BoundArgs a = c.bind({"sub", "start", "end"});
    if (a.has(1) || a.has(2)) throw RenderError("TypeError", c.name + "() with start/end is not supported by this engine");
    const std::string& sub = str_arg(a, 0, c.name);
    if (c.name == "count") return Value::integer(int64_t(count_occurrences(c.s, sub)));
    const size_t at = c.name[0] == 'r' ? c.s.rfind(sub) : c.s.find(sub);
    if (at == std::string::npos) {
        if (c.name == "index" || c.name == "rindex") throw RenderError("ValueError", "substring not found");
        return Value::integer(-1);
    }
    return Value::integer(code_point_index(c.s, at));
}

Value str_join(const StrCall& c) {
    const BoundArgs a = c.bind({"iterable"});
    const List items = iterate(a[0]);
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].is_string())
            type_error("sequence item " + std::to_string(i) + ": expected str instance, " + items[i].type_name() + " found");
        if (i) out += c.s;
        out += items[i].as_string();
        c.r.budget().check_string_size(out.size());
    }
    return Value::string(std::move(out));
}

Value str_zfill(const StrCall& c) {
    const BoundArgs a = c.bind({"width"});
    const std::string& s = c.s;
    const int64_t width = int_arg(a, 0, 0);
    const int64_t len = int64_t(count_code_points(s));
    if (width <= len) return Value::string(s);
    c.r.budget().check_string_size(uint64_t(width));
    const bool sign = !s.empty() && (s[0] == '+' || s[0] == '-');
    return Value::string((sign ? s.substr(0, 1) : "") + std::string(size_t(width - len), '0') + (sign ? s.substr(1) : s));
}

Value str_remove_affix(const StrCall& c) {  // removeprefix, removesuffix
    const BoundArgs a = c.bind({"affix"});
    const std::string& s = c.s;
    const std::string& p = str_arg(a, 0, c.name);
    if (c.name == "removeprefix") return Value::string(s.compare(0, p.size(), p) == 0 ? s.substr(p.size()) : s);
    if (p.size() <= s.size() && s.compare(s.size() - p.size(), p.size(), p) == 0 && !p.empty())
        return Value::string(s.substr(0, s.size() - p.size()));
    return Value::string(s);
}

Value str_partition(const StrCall& c) {  // partition, rpartition
    const BoundArgs a = c.bind({"sep"});
    const std::string& s = c.s;
    const std::string& sep = str_arg(a, 0, c.name);
    if (sep.empty()) throw RenderError("ValueError", "empty separator");
    const size_t at = c.name == "partition" ? s.find(sep) : s.rfind(sep);
    if (at == std::string::npos) {
        if (c.name == "partition") return Value::tuple({Value::string(s), Value::string(""), Value::string("")});
        return Value::tuple({Value::string(""), Value::string(""), Value::string(s)});
    }
    return Value::tuple({Value::string(s.substr(0, at)), Value::string(sep), Value::string(s.substr(at + sep.size()))});
}

// isspace, isalpha, ...; nothing for an is-name this engine does not know.
std::optional<Value> str_predicate(const StrCall& c) {
    c.bind({});
    const std::u32string u = decode_utf8(c.s);
    auto all = [&](auto pred) { return !u.empty() && std::all_of(u.begin(), u.end(), pred); };
    const std::string& name = c.name;
    if (name == "isspace") return Value::boolean(all(is_space));
    if (name == "isalpha") return Value::boolean(all(is_alpha));
    if (name == "isdigit" || name == "isdecimal" || name == "isnumeric") return Value::boolean(all(is_digit));
    if (name == "isalnum") return Value::boolean(all(is_alnum));
    if (name == "isascii") return Value::boolean(is_ascii(c.s));
    if (name == "islower" || name == "isupper") {
        bool cased = false;
        for (char32_t ch : u) {
            if (is_cased_upper(ch) || is_cased_lower(ch)) cased = true;
            if (name == "islower" ? is_cased_upper(ch) : is_cased_lower(ch)) return Value::boolean(false);
        }
        return Value::boolean(cased);
    }
    return std::nullopt;
}

Value string_method(Renderer& r, const Value& self, const std::string& name, CallArgs& args) {
    const std::string& s = self.as_string();
    const StrCall c{r, self, s, name, args};
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        const BoundArgs a = c.bind({"chars"});
        return Value::string(strip(s, name != "rstrip", name != "lstrip", optional_str(a, 0, name)), self.is_markup());
    }
    if (name == "split" || name == "rsplit") {
        const BoundArgs a = c.bind({"sep", "maxsplit"});
        std::optional<std::string> sep = optional_str(a, 0, name);
        if (sep && sep->empty()) throw RenderError("ValueError", "empty separator");
        return str_list(split(s, sep, long(int_arg(a, 1, -1)), name == "rsplit"));
    }
    if (name == "splitlines") {
        const BoundArgs a = c.bind({"keepends"});
        return str_list(splitlines(s, a.has(0) && a[0].truthy()));
    }
    if (name == "startswith" || name == "endswith") return str_affix_test(c);
    if (name == "upper" || name == "lower" || name == "casefold" || name == "title" || name == "capitalize" || name == "swapcase")
        return str_change_case(c);
    if (name == "replace") return str_replace(c);
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") return str_find(c);
    if (name == "join") return str_join(c);
    if (name == "center" || name == "ljust" || name == "rjust") {
        const BoundArgs a = c.bind({"width", "fillchar"});
        return pad(r, s, int_arg(a, 0, 0), fill_char(a, 1, name), name == "ljust" ? -1 : name == "rjust" ? 1 : 0);
    }
    if (name == "zfill") return str_zfill(c);
    if (name == "removeprefix" || name == "removesuffix") return str_remove_affix(c);
    if (name == "partition" || name == "rpartition") return str_partition(c);
    if (name == "format") return Value::string(str_format(r, s, args));
    if (name.rfind("is", 0) == 0)
        if (std::optional<Value> v = str_predicate(c)) return *v;
    throw RenderError("TypeError", "str." + name + "() is not supported by this engine");
}

Value dict_method(const Value& self, const std::string& name, CallArgs& args) {
    const Dict& d = self.as_dict();
    if (name == "get") {
        const BoundArgs a(args, name, {"key", "default"});
        if (!a.has(0)) type_error("get expected at least 1 argument, got 0");
        if (const Value* v = d.find(a[0])) return *v;
        return a.get_or(1, Value::none());
    }
    const BoundArgs a(args, name, {});
    List out;
    for (const auto& [k, v] : d.items()) {
        if (name == "keys") out.push_back(k);
        else if (name == "values") out.push_back(v);
        else if (name == "items") out.push_back(Value::tuple({k, v}));
    }
    if (name == "keys") return Value::sequence(std::move(out), Value::Seq::DictKeys);
    if (name == "values") return Value::sequence(std::move(out), Value::Seq::DictValues);
    if (name == "items") return Value::sequence(std::move(out), Value::Seq::DictItems);
    if (name == "copy") return self;
    throw RenderError("TypeError", "dict." + name + "() is not supported by this engine");
}

Value sequence_method(const Value& self, const std::string& name, CallArgs& args) {
    const List& items = self.as_list();
    if (name == "copy") {
        const BoundArgs a(args, name, {});
        return self;
    }
    const BoundArgs a(args, name, {"value"});
    if (!a.has(0)) type_error(name + "() takes exactly one argument (0 given)");
    if (name == "count") return Value::integer(int64_t(std::count_if(items.begin(), items.end(), [&](const Value& v) { return equals(v, a[0]); })));
    for (size_t i = 0; i < items.size(); ++i)
        if (equals(items[i], a[0])) return Value::integer(int64_t(i));
    throw RenderError("ValueError", repr(a[0]) + " is not in " + self.type_name());
}

}  // namespace

MethodKind find_method(const Value& receiver, std::string_view name) {
    if (receiver.is_string()) return in(kStrMethods, name) ? MethodKind::Safe : MethodKind::None;
    if (receiver.is_dict()) {
        if (in(kDictMutating, name)) return MethodKind::Mutating;
        return in(kDictMethods, name) ? MethodKind::Safe : MethodKind::None;
    }
    if (receiver.is_list()) {
        if (in(kListMutating, name)) return MethodKind::Mutating;
        return in(kListMethods, name) ? MethodKind::Safe : MethodKind::None;
    }
    if (receiver.is_tuple()) return in(kTupleMethods, name) ? MethodKind::Safe : MethodKind::None;
    return MethodKind::None;
}

Value call_method(Renderer& renderer, const Value& receiver, const std::string& name, CallArgs& args) {
    if (receiver.is_string()) return string_method(renderer, receiver, name, args);
    if (receiver.is_dict()) return dict_method(receiver, name, args);
    return sequence_method(receiver, name, args);
}

}  // namespace hetero::jinja
