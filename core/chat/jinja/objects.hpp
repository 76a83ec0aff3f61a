// The objects templates meet besides plain data: namespace(), the loop
// variable, macros, built-in functions and bound methods.
#pragma once

#include "ast.hpp"
#include "value.hpp"

#include <functional>
#include <memory>
#include <string>

namespace hetero::jinja {

struct Scope;
using ScopePtr = std::shared_ptr<Scope>;

// namespace(): the one mutable object, so a loop body can carry values out
// ({% set ns.found = true %}).
class Namespace : public Object {
public:
    explicit Namespace(Dict attributes) : attributes_(std::move(attributes)) {}
    std::string type_name() const override { return "Namespace"; }
    std::string repr() const override;
    std::optional<Value> attribute(std::string_view name) const override;
    void set(const std::string& name, Value value) { attributes_.set(name, std::move(value)); }
    // Drops the attributes (the renderer does so at the end of a render, see Renderer::~Renderer).
    void clear() { attributes_ = Dict(); }

private:
    Dict attributes_;
};

// The `loop` variable inside {% for %}.
class LoopContext : public Object {
public:
    explicit LoopContext(std::shared_ptr<const List> items) : items_(std::move(items)) {}
    std::string type_name() const override { return "LoopContext"; }
    std::string repr() const override;
    std::optional<Value> attribute(std::string_view name) const override;
    void set_index(size_t index0) { index0_ = index0; }

private:
    std::shared_ptr<const List> items_;
    size_t index0_ = 0;
    // loop.changed(value) compares with the value of the previous call.
    std::shared_ptr<std::optional<Value>> last_changed_ = std::make_shared<std::optional<Value>>();
};

class BuiltinFunction : public Object {
public:
    using Fn = std::function<Value(Renderer&, CallArgs&)>;
    BuiltinFunction(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
    std::string type_name() const override { return "builtin_function_or_method"; }
    std::string repr() const override { return "<built-in function " + name_ + ">"; }
    bool callable() const override { return true; }
    Value call(Renderer& renderer, CallArgs& args) const override { return fn_(renderer, args); }

private:
    std::string name_;
    Fn fn_;
};

// A {% macro %} (or the body of a {% call %} block, as `caller`), with the
// scope it was defined in: names it does not define itself are looked up
// there when it runs.
class Macro : public Object {
public:
    Macro(const Stmt& definition, ScopePtr closure, std::string name)
        : definition_(definition), closure_(std::move(closure)), name_(std::move(name)) {}
    std::string type_name() const override { return "Macro"; }
    std::string repr() const override { return "<Macro '" + name_ + "'>"; }
    std::optional<Value> attribute(std::string_view name) const override;
    bool callable() const override { return true; }
    Value call(Renderer& renderer, CallArgs& args) const override;

private:
    const Stmt& definition_;
    ScopePtr closure_;
    std::string name_;
};

// 'text'.strip, message.get, ...: a method of a str, list or dict value.
class BoundMethod : public Object {
public:
    BoundMethod(Value receiver, std::string name) : receiver_(std::move(receiver)), name_(std::move(name)) {}
    std::string type_name() const override { return "builtin_function_or_method"; }
    std::string repr() const override;
    bool callable() const override { return true; }
    Value call(Renderer& renderer, CallArgs& args) const override;

private:
    Value receiver_;
    std::string name_;
};

Value make_function(std::string name, BuiltinFunction::Fn fn);

}  // namespace hetero::jinja
