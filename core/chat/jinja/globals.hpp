// The names every template sees: Jinja2's range, dict, namespace and joiner,
// and what transformers adds: raise_exception(message) and strftime_now(format).
#pragma once

#include "renderer.hpp"

namespace hetero::jinja {

void add_globals(Scope& scope);

}  // namespace hetero::jinja
