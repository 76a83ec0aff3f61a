// Jinja2's built-in filters (`x | trim`, `items | map(attribute='name')`, ...)
// plus tojson configured as Hugging Face transformers configures it
// (ensure_ascii=False, no HTML escaping).
#pragma once

#include "value.hpp"

#include <string_view>

namespace hetero::jinja {

using FilterFn = Value (*)(Renderer&, const Value&, CallArgs&);

// Null for a name Jinja2 does not know. Names Jinja2 knows but this engine
// does not implement (random, urlize, ...) resolve to a filter that fails
// with a clear message.
FilterFn find_filter(std::string_view name);
bool has_filter(std::string_view name);
bool filter_unsupported(std::string_view name);

}  // namespace hetero::jinja
