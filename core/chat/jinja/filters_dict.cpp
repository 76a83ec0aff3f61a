// Mapping and attribute filters: attr, default, items.
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

Value f_items(Renderer&, const Value& v, CallArgs& args) {
    BoundArgs(args, "do_items", {});
    if (v.is_undefined()) return generator({});
    if (!v.is_dict()) type_error("Can only get item pairs from a mapping.");
    List out;
    for (const auto& [k, item] : v.as_dict().items()) out.push_back(Value::tuple({k, item}));
    return generator(std::move(out));
}

}  // namespace hetero::jinja::filters
