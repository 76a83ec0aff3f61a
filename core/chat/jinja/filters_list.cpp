// Sequence filters: first/last, join, map, select/reject, min/max, sort and
// dictsort, slice, batch, sum, unique.
#include "filters_parts.hpp"

#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "operators.hpp"
#include "renderer.hpp"
#include "text.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace hetero::jinja::filters {

namespace {

// Python's sorted(): stable, using < only.
void python_sort(std::vector<std::pair<Value, Value>>& keyed, bool reverse) {
    auto less = [](const Value& a, const Value& b) { return compare(CompareOp::Lt, a, b); };
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
        return reverse ? less(b.first, a.first) : less(a.first, b.first);
    });
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

}  // namespace

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

Value f_length(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "len", {});
    return Value::integer(int64_t(length(v)));
}

namespace {

// The first or last item, or an undefined saying the sequence was empty.
Value end_item(const Value& v, bool last) {
    const List items = iterate(v);
    if (items.empty()) {
        UndefinedInfo info;
        info.hint = std::string("No ") + (last ? "last" : "first") + " item, sequence was empty.";
        return Value::undefined(std::move(info));
    }
    return last ? items.back() : items.front();
}

}  // namespace

Value f_first(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_first", {});
    return end_item(v, false);
}

Value f_last(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_last", {});
    if (v.is_iterator()) type_error("'" + v.type_name() + "' object is not reversible");
    if (!v.is_string() && !v.is_items() && !v.is_dict() && !v.is_undefined()) type_error("'" + v.type_name() + "' object is not reversible");
    return end_item(v, true);
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

Value f_select(Renderer& r, const Value& v, CallArgs& a) { return select_or_reject(r, v, a, true, false); }

Value f_reject(Renderer& r, const Value& v, CallArgs& a) { return select_or_reject(r, v, a, false, false); }

Value f_selectattr(Renderer& r, const Value& v, CallArgs& a) { return select_or_reject(r, v, a, true, true); }

Value f_rejectattr(Renderer& r, const Value& v, CallArgs& a) { return select_or_reject(r, v, a, false, true); }

Value f_min(Renderer& r, const Value& v, CallArgs& a) { return min_or_max(r, v, a, false, "do_min"); }

Value f_max(Renderer& r, const Value& v, CallArgs& a) { return min_or_max(r, v, a, true, "do_max"); }

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

}  // namespace hetero::jinja::filters
