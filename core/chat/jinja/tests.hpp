// Jinja2's tests (`x is defined`, `n is divisibleby 3`, ...).
#pragma once

#include "value.hpp"

#include <string_view>

namespace hetero::jinja {

using TestFn = bool (*)(Renderer&, const Value&, CallArgs&);

TestFn find_test(std::string_view name);
bool has_test(std::string_view name);

}  // namespace hetero::jinja
