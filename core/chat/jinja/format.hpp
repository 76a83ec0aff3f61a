// Values printed as Python prints them: str() for {{ }} output and the
// string filter, repr() inside containers ("['a', 1, True, None]").
#pragma once

#include "value.hpp"

#include <string>

namespace hetero::jinja {

// float.__repr__: the shortest text that reads back to the same double,
// fixed notation for exponents -4..15 ("1.0", "0.0001"), else "1e+16".
std::string float_repr(double d);
std::string string_repr(std::string_view s);
std::string to_str(const Value& v);
std::string repr(const Value& v);

}  // namespace hetero::jinja
