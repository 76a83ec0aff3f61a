// Splits template source into tokens the way Jinja2's lexer does with
// trim_blocks and lstrip_blocks on: template data, the tag delimiters
// ({{ }}, {% %}) and, inside tags, names, literals and operators. Comments
// vanish; {% raw %} content becomes data. Whitespace control (-, +) is applied
// here, so the parser sees data already trimmed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::jinja {

struct Token {
    enum class Kind {
        Data,
        VariableBegin,
        VariableEnd,
        BlockBegin,
        BlockEnd,
        Name,
        String,
        Integer,
        Float,
        Operator,  // text holds the operator: "+", "//", "==", "(", ...
        Eof,
    };
    Kind kind;
    std::string text;  // data, name, operator, or the unescaped string literal
    int64_t integer = 0;
    double floating = 0;
    int line = 1;
};

// Throws SyntaxError (with the line) for an unterminated comment, string or
// raw block, an unbalanced bracket or a character that starts no token.
std::vector<Token> tokenize(const std::string& source);

}  // namespace hetero::jinja
