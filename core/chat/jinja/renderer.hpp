// Runs a parsed template: statements write text, expressions compute values,
// under Jinja2's scoping (a for loop body is a fresh scope each iteration,
// if does not open one, macros see the scope they were defined in) and the
// immutable sandbox's rules.
#pragma once

#include "ast.hpp"
#include "budget.hpp"
#include "value.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hetero::jinja {

struct Scope {
    std::shared_ptr<Scope> parent;
    std::vector<std::pair<std::string, Value>> vars;

    explicit Scope(std::shared_ptr<Scope> p = nullptr) : parent(std::move(p)) {}
    const Value* find(std::string_view name) const;
    void set(const std::string& name, Value value);
};
using ScopePtr = std::shared_ptr<Scope>;

class Namespace;

class Renderer {
public:
    explicit Renderer(Budget& budget) : budget_(budget) {}
    // Breaks the reference cycles a render may leave (a macro held by the
    // scope it closes over, namespaces holding each other) and the long
    // chains namespaces can build, so freeing them neither leaks nor recurses deeply.
    ~Renderer();
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    // Renders `body` with `root` (the variables and globals) as the outermost scope.
    std::string render(const Body& body, const ScopePtr& root);

    Budget& budget() { return budget_; }
    // The template line being run, for error messages.
    int line() const { return line_; }

    Value call(const Value& callee, CallArgs& args);
    // Jinja2's sandboxed getattr (x.name) and getitem (x[key]).
    Value attribute(const Value& obj, const std::string& name);
    Value item(const Value& obj, const Value& key);
    Value filter(const std::string& name, const Value& input, CallArgs& args);
    bool test(const std::string& name, const Value& input, CallArgs& args);
    // Runs a macro: binds `args` to its parameters in a scope under `closure`.
    Value call_macro(const Stmt& macro, const ScopePtr& closure, const std::string& name, CallArgs& args);
    // namespace(): a new namespace the renderer keeps track of.
    Value make_namespace(Dict attributes);

private:
    enum class Flow { Normal, Break, Continue };

    Flow exec(const Body& body, const ScopePtr& scope, std::string& out);
    Flow exec_stmt(const Stmt& s, const ScopePtr& scope, std::string& out);
    Flow exec_for(const Stmt& s, const ScopePtr& scope, std::string& out);
    void append(std::string& out, std::string_view text);
    std::string render_child(const Body& body, const ScopePtr& scope);
    void assign(const Target& target, const Value& value, const ScopePtr& scope);

    Value eval(const Expr& e, const ScopePtr& scope);
    Value eval_inner(const Expr& e, const ScopePtr& scope);
    CallArgs eval_args(const ArgExprs& a, const ScopePtr& scope);
    // A filter chain whose innermost input is `input` ({% filter %}, {% set x | f %}).
    Value apply_filter_chain(const Expr& chain, const Value& input, const ScopePtr& scope);

    Budget& budget_;
    int line_ = 0;
    std::vector<std::shared_ptr<Namespace>> namespaces_;
    std::vector<ScopePtr> closure_scopes_;  // scopes macros were defined in
    const std::string* top_out_ = nullptr;
};

}  // namespace hetero::jinja
