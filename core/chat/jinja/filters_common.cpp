// Helpers the filter families share: argument coercion, attribute paths,
// Python's sorting.
#include "filters_parts.hpp"

#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "operators.hpp"
#include "renderer.hpp"
#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace hetero::jinja::filters {

// markupsafe.soft_str: strings (Markup included) as they are, others through str().
Value soft_str(const Value& v) { return v.is_string() ? v : Value::string(to_str(v)); }

int64_t int_param(const Value& v, const char* what) {
    if (v.is_integral()) return v.as_int();
    if (v.is_float() && std::isfinite(v.as_double())) return int64_t(v.as_double());
    type_error(std::string("'") + v.type_name() + "' object cannot be interpreted as an integer (" + what + ")");
}

Value generator(List items) { return Value::sequence(std::move(items), Value::Seq::Generator); }

// make_attrgetter: "a.b.0" walks items and attributes as Jinja2 does.
Value attr_path(Renderer& r, const Value& item, const Value& attribute, const Value* fallback) {
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

}  // namespace hetero::jinja::filters
