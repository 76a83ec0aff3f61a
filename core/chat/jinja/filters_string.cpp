// String filters: case, padding, escaping, formatting, trimming, tojson.
#include "filters_parts.hpp"

#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "json.hpp"
#include "markup.hpp"
#include "operators.hpp"
#include "renderer.hpp"
#include "text.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace hetero::jinja::filters {

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

Value f_escape(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "escape", {});
    if (v.is_markup()) return v;
    return Value::string(html_escape(to_str(v)), true);
}

Value f_forceescape(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_forceescape", {});
    return Value::string(html_escape(to_str(v)), true);
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

Value f_safe(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_mark_safe", {});
    return Value::string(to_str(v), true);
}

Value f_string(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "soft_str", {});
    return soft_str(v);
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

}  // namespace hetero::jinja::filters
