#include "value.hpp"

#include "errors.hpp"
#include "format.hpp"

#include <algorithm>
#include <cmath>

namespace hetero::jinja {

Value::Value() : data_(std::make_shared<const UndefinedInfo>()) {}

Value Value::undefined(UndefinedInfo info) { return Value(Type::Undefined, std::make_shared<const UndefinedInfo>(std::move(info))); }

Value Value::undefined_name(std::string name) {
    UndefinedInfo info;
    info.name = std::move(name);
    return undefined(std::move(info));
}

Value Value::none() { return Value(Type::None, false); }

Value Value::boolean(bool b) { return Value(Type::Bool, b); }

Value Value::integer(int64_t i) { return Value(Type::Int, i); }

Value Value::floating(double d) { return Value(Type::Float, d); }

Value Value::string(std::string s, bool markup) {
    return Value(Type::String, std::make_shared<const std::string>(std::move(s)), uint8_t(markup));
}

Value Value::list(List items) {
    uint32_t deepest = 0;
    for (const Value& item : items) deepest = std::max(deepest, item.nesting());
    check_nesting(deepest + 1);
    return Value(Type::List, std::make_shared<const ListData>(ListData{std::move(items), deepest + 1}));
}

void check_nesting(uint32_t nesting) {
    if (nesting > kMaxValueNesting)
        throw BudgetExceeded("a value nests deeper than " + std::to_string(kMaxValueNesting) + " lists or dicts");
}

uint32_t Value::nesting() const {
    if (type_ == Type::List) return std::get<std::shared_ptr<const ListData>>(data_)->nesting;
    if (type_ == Type::Dict) return as_dict().nesting();
    return 0;
}

Value Value::tuple(List items) { return sequence(std::move(items), Seq::Tuple); }

Value Value::sequence(List items, Seq kind) {
    Value v = list(std::move(items));
    v.flag_ = uint8_t(kind);
    return v;
}

std::string undefined_message(const UndefinedInfo& info) {
    if (!info.hint.empty()) return info.hint;
    if (info.owner.empty()) return string_repr(info.name) + " is undefined";
    if (info.item) return info.owner + " has no element " + info.name;
    return string_repr(info.owner) + " has no attribute " + string_repr(info.name);
}

Value Value::dict(Dict d) { return Value(Type::Dict, std::make_shared<const Dict>(std::move(d))); }

Value Value::object(std::shared_ptr<Object> o) { return Value(Type::Object, std::move(o)); }

int64_t Value::as_int() const {
    if (type_ == Type::Bool) return std::get<bool>(data_) ? 1 : 0;
    return std::get<int64_t>(data_);
}

double Value::as_double() const {
    if (type_ == Type::Float) return std::get<double>(data_);
    return double(as_int());
}

const UndefinedInfo& Value::undefined_info() const { return *std::get<std::shared_ptr<const UndefinedInfo>>(data_); }

bool Value::truthy() const {
    switch (type_) {
    case Type::Undefined:
    case Type::None: return false;
    case Type::List:
        if (is_iterator()) return true;
        return !as_list().empty();
    case Type::Bool: return as_bool();
    case Type::Int: return as_int() != 0;
    case Type::Float: return as_double() != 0.0;
    case Type::String: return !as_string().empty();
    case Type::Dict: return !as_dict().empty();
    case Type::Object: return true;
    }
    return false;
}

std::string Value::type_name() const {
    switch (type_) {
    case Type::Undefined: return "Undefined";
    case Type::None: return "NoneType";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::String: return flag_ ? "Markup" : "str";
    case Type::List:
        switch (seq_kind()) {
        case Seq::List: return "list";
        case Seq::Tuple: return "tuple";
        case Seq::Generator: return "generator";
        case Seq::ReverseIterator: return "list_reverseiterator";
        case Seq::DictKeys: return "dict_keys";
        case Seq::DictValues: return "dict_values";
        case Seq::DictItems: return "dict_items";
        }
        return "list";
    case Type::Dict: return "dict";
    case Type::Object: return as_object()->type_name();
    }
    return "object";
}

bool Value::callable() const { return type_ == Type::Object && as_object()->callable(); }

std::optional<Value> Object::attribute(std::string_view) const { return std::nullopt; }

Value Object::call(Renderer&, CallArgs&) const { type_error("'" + type_name() + "' object is not callable"); }

std::string hash_key(const Value& key) {
    switch (key.type()) {
    case Value::Type::None: return "N";
    case Value::Type::Bool:
    case Value::Type::Int: return "n" + std::to_string(key.as_int());
    case Value::Type::Float: {
        const double d = key.as_double();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) return "n" + std::to_string(int64_t(d));
        return "f" + float_repr(d);
    }
    case Value::Type::String: return "s" + key.as_string();
    case Value::Type::List:
        if (key.is_tuple()) {
            std::string k = "t(";
            for (const Value& v : key.as_list()) k += hash_key(v) + ",";
            return k + ")";
        }
        break;
    default: break;
    }
    type_error("unhashable type: '" + key.type_name() + "'");
}

const Value* Dict::find(const Value& key) const {
    auto it = index_.find(hash_key(key));
    return it == index_.end() ? nullptr : &items_[it->second].second;
}

const Value* Dict::find(std::string_view key) const {
    std::string k = "s";
    k += key;
    auto it = index_.find(k);
    return it == index_.end() ? nullptr : &items_[it->second].second;
}

void Dict::set(const Value& key, Value value) {
    const uint32_t nesting = 1 + std::max(key.nesting(), value.nesting());
    check_nesting(nesting);
    nesting_ = std::max(nesting_, nesting);
    std::string k = hash_key(key);
    auto it = index_.find(k);
    if (it != index_.end()) {
        items_[it->second].second = std::move(value);
        return;
    }
    index_.emplace(std::move(k), items_.size());
    items_.emplace_back(key, std::move(value));
}

bool equals(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_integral() && b.is_integral()) return a.as_int() == b.as_int();
        return a.as_double() == b.as_double();
    }
    if (a.type() != b.type()) return false;
    switch (a.type()) {
    case Value::Type::Undefined:
    case Value::Type::None: return true;
    case Value::Type::String: return a.as_string() == b.as_string();
    case Value::Type::List: {
        if (a.seq_kind() != b.seq_kind() || a.is_iterator()) return a.is_iterator() && a.as_list().data() == b.as_list().data() && a.seq_kind() == b.seq_kind();
        const List &x = a.as_list(), &y = b.as_list();
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i)
            if (!equals(x[i], y[i])) return false;
        return true;
    }
    case Value::Type::Dict: {
        const Dict &x = a.as_dict(), &y = b.as_dict();
        if (x.size() != y.size()) return false;
        for (const auto& [k, v] : x.items()) {
            const Value* other = y.find(k);
            if (!other || !equals(v, *other)) return false;
        }
        return true;
    }
    case Value::Type::Object: return a.as_object() == b.as_object();
    default: return false;
    }
}

}  // namespace hetero::jinja
