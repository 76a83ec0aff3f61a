#include "json.hpp"

#include "errors.hpp"
#include "format.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hetero::jinja {

namespace {

void json_string(std::string& out, std::string_view s) {
    out += '"';
    for (char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

std::string json_float(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    return float_repr(d);
}

// A dict key as json.dumps writes it: strings as they are, other scalars
// converted, anything else refused.
std::string key_text(const Value& k) {
    switch (k.type()) {
    case Value::Type::String: return k.as_string();
    case Value::Type::Bool: return k.as_bool() ? "true" : "false";
    case Value::Type::None: return "null";
    case Value::Type::Int: return std::to_string(k.as_int());
    case Value::Type::Float: return json_float(k.as_double());
    default: type_error("keys must be str, int, float, bool or None, not " + k.type_name());
    }
}

void dump(std::string& out, const Value& v, const JsonStyle& style, int level) {
    if (level > int(kMaxValueNesting)) throw BudgetExceeded("value nested too deeply for tojson");
    auto newline = [&](int lvl) {
        out += '\n';
        for (int i = 0; i < lvl; ++i) out += *style.indent;
    };
    switch (v.type()) {
    case Value::Type::None: out += "null"; return;
    case Value::Type::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Type::Int: out += std::to_string(v.as_int()); return;
    case Value::Type::Float: out += json_float(v.as_double()); return;
    case Value::Type::String: json_string(out, v.as_string()); return;
    case Value::Type::List: {
        if (!v.is_sequence()) type_error("Object of type " + v.type_name() + " is not JSON serializable");
        const List& items = v.as_list();
        if (items.empty()) {
            out += "[]";
            return;
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += style.item_separator;
            if (style.indent) newline(level + 1);
            dump(out, items[i], style, level + 1);
        }
        if (style.indent) newline(level);
        out += ']';
        return;
    }
    case Value::Type::Dict: {
        const Dict& d = v.as_dict();
        if (d.empty()) {
            out += "{}";
            return;
        }
        std::vector<std::pair<std::string, const Value*>> entries;
        for (const auto& [k, item] : d.items()) entries.emplace_back(key_text(k), &item);
        if (style.sort_keys)
            std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        out += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
            if (i) out += style.item_separator;
            if (style.indent) newline(level + 1);
            json_string(out, entries[i].first);
            out += style.key_separator;
            dump(out, *entries[i].second, style, level + 1);
        }
        if (style.indent) newline(level);
        out += '}';
        return;
    }
    default: type_error("Object of type " + v.type_name() + " is not JSON serializable");
    }
}

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style) {
    std::string out;
    dump(out, v, style, 0);
    return out;
}

Value from_json(const nlohmann::ordered_json& j, uint32_t depth) {
    check_nesting(depth);
    switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
        const auto u = j.get<uint64_t>();
        if (u > uint64_t(INT64_MAX)) return Value::floating(double(u));
        return Value::integer(int64_t(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::floating(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
        List items;
        items.reserve(j.size());
        for (const auto& item : j) items.push_back(from_json(item, depth + 1));
        return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
        Dict d;
        for (const auto& [k, item] : j.items()) d.set(k, from_json(item, depth + 1));
        return Value::dict(std::move(d));
    }
    default: return Value::none();
    }
}

}  // namespace hetero::jinja
