// A context-free grammar in the GBNF form (llama.cpp's `grammar` field),
// compiled for grammar_matcher.hpp:
//
//   root  ::= greeting (", " name)* "!"     # `root` is where text starts
//   greeting ::= "hello" | "hi"
//   name  ::= [A-Z] [a-z]{1,12}
//
// Rules `name ::= alternatives` (names of letters, digits and '-'); an
// alternative is a sequence of "literals" (escapes \n \t \r \" \\ \xHH
// \uHHHH \UHHHHHHHH), [character classes] ([a-z_], negated [^"\\], escapes
// inside), `.` (any character), rule names and ( groups ), each optionally
// followed by * + ? {m} {m,} {m,n}. `#` starts a comment; whitespace and
// newlines separate elements, and a rule ends where the next `name ::=`
// begins. Characters are Unicode code points, matched as UTF-8.
//
// Refused with the line and column (and what is wrong): a syntax error, an
// undefined or twice-defined rule, no `root`, a bad range or escape, text
// that is not UTF-8, left recursion (a rule that can reach itself before
// reading a character: a stack-based matcher would loop), and anything over
// the limits below.
#pragma once

#include <hetero/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hetero {

class GrammarError : public Error {
public:
    GrammarError(size_t line, size_t column, const std::string& what);
    size_t line() const { return line_; }      // 1-based
    size_t column() const { return column_; }  // 1-based, in characters

private:
    size_t line_, column_;
};

struct GrammarLimits {
    static constexpr size_t kMaxTextBytes = 64 * 1024;
    static constexpr size_t kMaxRules = 20000;       // named and those groups and repetitions make
    static constexpr size_t kMaxElements = 200000;   // after repetitions are expanded
    static constexpr uint32_t kMaxRepetition = 1000;  // m and n of {m,n}
    static constexpr size_t kMaxNesting = 64;        // of ( groups )
};

class Grammar {
public:
    // Throws GrammarError.
    static std::shared_ptr<const Grammar> parse(std::string_view text);

    // A character class: sorted, disjoint code point ranges (inclusive), surrogates left out.
    using CharSet = std::vector<std::pair<char32_t, char32_t>>;

    struct Element {
        enum Kind : uint8_t { kChars, kRule, kEnd } kind = kEnd;  // kEnd closes an alternative
        uint32_t index = 0;                                      // of the char set, or of the rule
    };
    struct Rule {
        std::string name;                 // generated rules: "<rule>/<n>"
        std::vector<uint32_t> alternatives;  // positions in elements() where each begins
    };

    const std::vector<Element>& elements() const { return elements_; }
    const std::vector<Rule>& rules() const { return rules_; }
    const std::vector<CharSet>& char_sets() const { return char_sets_; }
    uint32_t root() const { return root_; }

private:
    friend class GrammarParser;
    std::vector<Element> elements_;
    std::vector<Rule> rules_;
    std::vector<CharSet> char_sets_;
    uint32_t root_ = 0;
};

}  // namespace hetero
