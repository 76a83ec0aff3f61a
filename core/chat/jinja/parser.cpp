#include "parser.hpp"

#include "filters.hpp"
#include "parser_parts.hpp"
#include "tests.hpp"

namespace hetero::jinja {

std::string Parser::describe(const Token& t) {
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

ExprPtr Parser::make(ExprKind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
}

Body Parser::parse_template() {
    Body body = subparse({});
    if (cur().kind != Token::Kind::Eof) fail("unexpected '" + describe(cur()) + "'");
    return body;
}

namespace {

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
