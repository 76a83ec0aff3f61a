#include "renderer.hpp"

#include "attributes.hpp"
#include "errors.hpp"
#include "filters.hpp"
#include "format.hpp"
#include "objects.hpp"
#include "operators.hpp"
#include "tests.hpp"

namespace hetero::jinja {

const Value* Scope::find(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent.get())
        for (auto it = s->vars.rbegin(); it != s->vars.rend(); ++it)
            if (it->first == name) return &it->second;
    return nullptr;
}

void Scope::set(const std::string& name, Value value) {
    for (auto& kv : vars)
        if (kv.first == name) {
            kv.second = std::move(value);
            return;
        }
    vars.emplace_back(name, std::move(value));
}

Renderer::~Renderer() {
    for (const auto& ns : namespaces_) ns->clear();
    for (const auto& scope : closure_scopes_) scope->vars.clear();
}

Value Renderer::make_namespace(Dict attributes) {
    auto ns = std::make_shared<Namespace>(std::move(attributes));
    namespaces_.push_back(ns);
    return Value::object(std::move(ns));
}

std::string Renderer::render(const Body& body, const ScopePtr& root) {
    std::string out;
    top_out_ = &out;
    exec(body, root, out);
    return out;
}

void Renderer::append(std::string& out, std::string_view text) {
    out.append(text);
    if (&out == top_out_) budget_.check_output(out.size());
    else budget_.check_string_size(out.size());
}

std::string Renderer::render_child(const Body& body, const ScopePtr& scope) {
    std::string out;
    exec(body, scope, out);
    return out;
}

Renderer::Flow Renderer::exec(const Body& body, const ScopePtr& scope, std::string& out) {
    for (const auto& s : body) {
        const Flow f = exec_stmt(*s, scope, out);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

void Renderer::assign(const Target& target, const Value& value, const ScopePtr& scope) {
    switch (target.kind) {
    case Target::Kind::Name: scope->set(target.name, value); return;
    case Target::Kind::NamespaceAttr: {
        const Value* ns = scope->find(target.name);
        Namespace* n = ns && ns->is_object() ? dynamic_cast<Namespace*>(ns->as_object().get()) : nullptr;
        if (!n) throw RenderError("TemplateRuntimeError", "cannot assign attribute on non-namespace object");
        n->set(target.attribute, value);
        return;
    }
    case Target::Kind::Tuple: {
        if (value.is_undefined()) fail_undefined(value);
        const List items = iterate(value);
        if (items.size() < target.items.size())
            throw RenderError("ValueError", "not enough values to unpack (expected " + std::to_string(target.items.size()) + ", got " +
                                                std::to_string(items.size()) + ")");
        if (items.size() > target.items.size())
            throw RenderError("ValueError", "too many values to unpack (expected " + std::to_string(target.items.size()) + ")");
        for (size_t i = 0; i < items.size(); ++i) assign(target.items[i], items[i], scope);
        return;
    }
    }
}

Renderer::Flow Renderer::exec_stmt(const Stmt& s, const ScopePtr& scope, std::string& out) {
    budget_.step();
    Budget::Depth depth(budget_);
    line_ = s.line;
    switch (s.kind) {
    case StmtKind::Data: append(out, s.text); break;
    case StmtKind::Output: {
        const Value v = eval(*s.exprs[0], scope);
        if (v.is_string()) append(out, v.as_string());
        else append(out, to_str(v));
        break;
    }
    case StmtKind::If:
        for (size_t i = 0; i < s.bodies.size(); ++i) {
            if (i < s.exprs.size()) {
                line_ = s.exprs[i]->line;
                if (!eval(*s.exprs[i], scope).truthy()) continue;
            }
            return exec(s.bodies[i], scope, out);
        }
        break;
    case StmtKind::For: return exec_for(s, scope, out);
    case StmtKind::Set: assign(s.targets[0], eval(*s.exprs[0], scope), scope); break;
    case StmtKind::SetBlock: {
        Value text = Value::string(render_child(s.bodies[0], std::make_shared<Scope>(scope)));
        if (s.filter) text = apply_filter_chain(*s.filter, text, scope);
        assign(s.targets[0], text, scope);
        break;
    }
    case StmtKind::Macro:
        closure_scopes_.push_back(scope);
        scope->set(s.name, Value::object(std::make_shared<Macro>(s, scope, s.name)));
        break;
    case StmtKind::CallBlock: {
        const Expr& call = *s.exprs[0];
        const Value callee = eval(*call.children[0], scope);
        CallArgs args = eval_args(call.args, scope);
        closure_scopes_.push_back(scope);
        args.keywords.emplace_back("caller", Value::object(std::make_shared<Macro>(s, scope, "caller")));
        append(out, to_str(this->call(callee, args)));
        break;
    }
    case StmtKind::FilterBlock: {
        const Value text = Value::string(render_child(s.bodies[0], std::make_shared<Scope>(scope)));
        append(out, to_str(apply_filter_chain(*s.filter, text, scope)));
        break;
    }
    case StmtKind::With: {
        auto inner = std::make_shared<Scope>(scope);
        for (size_t i = 0; i < s.targets.size(); ++i) assign(s.targets[i], eval(*s.exprs[i], scope), inner);
        return exec(s.bodies[0], inner, out);
    }
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
    }
    return Flow::Normal;
}

Renderer::Flow Renderer::exec_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
    const Value iterable = eval(*s.exprs[0], scope);
    List items = iterate(iterable);
    if (const Expr* test = s.exprs[1].get()) {
        List kept;
        for (const Value& item : items) {
            budget_.step();
            auto probe = std::make_shared<Scope>(scope);
            assign(s.targets[0], item, probe);
            if (eval(*test, probe).truthy()) kept.push_back(item);
        }
        items = std::move(kept);
    }
    if (items.empty()) {
        if (s.bodies[1].empty()) return Flow::Normal;
        return exec(s.bodies[1], scope, out);
    }
    auto shared_items = std::make_shared<const List>(std::move(items));
    auto loop = std::make_shared<LoopContext>(shared_items);
    const Value loop_value = Value::object(loop);
    for (size_t i = 0; i < shared_items->size(); ++i) {
        budget_.step();
        loop->set_index(i);
        auto iteration = std::make_shared<Scope>(scope);
        iteration->set("loop", loop_value);
        assign(s.targets[0], (*shared_items)[i], iteration);
        if (exec(s.bodies[0], iteration, out) == Flow::Break) break;
    }
    return Flow::Normal;
}

Value Renderer::eval(const Expr& e, const ScopePtr& scope) {
    budget_.step();
    Budget::Depth depth(budget_);
    if (e.line) line_ = e.line;
    return eval_inner(e, scope);
}

CallArgs Renderer::eval_args(const ArgExprs& a, const ScopePtr& scope) {
    CallArgs args;
    for (const auto& p : a.positional) args.positional.push_back(eval(*p, scope));
    if (a.star) {
        const Value extra = eval(*a.star, scope);
        for (Value& v : iterate(extra)) args.positional.push_back(std::move(v));
    }
    for (const auto& [k, v] : a.keywords) args.keywords.emplace_back(k, eval(*v, scope));
    if (a.star_star) {
        const Value extra = eval(*a.star_star, scope);
        if (!extra.is_dict()) type_error("argument after ** must be a mapping, not " + extra.type_name());
        for (const auto& [k, v] : extra.as_dict().items()) {
            if (!k.is_string()) type_error("keywords must be strings");
            args.keywords.emplace_back(k.as_string(), v);
        }
    }
    return args;
}

Value Renderer::apply_filter_chain(const Expr& chain, const Value& input, const ScopePtr& scope) {
    const Value inner = chain.children[0] ? apply_filter_chain(*chain.children[0], input, scope) : input;
    CallArgs args = eval_args(chain.args, scope);
    line_ = chain.line;
    return filter(chain.name, inner, args);
}

Value Renderer::eval_inner(const Expr& e, const ScopePtr& scope) {
    switch (e.kind) {
    case ExprKind::Const: return e.constant;
    case ExprKind::Name: {
        if (const Value* v = scope->find(e.name)) return *v;
        return Value::undefined_name(e.name);
    }
    case ExprKind::List:
    case ExprKind::Tuple: {
        List items;
        items.reserve(e.children.size());
        for (const auto& c : e.children) items.push_back(eval(*c, scope));
        return e.kind == ExprKind::List ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    case ExprKind::Dict: {
        Dict d;
        for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
            Value key = eval(*e.children[i], scope);
            d.set(key, eval(*e.children[i + 1], scope));
        }
        return Value::dict(std::move(d));
    }
    case ExprKind::GetAttr: return attribute(eval(*e.children[0], scope), e.name);
    case ExprKind::GetItem: {
        const Value obj = eval(*e.children[0], scope);
        const Expr& key = *e.children[1];
        if (key.kind == ExprKind::Slice) {
            std::optional<int64_t> parts[3];
            for (int i = 0; i < 3; ++i) {
                if (!key.children[size_t(i)]) continue;
                const Value v = eval(*key.children[size_t(i)], scope);
                if (!v.is_none()) parts[i] = to_index(v, "slice indices");
            }
            if (obj.is_undefined()) fail_undefined(obj);
            if (obj.is_string() || obj.is_sequence()) return slice(obj, parts[0], parts[1], parts[2]);
            return Value::undefined({repr(Value::string("slice")), object_type_repr(obj), "", true, false});
        }
        return item(obj, eval(key, scope));
    }
    case ExprKind::Slice: type_error("a slice is only valid inside []");
    case ExprKind::Call: {
        const Value callee = eval(*e.children[0], scope);
        CallArgs args = eval_args(e.args, scope);
        line_ = e.line;
        return call(callee, args);
    }
    case ExprKind::Filter: {
        const Value input = eval(*e.children[0], scope);
        CallArgs args = eval_args(e.args, scope);
        line_ = e.line;
        return filter(e.name, input, args);
    }
    case ExprKind::Test: {
        const Value input = eval(*e.children[0], scope);
        CallArgs args = eval_args(e.args, scope);
        line_ = e.line;
        return Value::boolean(test(e.name, input, args));
    }
    case ExprKind::Not: return Value::boolean(!eval(*e.children[0], scope).truthy());
    case ExprKind::Neg: return negate(eval(*e.children[0], scope));
    case ExprKind::Pos: return positive(eval(*e.children[0], scope));
    case ExprKind::Binary: {
        const Value a = eval(*e.children[0], scope);
        const Value b = eval(*e.children[1], scope);
        return binary_op(e.op, a, b, budget_);
    }
    case ExprKind::And: {
        Value a = eval(*e.children[0], scope);
        if (!a.truthy()) return a;
        return eval(*e.children[1], scope);
    }
    case ExprKind::Or: {
        Value a = eval(*e.children[0], scope);
        if (a.truthy()) return a;
        return eval(*e.children[1], scope);
    }
    case ExprKind::Compare: {
        Value left = eval(*e.children[0], scope);
        for (size_t i = 0; i < e.compare_ops.size(); ++i) {
            Value right = eval(*e.children[i + 1], scope);
            if (!compare(e.compare_ops[i], left, right)) return Value::boolean(false);
            left = std::move(right);
        }
        return Value::boolean(true);
    }
    case ExprKind::Concat: {
        std::string text;
        for (const auto& c : e.children) {
            const Value v = eval(*c, scope);
            text += v.is_string() ? v.as_string() : to_str(v);
            budget_.check_string_size(text.size());
        }
        return Value::string(std::move(text));
    }
    case ExprKind::CondExpr: {
        if (eval(*e.children[0], scope).truthy()) return eval(*e.children[1], scope);
        if (e.children[2]) return eval(*e.children[2], scope);
        UndefinedInfo info;
        info.hint = "the inline if-expression on line " + std::to_string(e.line) +
                    " evaluated to false and no else section was defined.";
        return Value::undefined(std::move(info));
    }
    }
    return Value();
}

Value Renderer::call(const Value& callee, CallArgs& args) {
    budget_.step();
    if (callee.is_undefined()) fail_undefined(callee);
    if (!callee.is_object()) type_error("'" + callee.type_name() + "' object is not callable");
    return callee.as_object()->call(*this, args);
}

Value Renderer::attribute(const Value& obj, const std::string& name) { return get_attribute(obj, name); }

Value Renderer::item(const Value& obj, const Value& key) { return get_item(obj, key); }

Value Renderer::filter(const std::string& name, const Value& input, CallArgs& args) {
    const FilterFn fn = find_filter(name);
    if (!fn) throw RenderError("TemplateRuntimeError", "No filter named '" + name + "' found.");
    if (filter_unsupported(name))
        throw RenderError("TemplateRuntimeError", "the '" + name + "' filter is not supported by hetero's template engine");
    return fn(*this, input, args);
}

bool Renderer::test(const std::string& name, const Value& input, CallArgs& args) {
    const TestFn fn = find_test(name);
    if (!fn) throw RenderError("TemplateRuntimeError", "No test named '" + name + "' found.");
    return fn(*this, input, args);
}

Value Renderer::call_macro(const Stmt& macro, const ScopePtr& closure, const std::string& name, CallArgs& args) {
    Budget::Depth depth(budget_);
    auto scope = std::make_shared<Scope>(closure);
    const size_t n = macro.params.size();
    if (args.positional.size() > n && !macro.catches_varargs)
        type_error("macro '" + name + "' takes not more than " + std::to_string(n) + " argument(s)");
    std::vector<bool> given(n, false);
    for (size_t i = 0; i < n && i < args.positional.size(); ++i) {
        scope->set(macro.params[i], args.positional[i]);
        given[i] = true;
    }
    List varargs;
    for (size_t i = n; i < args.positional.size(); ++i) varargs.push_back(args.positional[i]);
    Dict kwargs;
    bool has_caller = false;
    for (auto& [key, value] : args.keywords) {
        size_t i = 0;
        while (i < n && macro.params[i] != key) ++i;
        if (i < n) {
            if (given[i]) type_error("macro '" + name + "' got multiple values for argument '" + key + "'");
            scope->set(key, value);
            given[i] = true;
        } else if (key == "caller" && macro.catches_caller) {
            scope->set("caller", value);
            has_caller = true;
        } else if (macro.catches_kwargs) {
            kwargs.set(key, value);
        } else {
            type_error("macro '" + name + "' takes no keyword argument '" + key + "'");
        }
    }
    const size_t first_default = n - macro.defaults.size();
    for (size_t i = 0; i < n; ++i) {
        if (given[i]) continue;
        if (i >= first_default) {
            scope->set(macro.params[i], eval(*macro.defaults[i - first_default], scope));
        } else {
            UndefinedInfo info;
            info.name = macro.params[i];
            info.hint = "parameter '" + macro.params[i] + "' was not provided";
            scope->set(macro.params[i], Value::undefined(std::move(info)));
        }
    }
    if (macro.catches_varargs) scope->set("varargs", Value::tuple(std::move(varargs)));
    if (macro.catches_kwargs) scope->set("kwargs", Value::dict(std::move(kwargs)));
    if (macro.catches_caller && !has_caller) {
        UndefinedInfo info;
        info.name = "caller";
        info.hint = "No caller defined";
        scope->set("caller", Value::undefined(std::move(info)));
    }
    const int saved_line = line_;
    std::string text = render_child(macro.bodies[0], scope);
    line_ = saved_line;
    return Value::string(std::move(text));
}

}  // namespace hetero::jinja
