// Tokens to statements, following Jinja2's grammar (operator precedence,
// filters binding tighter than arithmetic, `is` tests, tuples without
// parentheses, adjacent string literals joined). Also Jinja2's compile-time
// checks: unknown filters and tests outside an if are syntax errors, break
// and continue only inside a loop.
#pragma once

#include "ast.hpp"
#include "lexer.hpp"

#include <vector>

namespace hetero::jinja {

// Throws SyntaxError. `max_depth` bounds nesting so a hostile template
// cannot exhaust the stack.
Body parse(const std::vector<Token>& tokens, int max_depth);

}  // namespace hetero::jinja
