// The parsed template: statements (data, output, if, for, set, macro, ...)
// holding expressions. Built by the parser, read-only while rendering, so
// one parsed template serves concurrent renders.
#pragma once

#include "value.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hetero::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// Arguments written at a call, filter or test: f(a, b=1, *rest, **named).
struct ArgExprs {
    std::vector<ExprPtr> positional;
    std::vector<std::pair<std::string, ExprPtr>> keywords;
    ExprPtr star, star_star;
};

enum class ExprKind {
    Const,     // constant
    Name,      // name
    List,      // children: items
    Tuple,     // children: items
    Dict,      // children: key, value, key, value, ...
    GetAttr,   // children[0].name
    GetItem,   // children[0][children[1]]
    Slice,     // children: start, stop, step (each may be null); only as a GetItem key
    Call,      // children[0](args)
    Filter,    // children[0] | name(args); children[0] null inside {% filter %} / {% set x | f %}
    Test,      // children[0] is name(args)
    Not,
    Neg,
    Pos,
    Binary,    // children[0] op children[1]
    And,
    Or,
    Compare,   // children[0] compare_ops[0] children[1] compare_ops[1] children[2] ...
    Concat,    // children joined with ~
    CondExpr,  // children: test, value if true, value if false (may be null)
};

enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow };
enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct Expr {
    ExprKind kind;
    int line = 0;
    Value constant;
    std::string name;
    std::vector<ExprPtr> children;
    ArgExprs args;
    BinaryOp op = BinaryOp::Add;
    std::vector<CompareOp> compare_ops;
};

// Where {% set %}, {% for %} and {% with %} put values.
struct Target {
    enum class Kind { Name, Tuple, NamespaceAttr };
    Kind kind = Kind::Name;
    std::string name;           // Name, and the namespace variable of NamespaceAttr
    std::string attribute;      // NamespaceAttr
    std::vector<Target> items;  // Tuple
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind {
    Data,         // text
    Output,       // {{ exprs[0] }}
    If,           // exprs: one test per branch; bodies: one per branch, then the else body
    For,          // targets[0] in exprs[0] (if exprs[1]); bodies: loop, else
    Set,          // targets[0] = exprs[0]
    SetBlock,     // targets[0] = rendered bodies[0] | filter
    Macro,        // name(params) bodies[0]
    CallBlock,    // {% call(params) exprs[0] %} bodies[0]: the body becomes caller()
    FilterBlock,  // bodies[0] | filter
    With,         // targets[i] = exprs[i] within bodies[0]
    Break,
    Continue,
};

struct Stmt {
    StmtKind kind;
    int line = 0;
    std::string text;
    std::vector<ExprPtr> exprs;
    std::vector<Body> bodies;
    std::vector<Target> targets;
    ExprPtr filter;
    // Macro and CallBlock signature; defaults belong to the last parameters.
    std::string name;
    std::vector<std::string> params;
    std::vector<ExprPtr> defaults;
    bool catches_varargs = false;  // the body reads `varargs`: extra positional arguments are allowed
    bool catches_kwargs = false;   // ... `kwargs`: unknown keyword arguments are allowed
    bool catches_caller = false;   // ... `caller`
};

}  // namespace hetero::jinja
