// Grammars (GBNF): the parser's refusals with their positions, the matcher
// on texts a grammar allows and texts it does not, and generation through a
// real vocabulary's mask: random walks over the allowed tokens always end in
// text the grammar accepts, as checked by recognizers written here apart
// from the grammar code (regular expressions, a recursive-descent parser).
#include <hetero/chat/grammar.hpp>
#include <hetero/chat/grammar_matcher.hpp>
#include <hetero/chat/token_constraint.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <regex>

namespace hetero {
namespace {

// Whether the whole text is accepted and complete; else the byte offset refused (or its size: not complete).
std::pair<bool, size_t> match(const std::shared_ptr<const Grammar>& g, std::string_view text) {
    GrammarMatcher m(g);
    for (size_t i = 0; i < text.size(); ++i)
        if (!m.feed(text[i])) return {false, i};
    return {m.complete(), text.size()};
}
bool accepts(const std::shared_ptr<const Grammar>& g, std::string_view text) { return match(g, text).first; }

const char* kArithmetic = R"g(
# integers with + - * / and parentheses
root   ::= expr
expr   ::= term (("+" | "-") term)*
term   ::= factor (("*" | "/") factor)*
factor ::= number | "(" expr ")" | "-" factor
number ::= [0-9]+
)g";

const char* kJsonish = R"g(
root   ::= value
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ( string ":" value ("," string ":" value)* )? "}"
array  ::= "[" ( value ("," value)* )? "]"
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" ["\\/bfnrt] )* "\""
number ::= "-"? [0-9]+ ("." [0-9]+)?
)g";

const char* kCsv = R"g(root ::= field ("," field)* "\n"
field ::= [a-z0-9 ]* | "\"" [^"\n]* "\""
)g";

const char* kWords = R"g(root ::= ("red" | "green" | "blue") (" " ("red" | "green" | "blue")){0,2} ".")g";

TEST(GrammarParser, ReadsTheGbnfForms) {
    for (const char* text : {kArithmetic, kJsonish, kCsv, kWords,
                             "root ::= \"a\"\n  | \"b\" # two alternatives over lines\n",
                             "root::=x{2}y{1,}z{0,3}\nx::=\"x\"\ny::=[y]\nz::=.",
                             "root ::= ( \"\\x41\" \"\\u00e9\" \"\\U0001F600\" \"\\n\\t\\r\\\"\\\\\" )",
                             "root ::= [\\]\\-\\\\a-c] \"\""}) {
        EXPECT_NO_THROW(Grammar::parse(text)) << text;
    }
}

TEST(GrammarParser, RefusesWithLineAndColumn) {
    struct Case {
        const char* text;
        size_t line, column;
        const char* says;
    };
    for (const Case& c : std::initializer_list<Case>{
             {"root ::= item\n", 1, 10, "undefined rule 'item'"},
             {"start ::= \"a\"\n", 1, 1, "no 'root' rule"},
             {"root ::= \"abc\n", 1, 10, "unterminated literal"},
             {"root ::= \"abc", 1, 10, "unterminated literal"},
             {"root ::= [a-z\n", 1, 10, "unterminated character class"},
             {"root ::= x\nx ::= [z-a]", 2, 8, "bad range"},
             {"root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\"", 2, 1, "rule 'expr' is left-recursive"},
             {"root ::= a\na ::= b? \"x\"\nb ::= \"y\"? a", 2, 1, "left-recursive"},
             {"root ::= \"a\" \"b\"{3,2}", 1, 17, "maximum below its minimum"},
             {"root ::= \"a\"{1001}", 1, 13, "repetition bound over 1000"},
             {"root ::= ( \"a\"", 1, 10, "unclosed '('"},
             {"root ::= \"a\" )", 1, 14, "')' without a matching '('"},
             {"root ::= \"\\q\"", 1, 11, "unknown escape '\\q'"},
             {"root ::= \"\\xZ1\"", 1, 11, "\\x needs 2 hex digits"},
             {"root ::= \"\\uD800\"", 1, 11, "surrogate"},
             {"root ::= []", 1, 10, "empty character class"},
             {"root ::= \"a\"\nroot ::= \"b\"", 2, 1, "defined twice"},
             {"root ::= * \"a\"", 1, 10, "repeats nothing"},
             {"root = \"a\"", 1, 6, "expected '::='"},
             {"root ::= 'a'", 1, 10, "double quotes"},
             {"root ::= \"\xC3\x28\"", 1, 11, "not valid UTF-8"},
             {"root ::= \"é\" @", 1, 14, "unexpected character '@'"},
         }) {
        try {
            Grammar::parse(c.text);
            ADD_FAILURE() << "accepted: " << c.text;
        } catch (const GrammarError& e) {
            EXPECT_EQ(e.line(), c.line) << c.text << ": " << e.what();
            EXPECT_EQ(e.column(), c.column) << c.text << ": " << e.what();
            EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.text << ": " << e.what();
        }
    }
}

TEST(GrammarParser, RefusesWhatIsOverTheLimits) {
    EXPECT_THROW(Grammar::parse("root ::= \"" + std::string(GrammarLimits::kMaxTextBytes, 'a') + "\""), GrammarError);
    std::string deep = "root ::= " + std::string(GrammarLimits::kMaxNesting + 1, '(') + "\"a\"" + std::string(GrammarLimits::kMaxNesting + 1, ')');
    EXPECT_THROW(Grammar::parse(deep), GrammarError);
    // Repetitions of a rule share it: 2,000 elements, not a million.
    EXPECT_NO_THROW(Grammar::parse("root ::= x{1000}\nx ::= \"a\"{1000}"));
    EXPECT_NO_THROW(Grammar::parse("root ::= (\"a\" \"b\"){1000}"));
    // Repeated literals are copied: 201 x 1,000 elements.
    std::string wide = "root ::=";
    for (int i = 0; i < 201; ++i) wide += " \"a\"{1000}";
    try {
        Grammar::parse(wide);
        ADD_FAILURE() << "a grammar of 201,000 elements was accepted";
    } catch (const GrammarError& e) {
        EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
    }
}

TEST(GrammarMatcher, Arithmetic) {
    const auto g = Grammar::parse(kArithmetic);
    for (const char* ok : {"1", "12+3", "(1+2)*3", "-(4/2)-7", "((((9))))", "--1"}) EXPECT_TRUE(accepts(g, ok)) << ok;
    struct Case {
        const char* text;
        size_t fails_at;
    };
    for (const Case& c : std::initializer_list<Case>{{"1+", 2}, {"(1", 2}, {"1)", 1}, {"+1", 0}, {"1 + 2", 1}, {"()", 1}, {"1*/2", 2}})
        EXPECT_EQ(match(g, c.text), std::make_pair(false, c.fails_at)) << c.text;
}

TEST(GrammarMatcher, JsonishCsvAndWords) {
    const auto json = Grammar::parse(kJsonish);
    for (const char* ok : {"{}", "[1,-2.5,\"a\\\"b\"]", "{\"k\":[true,null,{\"x\":\"é\"}]}", "\"ü€😀\""}) EXPECT_TRUE(accepts(json, ok)) << ok;
    for (const char* bad : {"{", "[1,]", "{\"k\"}", "\"a\nb\"", "01.", "tru", "[1] "}) EXPECT_FALSE(accepts(json, bad)) << bad;
    const auto csv = Grammar::parse(kCsv);
    for (const char* ok : {"a,b,c\n", ",,\n", "\"x, y\",z 1\n", "\n"}) EXPECT_TRUE(accepts(csv, ok)) << ok;
    for (const char* bad : {"a,b", "A\n", "\"x\n", "a\n\n"}) EXPECT_FALSE(accepts(csv, bad)) << bad;
    const auto words = Grammar::parse(kWords);
    for (const char* ok : {"red.", "red green.", "blue blue blue."}) EXPECT_TRUE(accepts(words, ok)) << ok;
    for (const char* bad : {"red", "red green blue red.", "redd.", "purple.", "red  green."}) EXPECT_FALSE(accepts(words, bad)) << bad;
}

TEST(GrammarMatcher, RepetitionBounds) {
    const auto g = Grammar::parse("root ::= \"<\" [ab]{2,4} \">\" \"x\"{3} \"y\"{2,} \"z\"?");
    for (const char* ok : {"<ab>xxxyy", "<abab>xxxyyyyyz", "<bba>xxxyyz"}) EXPECT_TRUE(accepts(g, ok)) << ok;
    EXPECT_EQ(match(g, "<a>"), std::make_pair(false, size_t(2)));
    EXPECT_EQ(match(g, "<ababa"), std::make_pair(false, size_t(5)));
    EXPECT_EQ(match(g, "<ab>xxxx"), std::make_pair(false, size_t(7)));
    EXPECT_EQ(match(g, "<ab>xxxy"), std::make_pair(false, size_t(8)));  // whole only with two y
    EXPECT_EQ(match(g, "<ab>xxxyyzz"), std::make_pair(false, size_t(10)));
    // A long repetition does not deepen the stacks (it would hit kMaxDepth).
    EXPECT_TRUE(accepts(Grammar::parse("root ::= \"a\"*"), std::string(5000, 'a')));
    EXPECT_TRUE(accepts(Grammar::parse("root ::= \"a\"{0,1000}"), std::string(1000, 'a')));
    EXPECT_FALSE(accepts(Grammar::parse("root ::= \"a\"{0,1000}"), std::string(1001, 'a')));
}

TEST(GrammarMatcher, Utf8ClassesAndInvalidBytes) {
    const auto g = Grammar::parse("root ::= [a-zà-ÿ€]+ [^a-z]");
    EXPECT_TRUE(accepts(g, "çaé€!"));
    EXPECT_TRUE(accepts(g, "a😀"));       // a negated class takes any other character
    EXPECT_FALSE(accepts(g, "aĀ!"));      // U+0100: outside à-ÿ
    EXPECT_EQ(match(g, "a\xC4"), std::make_pair(false, size_t(2)));  // taken: U+0100.. fits [^a-z]; not whole
    const auto letters = Grammar::parse("root ::= [à-ÿ]+");
    EXPECT_EQ(match(letters, "\xC4"), std::make_pair(false, size_t(0)));     // U+0100..U+013F: none allowed
    EXPECT_EQ(match(letters, "\xC3\x28"), std::make_pair(false, size_t(1)));  // not a continuation byte
    const auto any = Grammar::parse("root ::= .*");
    EXPECT_TRUE(accepts(any, "any \xF0\x9F\x98\x80 text"));
    EXPECT_EQ(match(any, "\xED\xA0\x80"), std::make_pair(false, size_t(1)));  // a surrogate
    EXPECT_EQ(match(any, "\xC0\x80"), std::make_pair(false, size_t(0)));      // overlong
    EXPECT_EQ(match(any, "\xE0\x80"), std::make_pair(false, size_t(1)));      // overlong
    EXPECT_EQ(match(any, "\xF4\x90"), std::make_pair(false, size_t(1)));      // over U+10FFFF
    EXPECT_EQ(match(any, "\xFF"), std::make_pair(false, size_t(0)));
    GrammarMatcher half(any);
    ASSERT_TRUE(half.feed("\xE2\x82"));
    EXPECT_FALSE(half.complete());  // inside a character
    EXPECT_TRUE(half.feed("\xAC"));
    EXPECT_TRUE(half.complete());
}

TEST(GrammarMatcher, StateKeysAndAllOrNothing) {
    const auto g = Grammar::parse(kArithmetic);
    GrammarMatcher a(g), b(g);
    ASSERT_TRUE(a.feed("1+2"));
    ASSERT_TRUE(b.feed("3+45"));
    EXPECT_EQ(a.state_key(), b.state_key());  // the same continuations
    GrammarMatcher c(g);
    ASSERT_TRUE(c.feed("(1+2"));
    EXPECT_NE(a.state_key(), c.state_key());
    const std::string before = a.state_key();
    EXPECT_FALSE(a.feed("*3)"));  // ')' refused: nothing taken
    EXPECT_EQ(a.state_key(), before);
    const auto done = Grammar::parse("root ::= \"end\"");
    GrammarMatcher d(done);
    ASSERT_TRUE(d.feed("end"));
    EXPECT_TRUE(d.complete());
    EXPECT_FALSE(d.can_continue());
}

TEST(GrammarMatcher, AmbiguityAndNestingAreBounded) {
    // Every split of a run of a's is a different parse: the stacks are capped, never unbounded.
    const auto g = Grammar::parse("root ::= x*\nx ::= \"a\" | \"a\" \"a\" | \"a\" y\ny ::= \"a\"* \"b\"?");
    GrammarMatcher m(g);
    size_t fed = 0;
    while (fed < 2000 && m.feed('a')) ++fed;
    EXPECT_GT(fed, 0u);
    const auto nest = Grammar::parse("root ::= \"(\" root \")\" | \"x\"");
    GrammarMatcher n(nest);
    size_t depth = 0;
    while (depth < 5000 && n.feed('(')) ++depth;
    EXPECT_LT(depth, 5000u);  // refused past kMaxDepth, not grown forever
    EXPECT_TRUE(n.feed('x'));
}

// Recognizers written apart from the grammar code.
bool is_arithmetic(const std::string& s) {
    size_t i = 0;
    std::function<bool()> expr, term, factor;
    factor = [&]() -> bool {
        if (i < s.size() && s[i] == '-') return ++i, factor();
        if (i < s.size() && s[i] == '(') {
            ++i;
            if (!expr() || i >= s.size() || s[i] != ')') return false;
            return ++i, true;
        }
        const size_t start = i;
        while (i < s.size() && std::isdigit((unsigned char)s[i])) ++i;
        return i > start;
    };
    term = [&]() -> bool {
        if (!factor()) return false;
        while (i < s.size() && (s[i] == '*' || s[i] == '/'))
            if (++i, !factor()) return false;
        return true;
    };
    expr = [&]() -> bool {
        if (!term()) return false;
        while (i < s.size() && (s[i] == '+' || s[i] == '-'))
            if (++i, !term()) return false;
        return true;
    };
    return expr() && i == s.size();
}

struct WalkStats {
    int finished = 0;
    double mask_ms_total = 0, mask_ms_worst = 0;
    int masks = 0;
};

// Random walks over the tokens the mask allows; each finished text goes to `check`.
WalkStats random_walks(const Tokenizer& tok, const std::shared_ptr<const TokenTrie>& trie, const std::shared_ptr<const Grammar>& g,
                       const std::function<bool(const std::string&)>& check, int walks, int max_steps) {
    WalkStats stats;
    const int32_t eos = tok.eos();
    for (int seed = 1; seed <= walks; ++seed) {
        std::mt19937 rng{uint32_t(seed)};
        TokenConstraint c(std::make_unique<GrammarMatcher>(g), trie);
        std::string text;
        bool ended = false;
        for (int step = 0; step < max_steps && !ended; ++step) {
            std::vector<float> logits(size_t(tok.n_vocab()), 0.0f);
            const auto t0 = std::chrono::steady_clock::now();
            c.mask(logits, {eos});
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            stats.mask_ms_total += ms, stats.mask_ms_worst = std::max(stats.mask_ms_worst, ms), ++stats.masks;
            // A first byte, then a token that starts with it: a walk moves like a byte-level one whatever the
            // vocabulary's size (uniform over 32k tokens, a newline or a closing quote would almost never come).
            std::map<int, std::vector<int32_t>> allowed_by_byte;
            for (size_t i = 0; i < logits.size(); ++i) {
                if (!std::isfinite(logits[i])) continue;
                const bool textless = i == size_t(eos) || trie->text(int32_t(i)).empty();
                allowed_by_byte[textless ? -1 : int((unsigned char)trie->text(int32_t(i))[0])].push_back(int32_t(i));
            }
            if (allowed_by_byte.empty()) {
                ADD_FAILURE() << "no token allowed after '" << text << "'";
                return stats;
            }
            auto group = allowed_by_byte.begin();
            std::advance(group, std::uniform_int_distribution<size_t>(0, allowed_by_byte.size() - 1)(rng));
            int32_t t = group->second[std::uniform_int_distribution<size_t>(0, group->second.size() - 1)(rng)];
            if (c.complete() && step > max_steps / 4) t = eos;
            if (t == eos) {
                EXPECT_TRUE(c.complete()) << text;
                ended = true;
                break;
            }
            if (!c.accept(t)) {
                ADD_FAILURE() << "an allowed token was refused: " << t << " after '" << text << "'";
                return stats;
            }
            text += trie->text(t);
            if (!c.can_continue()) ended = true;
        }
        if (!ended) continue;
        ++stats.finished;
        EXPECT_TRUE(check(text)) << "the walk ended in text the grammar does not accept: '" << text << "'";
    }
    return stats;
}

std::function<bool(const std::string&)> regex_check(const char* pattern) {
    const std::regex re(pattern);
    return [re](const std::string& s) { return std::regex_match(s, re); };
}

// "Once " [^.!?\n]{0,60} "." in code points (std::regex counts bytes), valid UTF-8.
bool free_text_check(const std::string& s) {
    if (s.size() < 6 || s.rfind("Once ", 0) != 0 || s.back() != '.') return false;
    size_t chars = 0;
    for (size_t i = 5; i + 1 < s.size();) {
        const auto b = (unsigned char)s[i];
        const size_t n = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
        if (n == 0 || i + n > s.size() - 1) return false;
        for (size_t k = 1; k < n; ++k)
            if (((unsigned char)s[i + k] & 0xC0) != 0x80) return false;
        if (n == 1 && (b == '.' || b == '!' || b == '?' || b == '\n')) return false;
        i += n, ++chars;
    }
    return chars <= 60;
}

void walk_all(const Tokenizer& tok, const char* vocab, int walks, int max_steps) {
    const auto trie = std::make_shared<const TokenTrie>(tok);
    struct Case {
        const char* name;
        const char* grammar;
        std::function<bool(const std::string&)> check;
    };
    const std::vector<Case> cases{
        {"arithmetic", kArithmetic, is_arithmetic},
        {"csv", kCsv, regex_check(R"(([a-z0-9 ]*|"[^"\n]*")(,([a-z0-9 ]*|"[^"\n]*"))*\n)")},
        {"words", kWords, regex_check(R"((red|green|blue)( (red|green|blue)){0,2}\.)")},
        {"bounded", "root ::= [a-f]{2,5} (\"-\" [0-9]{1,3}){0,2} \"!\"", regex_check(R"([a-f]{2,5}(-[0-9]{1,3}){0,2}!)")},
        {"free text", "root ::= \"Once \" [^.!?\\n]{0,60} \".\"", free_text_check},
    };
    for (const Case& c : cases) {
        const WalkStats s = random_walks(tok, trie, Grammar::parse(c.grammar), c.check, walks, max_steps);
        EXPECT_GE(s.finished, walks / 4) << c.name << ": too few walks reached the end of a text";
        std::printf("[ mask     ] %s, %s: %d masks, mean %.3f ms, worst %.3f ms per token; %d/%d walks finished\n", vocab, c.name, s.masks,
                    s.masks ? s.mask_ms_total / s.masks : 0.0, s.mask_ms_worst, s.finished, walks);
    }
}

TEST(GrammarConstraint, RandomWalksOverAllowedTokensEndInAcceptedText) {
    const GgufFile gguf = GgufFile::open(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const std::unique_ptr<Tokenizer> tok = Tokenizer::create(vocab_from_gguf(gguf));
    walk_all(*tok, "stories260K", 30, 120);
}

// A 32,000-token vocabulary (llama.cpp's test file, tests/fetch_vocab.sh): the mask cost where it matters.
TEST(GrammarConstraint, RandomWalksOverALargeVocabulary) {
    const char* dir = std::getenv("HETERO_VOCAB_DIR");
    const std::string path = std::string(dir ? dir : HETERO_SOURCE_DIR "/.peer/vocab") + "/ggml-vocab-llama-spm.gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found: run tests/fetch_vocab.sh, or set HETERO_VOCAB_DIR";
    const std::unique_ptr<Tokenizer> tok = Tokenizer::create(vocab_from_gguf(GgufFile::open(path)));
    walk_all(*tok, "llama-spm 32k", 8, 60);
}

}  // namespace
}  // namespace hetero
