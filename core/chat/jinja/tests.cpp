#include "tests.hpp"

#include "args.hpp"
#include "filters.hpp"
#include "format.hpp"
#include "named_table.hpp"
#include "operators.hpp"
#include "renderer.hpp"
#include "text.hpp"

#include <string>
#include <utility>

namespace hetero::jinja {

namespace {

Value one_arg(const CallArgs& args, const char* test, const char* param) {
    const BoundArgs a(args, test, {param});
    if (!a.has(0)) type_error(std::string(test) + "() missing 1 required positional argument: '" + param + "'");
    return a[0];
}

bool no_args(CallArgs& args, const char* test) {
    const BoundArgs a(args, test, {});
    return true;
}

bool remainder_is(Renderer& r, const Value& v, const Value& divisor, int64_t expected) {
    const Value rem = binary_op(BinaryOp::Mod, v, divisor, r.budget());
    return equals(rem, Value::integer(expected));
}

bool test_odd(Renderer& r, const Value& v, CallArgs& a) { return no_args(a, "test_odd") && remainder_is(r, v, Value::integer(2), 1); }
bool test_even(Renderer& r, const Value& v, CallArgs& a) { return no_args(a, "test_even") && remainder_is(r, v, Value::integer(2), 0); }
bool test_divisibleby(Renderer& r, const Value& v, CallArgs& a) {
    return remainder_is(r, v, one_arg(a, "test_divisibleby", "num"), 0);
}
bool test_defined(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_defined") && !v.is_undefined(); }
bool test_undefined(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_undefined") && v.is_undefined(); }
bool test_filter(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_filter") && v.is_string() && has_filter(v.as_string()); }
bool test_test(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_test") && v.is_string() && has_test(v.as_string()); }
bool test_none(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_none") && v.is_none(); }
bool test_boolean(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_boolean") && v.is_bool(); }
bool test_false(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_false") && v.is_bool() && !v.as_bool(); }
bool test_true(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_true") && v.is_bool() && v.as_bool(); }
bool test_integer(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_integer") && v.is_int(); }
bool test_float(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_float") && v.is_float(); }
bool test_string(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_string") && v.is_string(); }
bool test_mapping(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_mapping") && v.is_dict(); }
bool test_number(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_number") && v.is_number(); }
bool test_sequence(Renderer&, const Value& v, CallArgs& a) {
    // len() and [] both work.
    return no_args(a, "test_sequence") && (v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined());
}
bool test_iterable(Renderer&, const Value& v, CallArgs& a) {
    return no_args(a, "test_iterable") && (v.is_string() || v.is_items() || v.is_dict() || v.is_undefined());
}
bool test_callable(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_callable") && (v.callable() || v.is_undefined()); }
bool test_escaped(Renderer&, const Value& v, CallArgs& a) { return no_args(a, "test_escaped") && v.is_markup(); }
// Python's str.islower / str.isupper: a cased character, none of the other case.
bool all_cased(const Value& v, bool (*is_case)(char32_t), bool (*is_other_case)(char32_t)) {
    bool cased = false;
    for (char32_t c : decode_utf8(to_str(v))) {
        if (is_other_case(c)) return false;
        if (is_case(c)) cased = true;
    }
    return cased;
}
bool test_lower(Renderer&, const Value& v, CallArgs& a) {
    no_args(a, "test_lower");
    return all_cased(v, is_cased_lower, is_cased_upper);
}
bool test_upper(Renderer&, const Value& v, CallArgs& a) {
    no_args(a, "test_upper");
    return all_cased(v, is_cased_upper, is_cased_lower);
}
bool test_sameas(Renderer&, const Value& v, CallArgs& a) {
    const Value other = one_arg(a, "test_sameas", "other");
    if (v.type() != other.type()) return false;
    switch (v.type()) {
    case Value::Type::None: return true;
    case Value::Type::Bool: return v.as_bool() == other.as_bool();
    case Value::Type::Int: return v.as_int() == other.as_int() && v.as_int() >= -5 && v.as_int() <= 256;  // CPython's cached ints
    case Value::Type::String: return &v.as_string() == &other.as_string();
    case Value::Type::List: return &v.as_list() == &other.as_list();
    case Value::Type::Dict: return &v.as_dict() == &other.as_dict();
    case Value::Type::Object: return v.as_object() == other.as_object();
    default: return false;
    }
}
bool test_in(Renderer&, const Value& v, CallArgs& a) { return contains(one_arg(a, "test_in", "seq"), v); }

template <CompareOp op>
bool test_compare(Renderer&, const Value& v, CallArgs& a) {
    return compare(op, v, one_arg(a, "compare", "b"));
}

// Jinja2 3.1's test names, aliases included.
const std::pair<const char*, TestFn> kTests[] = {
    {"odd", test_odd},
    {"even", test_even},
    {"divisibleby", test_divisibleby},
    {"defined", test_defined},
    {"undefined", test_undefined},
    {"filter", test_filter},
    {"test", test_test},
    {"none", test_none},
    {"boolean", test_boolean},
    {"false", test_false},
    {"true", test_true},
    {"integer", test_integer},
    {"float", test_float},
    {"lower", test_lower},
    {"upper", test_upper},
    {"string", test_string},
    {"mapping", test_mapping},
    {"number", test_number},
    {"sequence", test_sequence},
    {"iterable", test_iterable},
    {"callable", test_callable},
    {"sameas", test_sameas},
    {"escaped", test_escaped},
    {"in", test_in},
    {"==", test_compare<CompareOp::Eq>},
    {"eq", test_compare<CompareOp::Eq>},
    {"equalto", test_compare<CompareOp::Eq>},
    {"!=", test_compare<CompareOp::Ne>},
    {"ne", test_compare<CompareOp::Ne>},
    {">", test_compare<CompareOp::Gt>},
    {"gt", test_compare<CompareOp::Gt>},
    {"greaterthan", test_compare<CompareOp::Gt>},
    {">=", test_compare<CompareOp::Ge>},
    {"ge", test_compare<CompareOp::Ge>},
    {"<", test_compare<CompareOp::Lt>},
    {"lt", test_compare<CompareOp::Lt>},
    {"lessthan", test_compare<CompareOp::Lt>},
    {"<=", test_compare<CompareOp::Le>},
    {"le", test_compare<CompareOp::Le>},
};

}  // namespace

TestFn find_test(std::string_view name) { return find_by_name(kTests, name); }

bool has_test(std::string_view name) { return find_test(name) != nullptr; }

}  // namespace hetero::jinja
