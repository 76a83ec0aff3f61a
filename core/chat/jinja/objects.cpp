#include "objects.hpp"

#include "args.hpp"
#include "format.hpp"
#include "methods.hpp"
#include "operators.hpp"
#include "renderer.hpp"

namespace hetero::jinja {

std::string Namespace::repr() const { return "<Namespace " + jinja::repr(Value::dict(attributes_)) + ">"; }

std::optional<Value> Namespace::attribute(std::string_view name) const {
    if (const Value* v = attributes_.find(name)) return *v;
    return std::nullopt;
}

std::string LoopContext::repr() const {
    return "<LoopContext " + std::to_string(index0_ + 1) + "/" + std::to_string(items_->size()) + ">";
}

std::optional<Value> LoopContext::attribute(std::string_view name) const {
    const auto n = int64_t(items_->size());
    const auto i = int64_t(index0_);
    if (name == "index") return Value::integer(i + 1);
    if (name == "index0") return Value::integer(i);
    if (name == "revindex") return Value::integer(n - i);
    if (name == "revindex0") return Value::integer(n - i - 1);
    if (name == "first") return Value::boolean(i == 0);
    if (name == "last") return Value::boolean(i == n - 1);
    if (name == "length") return Value::integer(n);
    if (name == "depth") return Value::integer(1);
    if (name == "depth0") return Value::integer(0);
    if (name == "previtem") {
        if (i > 0) return (*items_)[size_t(i - 1)];
        UndefinedInfo info;
        info.name = "previtem";
        info.hint = "there is no previous item";
        return Value::undefined(std::move(info));
    }
    if (name == "nextitem") {
        if (i + 1 < n) return (*items_)[size_t(i + 1)];
        UndefinedInfo info;
        info.name = "nextitem";
        info.hint = "there is no next item";
        return Value::undefined(std::move(info));
    }
    if (name == "cycle") {
        return make_function("cycle", [i](Renderer&, CallArgs& args) {
            if (args.positional.empty()) type_error("no items for cycling given");
            return args.positional[size_t(i) % args.positional.size()];
        });
    }
    if (name == "changed") {
        auto last = last_changed_;
        return make_function("changed", [last](Renderer&, CallArgs& args) {
            const Value now = Value::tuple(args.positional);
            if (*last && equals(**last, now)) return Value::boolean(false);
            *last = now;
            return Value::boolean(true);
        });
    }
    return std::nullopt;
}

std::optional<Value> Macro::attribute(std::string_view name) const {
    if (name == "name") return Value::string(name_);
    if (name == "arguments") {
        List params;
        for (const auto& p : definition_.params) params.push_back(Value::string(p));
        return Value::tuple(std::move(params));
    }
    if (name == "catch_kwargs") return Value::boolean(definition_.catches_kwargs);
    if (name == "catch_varargs") return Value::boolean(definition_.catches_varargs);
    if (name == "caller") return Value::boolean(definition_.catches_caller);
    return std::nullopt;
}

Value Macro::call(Renderer& renderer, CallArgs& args) const { return renderer.call_macro(definition_, closure_, name_, args); }

std::string BoundMethod::repr() const {
    return "<built-in method " + name_ + " of " + receiver_.type_name() + " object>";
}

Value BoundMethod::call(Renderer& renderer, CallArgs& args) const { return call_method(renderer, receiver_, name_, args); }

Value make_function(std::string name, BuiltinFunction::Fn fn) {
    return Value::object(std::make_shared<BuiltinFunction>(std::move(name), std::move(fn)));
}

}  // namespace hetero::jinja
