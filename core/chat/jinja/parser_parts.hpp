// The parser's state and its grammar rules (core/chat/jinja/parse*.cpp
// only): the token stream helpers here, the statement rules in
// parse_statements.cpp, the expression rules in parse_expressions.cpp.
#pragma once

#include "ast.hpp"
#include "errors.hpp"
#include "lexer.hpp"

#include <initializer_list>
#include <string>
#include <vector>

namespace hetero::jinja {

class Parser {
public:
    Parser(const std::vector<Token>& tokens, int max_depth) : t_(tokens), max_depth_(max_depth) {}

    Body parse_template();

private:
    // How a token reads in a syntax error message.
    static std::string describe(const Token& t);
    static ExprPtr make(ExprKind kind, int line);

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


    // --- statements (parse_statements.cpp) ---
    using EndTags = std::initializer_list<const char*>;

    bool at_end_tag(const EndTags& end) const;
    Body subparse(EndTags end);
    Body parse_body(EndTags end);
    void expect_end_tag(const char* name);
    StmtPtr new_stmt(StmtKind kind);
    void parse_statement(Body& body);
    StmtPtr parse_if();
    StmtPtr parse_for();
    StmtPtr parse_set();
    void parse_signature(Stmt& s);
    StmtPtr parse_macro();
    StmtPtr parse_call_block();
    StmtPtr parse_filter_block();
    StmtPtr parse_with();
    void note_special_names(Stmt& s);
    void parse_callable_body(Stmt& s, const char* end_tag);
    bool is_tuple_end(const EndTags& extra) const;
    Target parse_single_target(bool with_namespace);
    Target parse_assign_target(bool with_tuple, bool name_only, EndTags extra, bool with_namespace);

    // --- expressions (parse_expressions.cpp) ---
    ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }
    ExprPtr parse_tuple(bool simplified, bool with_condexpr, EndTags extra, bool explicit_parentheses);
    ExprPtr parse_condexpr();
    ExprPtr binary(ExprKind kind, int line, ExprPtr left, ExprPtr right);
    ExprPtr parse_or();
    ExprPtr parse_and();
    ExprPtr parse_keyword_chain(const char* keyword, ExprKind kind, ExprPtr (Parser::*operand)());
    ExprPtr parse_not();
    ExprPtr parse_compare();
    ExprPtr arith(BinaryOp op, int line, ExprPtr left, ExprPtr right);
    ExprPtr parse_math1();
    ExprPtr parse_concat();
    ExprPtr parse_math2();
    ExprPtr parse_pow();
    ExprPtr parse_unary(bool with_filter);
    ExprPtr parse_primary();
    ExprPtr parse_postfix(ExprPtr node);
    ExprPtr parse_filter_expr(ExprPtr node);
    ExprPtr parse_subscript(ExprPtr node);
    ExprPtr parse_subscribed();
    ArgExprs parse_call_args();
    ExprPtr parse_call(ExprPtr node);
    ExprPtr parse_filter_chain(ExprPtr node, bool start_inline);
    ExprPtr parse_test(ExprPtr node);

    const std::vector<Token>& t_;
    size_t pos_ = 0;
    int depth_ = 0;
    int max_depth_;
    int loop_depth_ = 0;
};

}  // namespace hetero::jinja
