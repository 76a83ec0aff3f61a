// Statement rules: {% if %}, {% for %}, {% set %}, macros, call and filter
// blocks, {% with %}, and the targets they assign to.
#include "parser_parts.hpp"

#include <functional>

namespace hetero::jinja {

bool Parser::at_end_tag(const EndTags& end) const {
    if (cur().kind != Token::Kind::Name) return false;
    for (const char* e : end)
        if (cur().text == e) return true;
    return false;
}

// Statements until a {% tag %} named in `end`; the tag name is current on return.
Body Parser::subparse(EndTags end) {
    DepthGuard guard(*this);
    Body body;
    while (cur().kind != Token::Kind::Eof) {
        const Token& tok = cur();
        if (tok.kind == Token::Kind::Data) {
            auto s = std::make_unique<Stmt>();
            s->kind = StmtKind::Data;
            s->line = tok.line;
            s->text = tok.text;
            body.push_back(std::move(s));
            next();
        } else if (tok.kind == Token::Kind::VariableBegin) {
            next();
            auto s = std::make_unique<Stmt>();
            s->kind = StmtKind::Output;
            s->line = cur().line;
            s->exprs.push_back(parse_tuple(false, true, {}, false));
            expect_kind(Token::Kind::VariableEnd, "end of print statement");
            body.push_back(std::move(s));
        } else if (tok.kind == Token::Kind::BlockBegin) {
            next();
            if (end.size() && at_end_tag(end)) return body;
            parse_statement(body);
            expect_kind(Token::Kind::BlockEnd, "end of statement block");
        } else {
            fail("unexpected '" + describe(tok) + "'");
        }
    }
    if (end.size()) {
        std::string names;
        for (const char* e : end) names += std::string(names.empty() ? "" : " or ") + "'" + e + "'";
        fail("Unexpected end of template. Jinja was looking for the following tags: " + names + ".");
    }
    return body;
}

// The body of a block statement: the rest of the opening tag, then statements up to an end tag.
Body Parser::parse_body(EndTags end) {
    skip_op(":");
    expect_kind(Token::Kind::BlockEnd, "end of statement block");
    return subparse(end);
}

void Parser::expect_end_tag(const char* name) {
    if (!skip_name(name)) fail_unexpected(name);
}

StmtPtr Parser::new_stmt(StmtKind kind) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->line = cur().line;
    return s;
}

void Parser::parse_statement(Body& body) {
    if (cur().kind != Token::Kind::Name) fail("tag name expected");
    const std::string tag = cur().text;
    if (tag == "if") return body.push_back(parse_if());
    if (tag == "for") return body.push_back(parse_for());
    if (tag == "set") return body.push_back(parse_set());
    if (tag == "macro") return body.push_back(parse_macro());
    if (tag == "call") return body.push_back(parse_call_block());
    if (tag == "filter") return body.push_back(parse_filter_block());
    if (tag == "with") return body.push_back(parse_with());
    if (tag == "print") {
        next();
        const int line = cur().line;
        std::vector<ExprPtr> items;
        while (cur().kind != Token::Kind::BlockEnd) {
            if (!items.empty()) expect_op(",");
            items.push_back(parse_expression(true));
        }
        for (auto& e : items) {
            auto s = new_stmt(StmtKind::Output);
            s->line = line;
            s->exprs.push_back(std::move(e));
            body.push_back(std::move(s));
        }
        return;
    }
    if (tag == "break" || tag == "continue") {
        if (loop_depth_ == 0) fail("'" + tag + "' outside loop");
        auto s = new_stmt(tag == "break" ? StmtKind::Break : StmtKind::Continue);
        next();
        return body.push_back(std::move(s));
    }
    if (tag == "block" || tag == "extends" || tag == "include" || tag == "import" || tag == "from" || tag == "autoescape")
        fail("the '" + tag + "' tag is not supported in chat templates");
    fail("Encountered unknown tag '" + tag + "'.");
}

StmtPtr Parser::parse_if() {
    auto s = new_stmt(StmtKind::If);
    next();
    while (true) {
        s->exprs.push_back(parse_tuple(false, false, {}, false));
        s->bodies.push_back(parse_body({"elif", "else", "endif"}));
        const std::string tag = cur().text;
        next();
        if (tag == "elif") continue;
        if (tag == "else") {
            s->bodies.push_back(parse_body({"endif"}));
            expect_end_tag("endif");
        }
        break;
    }
    return s;
}

StmtPtr Parser::parse_for() {
    auto s = new_stmt(StmtKind::For);
    next();
    s->targets.push_back(parse_assign_target(true, false, {"in"}, false));
    if (!skip_name("in")) fail_unexpected("in");
    s->exprs.push_back(parse_tuple(false, false, {"recursive"}, false));
    ExprPtr test;
    if (skip_name("if")) test = parse_expression(true);
    s->exprs.push_back(std::move(test));
    if (is_name("recursive")) fail("recursive loops are not supported in chat templates");
    ++loop_depth_;
    s->bodies.push_back(parse_body({"endfor", "else"}));
    --loop_depth_;
    const std::string tag = cur().text;
    next();
    if (tag == "else") {
        s->bodies.push_back(parse_body({"endfor"}));
        expect_end_tag("endfor");
    } else {
        s->bodies.emplace_back();
    }
    return s;
}

StmtPtr Parser::parse_set() {
    auto s = new_stmt(StmtKind::Set);
    next();
    s->targets.push_back(parse_assign_target(true, false, {}, true));
    if (skip_op("=")) {
        s->exprs.push_back(parse_tuple(false, true, {}, false));
        return s;
    }
    s->kind = StmtKind::SetBlock;
    s->filter = parse_filter_chain(nullptr, false);
    s->bodies.push_back(parse_body({"endset"}));
    expect_end_tag("endset");
    return s;
}

void Parser::parse_signature(Stmt& s) {
    expect_op("(");
    while (!is_op(")")) {
        if (!s.params.empty()) expect_op(",");
        s.params.push_back(expect_name());
        if (skip_op("=")) {
            s.defaults.push_back(parse_expression(true));
        } else if (!s.defaults.empty()) {
            fail("non-default argument follows default argument");
        }
    }
    expect_op(")");
}

StmtPtr Parser::parse_macro() {
    auto s = new_stmt(StmtKind::Macro);
    next();
    s->name = expect_name();
    parse_signature(*s);
    parse_callable_body(*s, "endmacro");
    return s;
}

// The body of a macro or call block up to `end_tag`: outside any loop of
// the template around it (no break or continue reaches out of it).
void Parser::parse_callable_body(Stmt& s, const char* end_tag) {
    const int saved_loops = loop_depth_;
    loop_depth_ = 0;
    s.bodies.push_back(parse_body({end_tag}));
    loop_depth_ = saved_loops;
    expect_end_tag(end_tag);
    note_special_names(s);
}

StmtPtr Parser::parse_call_block() {
    auto s = new_stmt(StmtKind::CallBlock);
    next();
    if (is_op("(")) parse_signature(*s);
    ExprPtr call = parse_expression(true);
    if (call->kind != ExprKind::Call) fail("expected call", s->line);
    s->exprs.push_back(std::move(call));
    parse_callable_body(*s, "endcall");
    return s;
}

StmtPtr Parser::parse_filter_block() {
    auto s = new_stmt(StmtKind::FilterBlock);
    next();
    s->filter = parse_filter_chain(nullptr, true);
    s->bodies.push_back(parse_body({"endfilter"}));
    expect_end_tag("endfilter");
    return s;
}

StmtPtr Parser::parse_with() {
    auto s = new_stmt(StmtKind::With);
    next();
    while (cur().kind != Token::Kind::BlockEnd) {
        if (!s->targets.empty()) expect_op(",");
        s->targets.push_back(parse_assign_target(true, false, {}, false));
        expect_op("=");
        s->exprs.push_back(parse_expression(true));
    }
    s->bodies.push_back(parse_body({"endwith"}));
    expect_end_tag("endwith");
    return s;
}

// Whether a macro body reads varargs / kwargs / caller (Jinja2 accepts
// extra arguments only then).
void Parser::note_special_names(Stmt& s) {
    std::function<void(const Expr*)> walk_expr = [&](const Expr* e) {
        if (!e) return;
        if (e->kind == ExprKind::Name) {
            if (e->name == "varargs") s.catches_varargs = true;
            if (e->name == "kwargs") s.catches_kwargs = true;
            if (e->name == "caller") s.catches_caller = true;
        }
        for (const auto& c : e->children) walk_expr(c.get());
        for (const auto& c : e->args.positional) walk_expr(c.get());
        for (const auto& kv : e->args.keywords) walk_expr(kv.second.get());
        walk_expr(e->args.star.get());
        walk_expr(e->args.star_star.get());
    };
    std::function<void(const Body&)> walk_body = [&](const Body& body) {
        for (const auto& st : body) {
            for (const auto& e : st->exprs) walk_expr(e.get());
            for (const auto& e : st->defaults) walk_expr(e.get());
            walk_expr(st->filter.get());
            for (const auto& b : st->bodies) walk_body(b);
        }
    };
    walk_body(s.bodies[0]);
}

// --- assignment targets ---
bool Parser::is_tuple_end(const EndTags& extra) const {
    if (cur().kind == Token::Kind::VariableEnd || cur().kind == Token::Kind::BlockEnd || is_op(")")) return true;
    return at_end_tag(extra);
}

Target Parser::parse_single_target(bool with_namespace) {
    const Token& tok = cur();
    if (tok.kind == Token::Kind::Name) {
        if (tok.text == "true" || tok.text == "false" || tok.text == "True" || tok.text == "False" || tok.text == "none" ||
            tok.text == "None")
            fail("can't assign to 'const'");
        Target t;
        t.name = tok.text;
        next();
        if (with_namespace && is_op(".")) {
            next();
            t.kind = Target::Kind::NamespaceAttr;
            t.attribute = expect_name();
        }
        return t;
    }
    if (is_op("(")) {
        next();
        Target t = parse_assign_target(true, false, {}, false);
        expect_op(")");
        return t;
    }
    fail("can't assign to '" + describe(tok) + "'");
}

Target Parser::parse_assign_target(bool with_tuple, bool name_only, EndTags extra, bool with_namespace) {
    if (name_only || !with_tuple) return parse_single_target(with_namespace && !name_only);
    std::vector<Target> items;
    bool is_tuple = false;
    while (true) {
        if (!items.empty()) expect_op(",");
        if (is_tuple_end(extra)) break;
        items.push_back(parse_single_target(with_namespace));
        if (is_op(",")) {
            is_tuple = true;
        } else {
            break;
        }
    }
    if (!is_tuple) {
        if (items.empty()) fail("Expected an expression, got '" + describe(cur()) + "'");
        return std::move(items[0]);
    }
    Target t;
    t.kind = Target::Kind::Tuple;
    t.items = std::move(items);
    return t;
}

}  // namespace hetero::jinja
