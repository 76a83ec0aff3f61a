// The values a template computes with, modelled on the Python objects Jinja2
// works with: Undefined, None, bool, int, float, str (optionally Markup), list,
// tuple, dict (insertion-ordered) and objects (namespace, loop, callables).
// Containers are shared and immutable once built: the sandbox forbids
// mutating them, and namespaces (the one mutable thing) are objects.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace hetero::jinja {

class Value;
class Object;
class Renderer;
struct CallArgs;
using List = std::vector<Value>;

// How deep lists, tuples and dicts may nest. Freeing a value recurses as deep
// as it nests, so a template that nests deeper (say, wrapping a list in a
// list 100000 times in a loop) fails instead of overflowing the stack.
inline constexpr uint32_t kMaxValueNesting = 500;
// Why a value is undefined: an unknown name, a missing attribute or item of
// some object, or an attribute the sandbox refuses (`hint` then says so).
struct UndefinedInfo {
    std::string name;        // the variable, attribute or item (repr for items)
    std::string owner;       // "'dict object'" when it came from an object; empty for a plain name
    std::string hint;        // a full message that replaces the default one
    bool item = false;       // a missing item with a non-string key: `name` holds the key's repr
    bool unsafe = false;     // the sandbox's undefined: using it is a SecurityError
};

// The Python message for using an undefined value ("'x' is undefined").
std::string undefined_message(const UndefinedInfo& info);

class Dict;

class Value {
public:
    enum class Type { Undefined, None, Bool, Int, Float, String, List, Dict, Object };
    // What a Type::List value stands for in Python: real sequences (list,
    // tuple) and the iterables filters and dict methods return (a generator is
    // always true and has no len(); dict views print as dict_keys([...])).
    enum class Seq : uint8_t { List, Tuple, Generator, ReverseIterator, DictKeys, DictValues, DictItems };

    Value();  // an anonymous Undefined
    static Value undefined(UndefinedInfo info);
    static Value undefined_name(std::string name);
    static Value none();
    static Value boolean(bool b);
    static Value integer(int64_t i);
    static Value floating(double d);
    static Value string(std::string s, bool markup = false);
    static Value list(List items);
    static Value tuple(List items);
    static Value sequence(List items, Seq kind);
    static Value dict(Dict d);
    static Value object(std::shared_ptr<Object> o);

    Type type() const { return type_; }
    bool is_undefined() const { return type_ == Type::Undefined; }
    bool is_none() const { return type_ == Type::None; }
    bool is_bool() const { return type_ == Type::Bool; }
    bool is_int() const { return type_ == Type::Int; }  // not bool
    bool is_float() const { return type_ == Type::Float; }
    bool is_number() const { return type_ == Type::Int || type_ == Type::Float || type_ == Type::Bool; }
    bool is_integral() const { return type_ == Type::Int || type_ == Type::Bool; }
    bool is_string() const { return type_ == Type::String; }
    bool is_markup() const { return type_ == Type::String && flag_; }
    bool is_list() const { return type_ == Type::List && Seq(flag_) == Seq::List; }
    bool is_tuple() const { return type_ == Type::List && Seq(flag_) == Seq::Tuple; }
    bool is_sequence() const { return type_ == Type::List && flag_ <= uint8_t(Seq::Tuple); }  // list or tuple
    bool is_iterator() const { return type_ == Type::List && (Seq(flag_) == Seq::Generator || Seq(flag_) == Seq::ReverseIterator); }
    bool is_items() const { return type_ == Type::List; }  // anything holding items in order
    Seq seq_kind() const { return Seq(flag_); }
    bool is_dict() const { return type_ == Type::Dict; }
    bool is_object() const { return type_ == Type::Object; }

    bool as_bool() const { return std::get<bool>(data_); }
    int64_t as_int() const;  // int or bool
    double as_double() const;  // any number
    const std::string& as_string() const { return *std::get<std::shared_ptr<const std::string>>(data_); }
    const List& as_list() const { return std::get<std::shared_ptr<const ListData>>(data_)->items; }
    const Dict& as_dict() const { return *std::get<std::shared_ptr<const Dict>>(data_); }
    const std::shared_ptr<Object>& as_object() const { return std::get<std::shared_ptr<Object>>(data_); }
    const UndefinedInfo& undefined_info() const;

    // Python's bool(value).
    bool truthy() const;
    // The Python type name used in error messages ("str", "list", "NoneType", ...).
    std::string type_name() const;
    bool callable() const;
    // Containers inside containers, counting this one (0 for scalars).
    uint32_t nesting() const;

private:
    struct ListData {
        List items;
        uint32_t nesting;
    };
    // What every factory above makes: a type, its data and its flag.
    template <class Data>
    Value(Type type, Data data, uint8_t flag = 0) : type_(type), flag_(flag), data_(std::move(data)) {}

    Type type_ = Type::Undefined;
    uint8_t flag_ = 0;  // String: 1 for Markup; List: a Seq
    std::variant<std::shared_ptr<const UndefinedInfo>, bool, int64_t, double, std::shared_ptr<const std::string>,
                 std::shared_ptr<const ListData>, std::shared_ptr<const Dict>, std::shared_ptr<Object>>
        data_;
};

// Python's dict: insertion order, keys compared as Python compares them
// (1, 1.0 and True are one key). Only hashable keys: None, bools, numbers,
// strings and tuples of those.
class Dict {
public:
    const Value* find(const Value& key) const;
    const Value* find(std::string_view key) const;
    void set(const Value& key, Value value);
    void set(std::string_view key, Value value) { set(Value::string(std::string(key)), std::move(value)); }
    size_t size() const { return items_.size(); }
    uint32_t nesting() const { return nesting_; }
    bool empty() const { return items_.empty(); }
    const std::vector<std::pair<Value, Value>>& items() const { return items_; }

private:
    std::vector<std::pair<Value, Value>> items_;
    std::unordered_map<std::string, size_t> index_;
    uint32_t nesting_ = 1;
};

// Throws BudgetExceeded when a new container would nest deeper than kMaxValueNesting.
void check_nesting(uint32_t nesting);

// The identity of a hashable key; throws TypeError for unhashable ones.
std::string hash_key(const Value& key);

// Something with attributes and perhaps a call: namespace(), the loop
// variable, macros and built-in functions.
class Object {
public:
    virtual ~Object() = default;
    virtual std::string type_name() const = 0;
    virtual std::string repr() const = 0;
    virtual std::optional<Value> attribute(std::string_view name) const;
    virtual bool callable() const { return false; }
    virtual Value call(Renderer& renderer, CallArgs& args) const;
};

// Positional and keyword arguments of a call.
struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keywords;
};

// Python's == (no exceptions): numbers by value, containers element-wise,
// Undefined equal only to Undefined.
bool equals(const Value& a, const Value& b);

}  // namespace hetero::jinja
