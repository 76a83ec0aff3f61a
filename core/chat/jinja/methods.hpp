// The methods of str, list, tuple and dict values that templates call
// ('x'.strip(), message.get('content'), ...).
#pragma once

#include "value.hpp"

#include <string>
#include <string_view>

namespace hetero::jinja {

enum class MethodKind { None, Safe, Mutating };

// Whether Python has a method `name` on this value, and whether the
// immutable sandbox forbids it.
MethodKind find_method(const Value& receiver, std::string_view name);
Value call_method(Renderer& renderer, const Value& receiver, const std::string& name, CallArgs& args);

}  // namespace hetero::jinja
