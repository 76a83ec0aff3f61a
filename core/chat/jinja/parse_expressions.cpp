// Expression rules, lowest precedence first: tuples, inline if, or/and/not,
// comparisons, arithmetic, unary, then primaries with their subscripts,
// calls, filters and tests.
#include "parser_parts.hpp"

namespace hetero::jinja {

ExprPtr Parser::parse_tuple(bool simplified, bool with_condexpr, EndTags extra, bool explicit_parentheses) {
    const int line = cur().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
        if (!items.empty()) expect_op(",");
        if (is_tuple_end(extra)) break;
        items.push_back(simplified ? parse_primary() : parse_expression(with_condexpr));
        if (is_op(",")) {
            is_tuple = true;
        } else {
            break;
        }
    }
    if (!is_tuple) {
        if (!items.empty()) return std::move(items[0]);
        if (!explicit_parentheses) fail("Expected an expression, got '" + describe(cur()) + "'");
    }
    auto e = make(ExprKind::Tuple, line);
    e->children = std::move(items);
    return e;
}

ExprPtr Parser::parse_condexpr() {
    DepthGuard guard(*this);
    int line = cur().line;
    ExprPtr expr1 = parse_or();
    size_t chain = 0;
    while (skip_name("if")) {
        check_chain(chain);
        ExprPtr expr2 = parse_or();
        ExprPtr expr3;
        if (skip_name("else")) expr3 = parse_condexpr();
        auto e = make(ExprKind::CondExpr, line);
        e->children.push_back(std::move(expr2));
        e->children.push_back(std::move(expr1));
        e->children.push_back(std::move(expr3));
        expr1 = std::move(e);
        line = cur().line;
    }
    return expr1;
}

ExprPtr Parser::binary(ExprKind kind, int line, ExprPtr left, ExprPtr right) {
    auto e = make(kind, line);
    e->children.push_back(std::move(left));
    e->children.push_back(std::move(right));
    return e;
}

// operand (KEYWORD operand)*, folded to the left.
ExprPtr Parser::parse_keyword_chain(const char* keyword, ExprKind kind, ExprPtr (Parser::*operand)()) {
    int line = cur().line;
    ExprPtr left = (this->*operand)();
    size_t chain = 0;
    while (skip_name(keyword)) {
        check_chain(chain);
        left = binary(kind, line, std::move(left), (this->*operand)());
        line = cur().line;
    }
    return left;
}

ExprPtr Parser::parse_or() { return parse_keyword_chain("or", ExprKind::Or, &Parser::parse_and); }

ExprPtr Parser::parse_and() { return parse_keyword_chain("and", ExprKind::And, &Parser::parse_not); }

ExprPtr Parser::parse_not() {
    if (is_name("not")) {
        DepthGuard guard(*this);
        auto e = make(ExprKind::Not, cur().line);
        next();
        e->children.push_back(parse_not());
        return e;
    }
    return parse_compare();
}

ExprPtr Parser::parse_compare() {
    const int line = cur().line;
    ExprPtr first = parse_math1();
    std::vector<CompareOp> ops;
    std::vector<ExprPtr> operands;
    while (true) {
        CompareOp op;
        if (skip_op("==")) op = CompareOp::Eq;
        else if (skip_op("!=")) op = CompareOp::Ne;
        else if (skip_op("<")) op = CompareOp::Lt;
        else if (skip_op("<=")) op = CompareOp::Le;
        else if (skip_op(">")) op = CompareOp::Gt;
        else if (skip_op(">=")) op = CompareOp::Ge;
        else if (skip_name("in")) op = CompareOp::In;
        else if (is_name("not") && look().kind == Token::Kind::Name && look().text == "in") {
            next();
            next();
            op = CompareOp::NotIn;
        } else {
            break;
        }
        ops.push_back(op);
        operands.push_back(parse_math1());
    }
    if (ops.empty()) return first;
    auto e = make(ExprKind::Compare, line);
    e->children.push_back(std::move(first));
    for (auto& o : operands) e->children.push_back(std::move(o));
    e->compare_ops = std::move(ops);
    return e;
}

ExprPtr Parser::arith(BinaryOp op, int line, ExprPtr left, ExprPtr right) {
    auto e = binary(ExprKind::Binary, line, std::move(left), std::move(right));
    e->op = op;
    return e;
}

ExprPtr Parser::parse_math1() {
    int line = cur().line;
    ExprPtr left = parse_concat();
    size_t chain = 0;
    while (is_op("+") || is_op("-")) {
        check_chain(chain);
        const BinaryOp op = is_op("+") ? BinaryOp::Add : BinaryOp::Sub;
        next();
        left = arith(op, line, std::move(left), parse_concat());
        line = cur().line;
    }
    return left;
}

ExprPtr Parser::parse_concat() {
    const int line = cur().line;
    std::vector<ExprPtr> items;
    items.push_back(parse_math2());
    while (skip_op("~")) items.push_back(parse_math2());
    if (items.size() == 1) return std::move(items[0]);
    auto e = make(ExprKind::Concat, line);
    e->children = std::move(items);
    return e;
}

ExprPtr Parser::parse_math2() {
    int line = cur().line;
    ExprPtr left = parse_pow();
    size_t chain = 0;
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
        check_chain(chain);
        const std::string o = cur().text;
        const BinaryOp op = o == "*" ? BinaryOp::Mul : o == "/" ? BinaryOp::Div : o == "//" ? BinaryOp::FloorDiv : BinaryOp::Mod;
        next();
        left = arith(op, line, std::move(left), parse_pow());
        line = cur().line;
    }
    return left;
}

ExprPtr Parser::parse_pow() {
    int line = cur().line;
    ExprPtr left = parse_unary(true);
    size_t chain = 0;
    while (skip_op("**")) {
        check_chain(chain);
        left = arith(BinaryOp::Pow, line, std::move(left), parse_unary(true));
        line = cur().line;
    }
    return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    const int line = cur().line;
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
        node = make(is_op("-") ? ExprKind::Neg : ExprKind::Pos, line);
        next();
        node->children.push_back(parse_unary(false));
    } else {
        node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
}

ExprPtr Parser::parse_primary() {
    DepthGuard guard(*this);
    const Token& tok = cur();
    const int line = tok.line;
    if (tok.kind == Token::Kind::Name) {
        auto e = make(ExprKind::Const, line);
        if (tok.text == "true" || tok.text == "True") e->constant = Value::boolean(true);
        else if (tok.text == "false" || tok.text == "False") e->constant = Value::boolean(false);
        else if (tok.text == "none" || tok.text == "None") e->constant = Value::none();
        else {
            e->kind = ExprKind::Name;
            e->name = tok.text;
        }
        next();
        return e;
    }
    if (tok.kind == Token::Kind::String) {
        std::string text;
        while (cur().kind == Token::Kind::String) {
            text += cur().text;
            next();
        }
        auto e = make(ExprKind::Const, line);
        e->constant = Value::string(std::move(text));
        return e;
    }
    if (tok.kind == Token::Kind::Integer || tok.kind == Token::Kind::Float) {
        auto e = make(ExprKind::Const, line);
        e->constant = tok.kind == Token::Kind::Integer ? Value::integer(tok.integer) : Value::floating(tok.floating);
        next();
        return e;
    }
    if (is_op("(")) {
        next();
        ExprPtr e = parse_tuple(false, true, {}, true);
        expect_op(")");
        return e;
    }
    if (is_op("[")) {
        next();
        auto e = make(ExprKind::List, line);
        while (!is_op("]")) {
            if (!e->children.empty()) expect_op(",");
            if (is_op("]")) break;
            e->children.push_back(parse_expression(true));
        }
        expect_op("]");
        return e;
    }
    if (is_op("{")) {
        next();
        auto e = make(ExprKind::Dict, line);
        while (!is_op("}")) {
            if (!e->children.empty()) expect_op(",");
            if (is_op("}")) break;
            e->children.push_back(parse_expression(true));
            expect_op(":");
            e->children.push_back(parse_expression(true));
        }
        expect_op("}");
        return e;
    }
    if (tok.kind == Token::Kind::Eof) fail("unexpected end of template");
    fail("unexpected '" + describe(tok) + "'");
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
    size_t chain = 0;
    while (true) {
        if (is_op(".") || is_op("[") || is_op("(")) check_chain(chain);
        if (is_op(".") || is_op("[")) {
            node = parse_subscript(std::move(node));
        } else if (is_op("(")) {
            node = parse_call(std::move(node));
        } else {
            break;
        }
    }
    return node;
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
    size_t chain = 0;
    while (true) {
        if (is_op("|") || is_name("is") || is_op("(")) check_chain(chain);
        if (is_op("|")) {
            node = parse_filter_chain(std::move(node), false);
        } else if (is_name("is")) {
            node = parse_test(std::move(node));
        } else if (is_op("(")) {
            node = parse_call(std::move(node));
        } else {
            break;
        }
    }
    return node;
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
    const int line = cur().line;
    if (skip_op(".")) {
        if (cur().kind == Token::Kind::Name) {
            auto e = make(ExprKind::GetAttr, line);
            e->name = cur().text;
            next();
            e->children.push_back(std::move(node));
            return e;
        }
        if (cur().kind != Token::Kind::Integer) fail("expected name or number");
        auto key = make(ExprKind::Const, cur().line);
        key->constant = Value::integer(cur().integer);
        next();
        auto e = make(ExprKind::GetItem, line);
        e->children.push_back(std::move(node));
        e->children.push_back(std::move(key));
        return e;
    }
    expect_op("[");
    std::vector<ExprPtr> args;
    while (!is_op("]")) {
        if (!args.empty()) expect_op(",");
        args.push_back(parse_subscribed());
    }
    expect_op("]");
    auto e = make(ExprKind::GetItem, line);
    e->children.push_back(std::move(node));
    if (args.size() == 1) {
        e->children.push_back(std::move(args[0]));
    } else {
        auto tuple = make(ExprKind::Tuple, line);
        tuple->children = std::move(args);
        e->children.push_back(std::move(tuple));
    }
    return e;
}

ExprPtr Parser::parse_subscribed() {
    const int line = cur().line;
    std::vector<ExprPtr> parts;
    if (skip_op(":")) {
        parts.push_back(nullptr);
    } else {
        ExprPtr node = parse_expression(true);
        if (!skip_op(":")) return node;
        parts.push_back(std::move(node));
    }
    if (is_op(":") || is_op("]") || is_op(",")) {
        parts.push_back(nullptr);
    } else {
        parts.push_back(parse_expression(true));
    }
    if (skip_op(":")) {
        parts.push_back(is_op("]") || is_op(",") ? nullptr : parse_expression(true));
    } else {
        parts.push_back(nullptr);
    }
    auto e = make(ExprKind::Slice, line);
    e->children = std::move(parts);
    return e;
}

ArgExprs Parser::parse_call_args() {
    const int line = cur().line;
    expect_op("(");
    ArgExprs a;
    bool need_comma = false;
    auto ensure = [&](bool ok) {
        if (!ok) fail("invalid syntax for function call expression", line);
    };
    while (!is_op(")")) {
        if (need_comma) {
            expect_op(",");
            if (is_op(")")) break;
        }
        if (is_op("*")) {
            ensure(!a.star && !a.star_star);
            next();
            a.star = parse_expression(true);
        } else if (is_op("**")) {
            ensure(!a.star_star);
            next();
            a.star_star = parse_expression(true);
        } else if (cur().kind == Token::Kind::Name && look().kind == Token::Kind::Operator && look().text == "=") {
            ensure(!a.star_star);
            std::string key = cur().text;
            next();
            next();
            a.keywords.emplace_back(std::move(key), parse_expression(true));
        } else {
            ensure(!a.star && !a.star_star && a.keywords.empty());
            a.positional.push_back(parse_expression(true));
        }
        need_comma = true;
    }
    expect_op(")");
    return a;
}

ExprPtr Parser::parse_call(ExprPtr node) {
    auto e = make(ExprKind::Call, cur().line);
    e->args = parse_call_args();
    e->children.push_back(std::move(node));
    return e;
}

// `| name(args) | name ...`; with start_inline the first name has no pipe ({% filter name %}).
ExprPtr Parser::parse_filter_chain(ExprPtr node, bool start_inline) {
    size_t chain = 0;
    while (is_op("|") || start_inline) {
        check_chain(chain);
        if (!start_inline) next();
        auto e = make(ExprKind::Filter, cur().line);
        e->name = expect_name();
        while (skip_op(".")) e->name += "." + expect_name();
        if (is_op("(")) e->args = parse_call_args();
        e->children.push_back(std::move(node));
        node = std::move(e);
        start_inline = false;
    }
    return node;
}

ExprPtr Parser::parse_test(ExprPtr node) {
    const int line = cur().line;
    next();  // is
    const bool negated = skip_name("not");
    auto e = make(ExprKind::Test, line);
    e->name = expect_name();
    while (skip_op(".")) e->name += "." + expect_name();
    const Token& tok = cur();
    const bool starts_arg = tok.kind == Token::Kind::Name || tok.kind == Token::Kind::String || tok.kind == Token::Kind::Integer ||
                            tok.kind == Token::Kind::Float || is_op("[") || is_op("{");
    if (is_op("(")) {
        e->args = parse_call_args();
    } else if (starts_arg && !is_name("else") && !is_name("or") && !is_name("and")) {
        if (is_name("is")) fail("You cannot chain multiple tests with is");
        e->args.positional.push_back(parse_postfix(parse_primary()));
    }
    e->children.push_back(std::move(node));
    if (!negated) return e;
    auto n = make(ExprKind::Not, line);
    n->children.push_back(std::move(e));
    return n;
}

}  // namespace hetero::jinja
