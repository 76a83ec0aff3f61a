#include "attributes.hpp"

#include "errors.hpp"

#include "format.hpp"
#include "methods.hpp"
#include "objects.hpp"
#include "operators.hpp"
#include "text.hpp"

namespace hetero::jinja {

namespace {

// Names like __class__: Python finds them on every object, and the sandbox
// refuses everything that starts with an underscore.
bool is_dunder(std::string_view name) { return name.size() > 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__"; }

Value unsafe(const Value& obj, const std::string& name) {
    UndefinedInfo info;
    info.name = name;
    info.owner = object_type_repr(obj);
    info.hint = "access to attribute '" + name + "' of '" + obj.type_name() + "' object is unsafe.";
    info.unsafe = true;
    return Value::undefined(std::move(info));
}

Value missing(const Value& obj, const std::string& name) {
    UndefinedInfo info;
    info.name = name;
    info.owner = object_type_repr(obj);
    return Value::undefined(std::move(info));
}

// getattr(obj, name) with the sandbox's checks; nullopt where Python has no such attribute.
std::optional<Value> python_attribute(const Value& obj, const std::string& name) {
    if (obj.is_undefined()) fail_undefined(obj);
    if (is_dunder(name)) return unsafe(obj, name);
    if (obj.is_object()) {
        if (!name.empty() && name[0] == '_') return std::nullopt;
        return obj.as_object()->attribute(name);
    }
    switch (find_method(obj, name)) {
    case MethodKind::Safe: return Value::object(std::make_shared<BoundMethod>(obj, name));
    case MethodKind::Mutating: return unsafe(obj, name);
    case MethodKind::None: break;
    }
    return std::nullopt;
}

// obj[key]; nullopt where Python raises TypeError or LookupError.
std::optional<Value> python_item(const Value& obj, const Value& key) {
    switch (obj.type()) {
    case Value::Type::Dict:
        if (key.is_undefined()) return std::nullopt;
        // Unhashable keys are a TypeError in Python, which getitem swallows.
        try {
            if (const Value* v = obj.as_dict().find(key)) return *v;
        } catch (const RenderError&) {
        }
        return std::nullopt;
    case Value::Type::List:
    case Value::Type::String: {
        if (!obj.is_string() && !obj.is_sequence()) return std::nullopt;
        if (!key.is_integral()) return std::nullopt;
        int64_t i = key.as_int();
        if (obj.is_string()) {
            const std::string& s = obj.as_string();
            if (is_ascii(s)) {
                if (i < 0) i += int64_t(s.size());
                if (i < 0 || i >= int64_t(s.size())) return std::nullopt;
                return Value::string(std::string(1, s[size_t(i)]), obj.is_markup());
            }
            const std::u32string u = decode_utf8(s);
            if (i < 0) i += int64_t(u.size());
            if (i < 0 || i >= int64_t(u.size())) return std::nullopt;
            std::string c;
            append_utf8(c, u[size_t(i)]);
            return Value::string(std::move(c), obj.is_markup());
        }
        const List& items = obj.as_list();
        if (i < 0) i += int64_t(items.size());
        if (i < 0 || i >= int64_t(items.size())) return std::nullopt;
        return items[size_t(i)];
    }
    case Value::Type::Object:
        // Objects (namespace, loop) have no items; Jinja2 then tries the attribute.
        return std::nullopt;
    default: return std::nullopt;
    }
}

}  // namespace

Value get_attribute(const Value& obj, const std::string& name) {
    if (std::optional<Value> v = python_attribute(obj, name)) return *v;
    if (obj.is_dict()) {
        if (const Value* v = obj.as_dict().find(name)) return *v;
    }
    return missing(obj, name);
}

Value get_python_attribute(const Value& obj, const std::string& name) {
    if (std::optional<Value> v = python_attribute(obj, name)) return *v;
    return missing(obj, name);
}

Value get_item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) fail_undefined(obj);
    if (std::optional<Value> v = python_item(obj, key)) return *v;
    if (key.is_string()) {
        if (std::optional<Value> v = python_attribute(obj, key.as_string())) return *v;
        return missing(obj, key.as_string());
    }
    UndefinedInfo info;
    info.name = repr(key);
    info.owner = object_type_repr(obj);
    info.item = true;
    return Value::undefined(std::move(info));
}

}  // namespace hetero::jinja
