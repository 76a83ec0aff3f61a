// x.name and x[key] as Jinja2's ImmutableSandboxedEnvironment resolves them:
// an attribute first, then an item (or the other way round for []); names
// starting with "_" that Python would find, and methods that mutate a list
// or dict, give the sandbox's "unsafe" undefined.
#pragma once

#include "value.hpp"

#include <string>

namespace hetero::jinja {

Value get_attribute(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
// Only a Python attribute (a method, an object's attribute), never a dict
// item: the attr filter. Undefined where there is none.
Value get_python_attribute(const Value& obj, const std::string& name);

}  // namespace hetero::jinja
