// Mapping and attribute filters: attr, default, dictsort, items.
#include "filters_parts.hpp"

#include "args.hpp"
#include "attributes.hpp"
#include "errors.hpp"
#include "operators.hpp"
#include "renderer.hpp"
#include "text.hpp"

#include <string>

namespace hetero::jinja::filters {

Value f_attr(Renderer&, const Value& v, CallArgs& args) {
    const BoundArgs a(args, "do_attr", {"name"});
    if (!a.has(0) || !a[0].is_string()) type_error("attribute name must be string");
    return get_python_attribute(v, a[0].as_string());
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

Value f_items(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_items", {});
    if (v.is_undefined()) return generator({});
    if (!v.is_dict()) type_error("Can only get item pairs from a mapping.");
    List out;
    for (const auto& [k, item] : v.as_dict().items()) out.push_back(Value::tuple({k, item}));
    return generator(std::move(out));
}

}  // namespace hetero::jinja::filters
