#include "parser.hpp"

#include "errors.hpp"
#include "filters.hpp"
#include "tests.hpp"

#include <functional>
#include <initializer_list>

namespace hetero::jinja {

namespace {

std::string describe(const Token& t) {
    switch (t.kind) {
    case Token::Kind::Data: return "template data";
    case Token::Kind::VariableBegin: return "begin of print statement";
    case Token::Kind::VariableEnd: return "end of print statement";
    case Token::Kind::BlockBegin: return "begin of statement block";
    case Token::Kind::BlockEnd: return "end of statement block";
    case Token::Kind::Name: return t.text;
    case Token::Kind::String: return "string";
    case Token::Kind::Integer: return "integer";
    case Token::Kind::Float: return "float";
    case Token::Kind::Operator: return t.text;
    case Token::Kind::Eof: return "end of template";
    }
    return "token";
}

ExprPtr make(ExprKind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
}

class Parser {
public:
    Parser(const std::vector<Token>& tokens, int max_depth) : t_(tokens), max_depth_(max_depth) {}

    Body parse_template() {
        Body body = subparse({});
        if (cur().kind != Token::Kind::Eof) fail("unexpected '" + describe(cur()) + "'");
        return body;
    }

private:
    // --- the token stream ---
    const Token& cur() const { return t_[pos_]; }
    const Token& look() const { return t_[pos_ + 1 < t_.size() ? pos_ + 1 : pos_]; }
    void next() {
        if (pos_ + 1 < t_.size()) ++pos_;
    }
    bool is_op(const char* op) const { return cur().kind == Token::Kind::Operator && cur().text == op; }
    bool is_name(const char* name) const { return cur().kind == Token::Kind::Name && cur().text == name; }
    bool skip_op(const char* op) {
        if (!is_op(op)) return false;
        next();
        return true;
    }
    bool skip_name(const char* name) {
        if (!is_name(name)) return false;
        next();
        return true;
    }
    [[noreturn]] void fail(const std::string& message, int line = 0) const { throw SyntaxError(line ? line : cur().line, message); }
    [[noreturn]] void fail_unexpected(const std::string& expected) const {
        if (cur().kind == Token::Kind::Eof) fail("unexpected end of template, expected '" + expected + "'.");
        fail("expected token '" + expected + "', got '" + describe(cur()) + "'");
    }
    void expect_op(const char* op) {
        if (!skip_op(op)) fail_unexpected(op);
    }
    void expect_kind(Token::Kind kind, const char* what) {
        if (cur().kind != kind) fail_unexpected(what);
        next();
    }
    std::string expect_name() {
        if (cur().kind != Token::Kind::Name) fail_unexpected("name");
        std::string n = cur().text;
        next();
        return n;
    }

    struct DepthGuard {
        Parser& p;
        explicit DepthGuard(Parser& parser) : p(parser) {
            if (++p.depth_ > p.max_depth_)
                p.fail("template nested too deeply (the limit is " + std::to_string(p.max_depth_) + " levels)");
        }
        ~DepthGuard() { --p.depth_; }
    };

    // A left-associative chain (a + b + c ..., x.y.z, f | g | h) nests the
    // tree as deep as it is long; rendering and freeing it recurse that deep.
    void check_chain(size_t& length) {
        if (++length + size_t(depth_) > size_t(max_depth_))
            fail("expression nested too deeply (the limit is " + std::to_string(max_depth_) + " levels)");
    }

    // --- statements ---
    using EndTags = std::initializer_list<const char*>;

    bool at_end_tag(const EndTags& end) const {
        if (cur().kind != Token::Kind::Name) return false;
        for (const char* e : end)
            if (cur().text == e) return true;
        return false;
    }

    // Statements until a {% tag %} named in `end`; the tag name is current on return.
    Body subparse(EndTags end) {
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
    Body parse_body(EndTags end) {
        skip_op(":");
        expect_kind(Token::Kind::BlockEnd, "end of statement block");
        return subparse(end);
    }

    void expect_end_tag(const char* name) {
        if (!skip_name(name)) fail_unexpected(name);
    }

    StmtPtr new_stmt(StmtKind kind) {
        auto s = std::make_unique<Stmt>();
        s->kind = kind;
        s->line = cur().line;
        return s;
    }

    void parse_statement(Body& body) {
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

    StmtPtr parse_if() {
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

    StmtPtr parse_for() {
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

    StmtPtr parse_set() {
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

    void parse_signature(Stmt& s) {
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

    StmtPtr parse_macro() {
        auto s = new_stmt(StmtKind::Macro);
        next();
        s->name = expect_name();
        parse_signature(*s);
        const int saved_loops = loop_depth_;
        loop_depth_ = 0;
        s->bodies.push_back(parse_body({"endmacro"}));
        loop_depth_ = saved_loops;
        expect_end_tag("endmacro");
        note_special_names(*s);
        return s;
    }

    StmtPtr parse_call_block() {
        auto s = new_stmt(StmtKind::CallBlock);
        next();
        if (is_op("(")) parse_signature(*s);
        ExprPtr call = parse_expression(true);
        if (call->kind != ExprKind::Call) fail("expected call", s->line);
        s->exprs.push_back(std::move(call));
        const int saved_loops = loop_depth_;
        loop_depth_ = 0;
        s->bodies.push_back(parse_body({"endcall"}));
        loop_depth_ = saved_loops;
        expect_end_tag("endcall");
        note_special_names(*s);
        return s;
    }

    StmtPtr parse_filter_block() {
        auto s = new_stmt(StmtKind::FilterBlock);
        next();
        s->filter = parse_filter_chain(nullptr, true);
        s->bodies.push_back(parse_body({"endfilter"}));
        expect_end_tag("endfilter");
        return s;
    }

    StmtPtr parse_with() {
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
    void note_special_names(Stmt& s) {
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
    bool is_tuple_end(const EndTags& extra) const {
        if (cur().kind == Token::Kind::VariableEnd || cur().kind == Token::Kind::BlockEnd || is_op(")")) return true;
        return at_end_tag(extra);
    }

    Target parse_single_target(bool with_namespace) {
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

    Target parse_assign_target(bool with_tuple, bool name_only, EndTags extra, bool with_namespace) {
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

    // --- expressions ---
    ExprPtr parse_tuple(bool simplified, bool with_condexpr, EndTags extra, bool explicit_parentheses) {
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

    ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

    ExprPtr parse_condexpr() {
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

    ExprPtr binary(ExprKind kind, int line, ExprPtr left, ExprPtr right) {
        auto e = make(kind, line);
        e->children.push_back(std::move(left));
        e->children.push_back(std::move(right));
        return e;
    }

    ExprPtr parse_or() {
        int line = cur().line;
        ExprPtr left = parse_and();
        size_t chain = 0;
        while (skip_name("or")) {
            check_chain(chain);
            left = binary(ExprKind::Or, line, std::move(left), parse_and());
            line = cur().line;
        }
        return left;
    }

    ExprPtr parse_and() {
        int line = cur().line;
        ExprPtr left = parse_not();
        size_t chain = 0;
        while (skip_name("and")) {
            check_chain(chain);
            left = binary(ExprKind::And, line, std::move(left), parse_not());
            line = cur().line;
        }
        return left;
    }

    ExprPtr parse_not() {
        if (is_name("not")) {
            DepthGuard guard(*this);
            auto e = make(ExprKind::Not, cur().line);
            next();
            e->children.push_back(parse_not());
            return e;
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
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

    ExprPtr arith(BinaryOp op, int line, ExprPtr left, ExprPtr right) {
        auto e = binary(ExprKind::Binary, line, std::move(left), std::move(right));
        e->op = op;
        return e;
    }

    ExprPtr parse_math1() {
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

    ExprPtr parse_concat() {
        const int line = cur().line;
        std::vector<ExprPtr> items;
        items.push_back(parse_math2());
        while (skip_op("~")) items.push_back(parse_math2());
        if (items.size() == 1) return std::move(items[0]);
        auto e = make(ExprKind::Concat, line);
        e->children = std::move(items);
        return e;
    }

    ExprPtr parse_math2() {
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

    ExprPtr parse_pow() {
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

    ExprPtr parse_unary(bool with_filter) {
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

    ExprPtr parse_primary() {
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

    ExprPtr parse_postfix(ExprPtr node) {
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

    ExprPtr parse_filter_expr(ExprPtr node) {
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

    ExprPtr parse_subscript(ExprPtr node) {
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

    ExprPtr parse_subscribed() {
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

    ArgExprs parse_call_args() {
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

    ExprPtr parse_call(ExprPtr node) {
        auto e = make(ExprKind::Call, cur().line);
        e->args = parse_call_args();
        e->children.push_back(std::move(node));
        return e;
    }

    // `| name(args) | name ...`; with start_inline the first name has no pipe ({% filter name %}).
    ExprPtr parse_filter_chain(ExprPtr node, bool start_inline) {
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

    ExprPtr parse_test(ExprPtr node) {
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

    const std::vector<Token>& t_;
    size_t pos_ = 0;
    int depth_ = 0;
    int max_depth_;
    int loop_depth_ = 0;
};

// Jinja2 refuses unknown filters and tests when it compiles the template,
// except inside an if or an inline if, where they fail only when reached.
void check_known_names(const Expr* e, bool soft) {
    if (!e) return;
    if (e->kind == ExprKind::CondExpr) soft = true;
    if (!soft && e->kind == ExprKind::Filter && !has_filter(e->name)) throw SyntaxError(e->line, "No filter named '" + e->name + "'.");
    if (!soft && e->kind == ExprKind::Test && !has_test(e->name)) throw SyntaxError(e->line, "No test named '" + e->name + "'.");
    for (const auto& c : e->children) check_known_names(c.get(), soft);
    for (const auto& c : e->args.positional) check_known_names(c.get(), soft);
    for (const auto& kv : e->args.keywords) check_known_names(kv.second.get(), soft);
    check_known_names(e->args.star.get(), soft);
    check_known_names(e->args.star_star.get(), soft);
}

void check_known_names(const Body& body, bool soft) {
    for (const auto& s : body) {
        switch (s->kind) {
        case StmtKind::If:
            for (const auto& e : s->exprs) check_known_names(e.get(), true);
            for (const auto& b : s->bodies) check_known_names(b, true);
            break;
        case StmtKind::For:
            check_known_names(s->exprs[0].get(), soft);
            check_known_names(s->exprs[1].get(), false);
            for (const auto& b : s->bodies) check_known_names(b, false);
            break;
        default:
            for (const auto& e : s->exprs) check_known_names(e.get(), soft);
            for (const auto& e : s->defaults) check_known_names(e.get(), soft);
            check_known_names(s->filter.get(), soft);
            for (const auto& b : s->bodies) check_known_names(b, false);
        }
    }
}

}  // namespace

Body parse(const std::vector<Token>& tokens, int max_depth) {
    Body body = Parser(tokens, max_depth).parse_template();
    check_known_names(body, false);
    return body;
}

}  // namespace hetero::jinja
