// Python's operators on template values: arithmetic, comparisons, `in`,
// len(), iteration, slicing and the % string formatting, with the errors
// Python raises (TypeError, ZeroDivisionError, UndefinedError).
#pragma once

#include "ast.hpp"
#include "budget.hpp"
#include "value.hpp"

#include <optional>

namespace hetero::jinja {

// Raises the UndefinedError (or the sandbox's SecurityError) an undefined value carries.
[[noreturn]] void fail_undefined(const Value& v);
inline void require_defined(const Value& v) {
    if (v.is_undefined()) fail_undefined(v);
}

// Jinja2's object_type_repr: "dict object", "None", ...
std::string object_type_repr(const Value& v);

Value binary_op(BinaryOp op, const Value& a, const Value& b, Budget& budget);
Value negate(const Value& v);
Value positive(const Value& v);
bool compare(CompareOp op, const Value& a, const Value& b);
bool contains(const Value& container, const Value& item);

// Python's len(): TypeError where it has none.
size_t length(const Value& v);
// The items a for loop visits: list items, dict keys, string characters,
// nothing for Undefined; TypeError for what is not iterable.
List iterate(const Value& v);
// str, list or tuple sliced as Python slices them.
Value slice(const Value& v, std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step);
// The integer a subscript or argument must be (bools count).
int64_t to_index(const Value& v, const char* what);

// printf-style formatting: 'format' % values.
std::string percent_format(const std::string& format, const Value& values, Budget& budget);

}  // namespace hetero::jinja
