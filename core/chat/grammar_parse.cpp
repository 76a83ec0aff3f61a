// GBNF text -> Grammar (grammar.hpp): rules of alternatives of elements, with
// groups and repetitions turned into rules of their own, then checked for
// undefined rules and left recursion.
#include <hetero/chat/grammar.hpp>

#include <algorithm>
#include <functional>
#include <unordered_map>

namespace hetero {

GrammarError::GrammarError(size_t line, size_t column, const std::string& what)
    : Error("grammar: line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what), line_(line), column_(column) {}

namespace {

constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr char32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF;

bool name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'; }

// The length of the well-formed UTF-8 sequence at `at`, or 0.
size_t utf8_length(std::string_view s, size_t at) {
    const auto b = [&](size_t i) { return i < s.size() ? (unsigned char)s[i] : 0u; };
    const unsigned c = b(at);
    if (c < 0x80) return 1;
    const auto cont = [&](size_t i, unsigned lo, unsigned hi) { return b(i) >= lo && b(i) <= hi; };
    if (c >= 0xC2 && c <= 0xDF) return cont(at + 1, 0x80, 0xBF) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return cont(at + 1, lo, hi) && cont(at + 2, 0x80, 0xBF) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return cont(at + 1, lo, hi) && cont(at + 2, 0x80, 0xBF) && cont(at + 3, 0x80, 0xBF) ? 4 : 0;
    }
    return 0;
}

char32_t utf8_decode(std::string_view s, size_t at, size_t n) {
    const auto b = [&](size_t i) { return char32_t((unsigned char)s[at + i]); };
    if (n == 1) return b(0);
    if (n == 2) return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
    if (n == 3) return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
    return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

// Sorted, merged, surrogates removed.
Grammar::CharSet normalize(Grammar::CharSet ranges, bool negated) {
    std::sort(ranges.begin(), ranges.end());
    Grammar::CharSet merged;
    for (const auto& r : ranges) {
        if (!merged.empty() && r.first <= merged.back().second + 1)
            merged.back().second = std::max(merged.back().second, r.second);
        else
            merged.push_back(r);
    }
    if (negated) {
        Grammar::CharSet complement;
        char32_t next = 0;
        for (const auto& [lo, hi] : merged) {
            if (lo > next) complement.emplace_back(next, lo - 1);
            next = hi + 1;
        }
        if (next <= kMaxCodePoint) complement.emplace_back(next, kMaxCodePoint);
        merged = std::move(complement);
    }
    Grammar::CharSet out;
    for (const auto& [lo, hi] : merged) {
        if (hi < kSurrogateLo || lo > kSurrogateHi) {
            out.emplace_back(lo, hi);
            continue;
        }
        if (lo < kSurrogateLo) out.emplace_back(lo, kSurrogateLo - 1);
        if (hi > kSurrogateHi) out.emplace_back(kSurrogateHi + 1, hi);
    }
    return out;
}

}  // namespace

class GrammarParser {
public:
    explicit GrammarParser(std::string_view text) : text_(text) {}

    std::shared_ptr<const Grammar> run();

private:
    using Sequence = std::vector<Grammar::Element>;
    struct PendingRule {
        std::string name;
        std::vector<Sequence> alternatives;
        bool defined = false;
        size_t first_use = 0;  // where it is first named (for "undefined")
        size_t defined_at = 0;
        uint32_t origin = 0;   // the named rule a generated one comes from
    };

    [[noreturn]] void fail(size_t at, const std::string& what) const;
    void check_utf8() const;
    bool at_end() const { return pos_ >= text_.size(); }
    char peek() const { return at_end() ? '\0' : text_[pos_]; }
    void skip_space();
    std::string read_name();
    bool rule_starts_here();  // `name ::=` ahead (pos_ is left as it was)
    uint32_t rule_named(const std::string& name, size_t at);
    uint32_t new_rule(std::vector<Sequence> alternatives);
    void count(size_t elements, size_t at);

    void parse_rule();
    std::vector<Sequence> parse_alternatives(size_t depth);
    Sequence parse_sequence(size_t depth);
    Sequence parse_atom(size_t depth);
    Sequence repeat(Sequence item, uint32_t min, uint32_t max, bool unbounded, size_t at);
    char32_t read_char(size_t opened_at, char quote);  // one code point of a literal or class, escapes decoded
    uint32_t read_bound(size_t at);
    Sequence parse_literal();
    Sequence parse_class();
    Grammar::Element char_set(Grammar::CharSet set);

    void check_defined() const;
    void check_left_recursion() const;

    std::string_view text_;
    size_t pos_ = 0;
    std::vector<PendingRule> rules_;
    std::unordered_map<std::string, uint32_t> by_name_;
    uint32_t current_ = 0;  // the named rule being parsed
    size_t elements_ = 0;
    std::shared_ptr<Grammar> grammar_ = std::make_shared<Grammar>();
};

void GrammarParser::fail(size_t at, const std::string& what) const {
    at = std::min(at, text_.size());
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < at; ++i)
        if (text_[i] == '\n') ++line, line_start = i + 1;
    size_t column = 1;
    for (size_t i = line_start; i < at; ++i)
        if (((unsigned char)text_[i] & 0xC0) != 0x80) ++column;
    throw GrammarError(line, column, what);
}

void GrammarParser::check_utf8() const {
    for (size_t i = 0; i < text_.size();) {
        const size_t n = utf8_length(text_, i);
        if (n == 0) fail(i, "the grammar is not valid UTF-8");
        i += n;
    }
}

void GrammarParser::skip_space() {
    while (!at_end()) {
        const char c = peek();
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            ++pos_;
        } else if (c == '#') {
            while (!at_end() && peek() != '\n') ++pos_;
        } else {
            break;
        }
    }
}

std::string GrammarParser::read_name() {
    const size_t start = pos_;
    while (!at_end() && name_char(peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
}

bool GrammarParser::rule_starts_here() {
    const size_t start = pos_;
    const bool named = !read_name().empty();
    while (!at_end() && (peek() == ' ' || peek() == '\t')) ++pos_;
    const bool starts = named && text_.substr(pos_, 3) == "::=";
    pos_ = start;
    return starts;
}

void GrammarParser::count(size_t elements, size_t at) {
    elements_ += elements;
    if (elements_ > GrammarLimits::kMaxElements)
        fail(at, "the grammar is too large (over " + std::to_string(GrammarLimits::kMaxElements) + " elements once repetitions are expanded)");
}

uint32_t GrammarParser::rule_named(const std::string& name, size_t at) {
    if (const auto it = by_name_.find(name); it != by_name_.end()) return it->second;
    const uint32_t index = new_rule({});
    rules_[index].name = name;
    rules_[index].defined = false;
    rules_[index].first_use = at;
    rules_[index].origin = index;
    by_name_.emplace(name, index);
    return index;
}

uint32_t GrammarParser::new_rule(std::vector<Sequence> alternatives) {
    if (rules_.size() >= GrammarLimits::kMaxRules)
        fail(pos_, "too many rules (at most " + std::to_string(GrammarLimits::kMaxRules) + ", counting groups and repetitions)");
    PendingRule r;
    r.alternatives = std::move(alternatives);
    r.defined = true;
    r.origin = current_;
    r.name = rules_.empty() ? "" : rules_[current_].name + "/" + std::to_string(rules_.size());
    rules_.push_back(std::move(r));
    return uint32_t(rules_.size() - 1);
}

Grammar::Element GrammarParser::char_set(Grammar::CharSet set) {
    auto& sets = grammar_->char_sets_;
    const auto it = std::find(sets.begin(), sets.end(), set);
    const size_t index = it == sets.end() ? sets.size() : size_t(it - sets.begin());
    if (it == sets.end()) sets.push_back(std::move(set));
    return {Grammar::Element::kChars, uint32_t(index)};
}

std::shared_ptr<const Grammar> GrammarParser::run() {
    if (text_.size() > GrammarLimits::kMaxTextBytes)
        throw GrammarError(1, 1, "the grammar is too long (" + std::to_string(text_.size()) + " bytes; at most " +
                                     std::to_string(GrammarLimits::kMaxTextBytes) + ")");
    check_utf8();
    for (skip_space(); !at_end(); skip_space()) parse_rule();
    const auto root = by_name_.find("root");
    if (root == by_name_.end() || !rules_[root->second].defined) fail(0, "no 'root' rule (generation starts there)");
    check_defined();
    check_left_recursion();
    Grammar& g = *grammar_;
    g.root_ = root->second;
    for (PendingRule& r : rules_) {
        Grammar::Rule out;
        out.name = r.name;
        for (const Sequence& alt : r.alternatives) {
            out.alternatives.push_back(uint32_t(g.elements_.size()));
            g.elements_.insert(g.elements_.end(), alt.begin(), alt.end());
            g.elements_.push_back({Grammar::Element::kEnd, 0});
        }
        g.rules_.push_back(std::move(out));
    }
    return grammar_;
}

void GrammarParser::parse_rule() {
    const size_t start = pos_;
    const std::string name = read_name();
    if (name.empty()) fail(start, std::string("expected a rule name (letters, digits, '-'), found '") + peek() + "'");
    while (!at_end() && (peek() == ' ' || peek() == '\t')) ++pos_;
    if (text_.substr(pos_, 3) != "::=") fail(pos_, "expected '::=' after the rule name '" + name + "'");
    pos_ += 3;
    const uint32_t index = rule_named(name, start);
    if (rules_[index].defined) fail(start, "rule '" + name + "' is defined twice");
    rules_[index].defined = true;
    rules_[index].defined_at = start;
    current_ = index;
    std::vector<Sequence> alternatives = parse_alternatives(0);
    if (!at_end() && peek() == ')') fail(pos_, "')' without a matching '('");
    rules_[index].alternatives = std::move(alternatives);
}

std::vector<GrammarParser::Sequence> GrammarParser::parse_alternatives(size_t depth) {
    std::vector<Sequence> alternatives;
    alternatives.push_back(parse_sequence(depth));
    while (!at_end() && peek() == '|') {
        ++pos_;
        alternatives.push_back(parse_sequence(depth));
    }
    return alternatives;
}

GrammarParser::Sequence GrammarParser::parse_sequence(size_t depth) {
    Sequence seq;
    for (;;) {
        skip_space();
        if (at_end() || peek() == '|' || peek() == ')') return seq;
        if (depth == 0 && rule_starts_here()) return seq;
        const size_t at = pos_;
        Sequence atom = parse_atom(depth);
        // Postfix repetitions (several apply in turn: x?* is (x?)*).
        for (;;) {
            const char c = peek();
            if (c == '*') {
                ++pos_, atom = repeat(std::move(atom), 0, 0, true, at);
            } else if (c == '+') {
                ++pos_, atom = repeat(std::move(atom), 1, 0, true, at);
            } else if (c == '?') {
                ++pos_, atom = repeat(std::move(atom), 0, 1, false, at);
            } else if (c == '{') {
                const size_t open = pos_++;
                skip_space();
                const uint32_t min = read_bound(open);
                skip_space();
                uint32_t max = min;
                bool unbounded = false;
                if (peek() == ',') {
                    ++pos_;
                    skip_space();
                    if (peek() == '}') unbounded = true;
                    else max = read_bound(open);
                    skip_space();
                }
                if (peek() != '}') fail(pos_, "expected '}' to close the repetition {m,n}");
                ++pos_;
                if (!unbounded && max < min) fail(open, "bad repetition: {" + std::to_string(min) + "," + std::to_string(max) + "} has its maximum below its minimum");
                atom = repeat(std::move(atom), min, max, unbounded, at);
            } else {
                break;
            }
        }
        count(atom.size(), at);
        seq.insert(seq.end(), atom.begin(), atom.end());
    }
}

uint32_t GrammarParser::read_bound(size_t at) {
    const size_t start = pos_;
    uint64_t v = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
        v = v * 10 + uint64_t(peek() - '0');
        if (v > GrammarLimits::kMaxRepetition)
            fail(at, "repetition bound over " + std::to_string(GrammarLimits::kMaxRepetition));
        ++pos_;
    }
    if (pos_ == start) fail(pos_, "expected a number in the repetition {m,n}");
    return uint32_t(v);
}

GrammarParser::Sequence GrammarParser::repeat(Sequence item, uint32_t min, uint32_t max, bool unbounded, size_t at) {
    if (item.size() != 1) item = {{Grammar::Element::kRule, new_rule({std::move(item)})}};
    const Grammar::Element x = item[0];
    Sequence out;
    count(min, at);
    out.assign(min, x);
    if (unbounded) {
        // R ::= x R | ""
        const uint32_t r = new_rule({});
        rules_[r].alternatives = {{x, {Grammar::Element::kRule, r}}, {}};
        out.push_back({Grammar::Element::kRule, r});
    } else if (max > min) {
        // O1 ::= x | "", Ok ::= x O(k-1) | ""
        uint32_t opt = new_rule({{x}, {}});
        for (uint32_t k = 1; k < max - min; ++k) {
            count(2, at);
            opt = new_rule({{x, {Grammar::Element::kRule, opt}}, {}});
        }
        out.push_back({Grammar::Element::kRule, opt});
    }
    return out;
}

GrammarParser::Sequence GrammarParser::parse_atom(size_t depth) {
    const size_t at = pos_;
    const char c = peek();
    if (c == '"') return parse_literal();
    if (c == '[') return parse_class();
    if (c == '.') {
        ++pos_;
        return {char_set(normalize({}, true))};
    }
    if (c == '(') {
        if (depth + 1 > GrammarLimits::kMaxNesting) fail(at, "groups nested too deep (at most " + std::to_string(GrammarLimits::kMaxNesting) + ")");
        ++pos_;
        std::vector<Sequence> alternatives = parse_alternatives(depth + 1);
        if (peek() != ')') fail(at, "unclosed '('");
        ++pos_;
        if (alternatives.size() == 1) return std::move(alternatives[0]);
        return {{Grammar::Element::kRule, new_rule(std::move(alternatives))}};
    }
    if (name_char(c)) {
        const std::string name = read_name();
        return {{Grammar::Element::kRule, rule_named(name, at)}};
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') fail(at, std::string("'") + c + "' repeats nothing");
    if (c == '\'') fail(at, "literals are written in double quotes");
    fail(at, std::string("unexpected character '") + std::string(text_.substr(at, std::max<size_t>(1, utf8_length(text_, at)))) + "'");
}

char32_t GrammarParser::read_char(size_t opened_at, char quote) {
    const size_t at = pos_;
    if (at_end() || peek() == '\n' || peek() == '\r')
        fail(opened_at, quote == '"' ? "unterminated literal" : "unterminated character class");
    if (peek() != '\\') {
        const size_t n = utf8_length(text_, pos_);
        pos_ += n;
        return utf8_decode(text_, at, n);
    }
    ++pos_;
    const char e = peek();
    ++pos_;
    switch (e) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case '0': return 0;
    case '"': case '\\': case '\'': case ']': case '[': case '-': case '^': case '/': return char32_t(e);
    case 'x': case 'u': case 'U': {
        const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        char32_t v = 0;
        for (size_t i = 0; i < digits; ++i) {
            const char h = peek();
            int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (d < 0) fail(at, std::string("\\") + e + " needs " + std::to_string(digits) + " hex digits");
            v = v * 16 + char32_t(d);
            ++pos_;
        }
        if (v > kMaxCodePoint || (v >= kSurrogateLo && v <= kSurrogateHi)) fail(at, "escape is not a Unicode character (a surrogate or over U+10FFFF)");
        return v;
    }
    default:
        if (at_end()) fail(opened_at, quote == '"' ? "unterminated literal" : "unterminated character class");
        fail(at, std::string("unknown escape '\\") + std::string(text_.substr(at + 1, std::max<size_t>(1, utf8_length(text_, at + 1)))) + "'");
    }
}

GrammarParser::Sequence GrammarParser::parse_literal() {
    const size_t open = pos_++;
    Sequence seq;
    while (peek() != '"' || at_end()) {
        const char32_t c = read_char(open, '"');
        seq.push_back(char_set({{c, c}}));
    }
    ++pos_;
    return seq;
}

GrammarParser::Sequence GrammarParser::parse_class() {
    const size_t open = pos_++;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    Grammar::CharSet ranges;
    while (at_end() || peek() != ']') {
        const size_t at = pos_;
        const char32_t lo = read_char(open, ']');
        char32_t hi = lo;
        if (peek() == '-' && text_.substr(pos_ + 1, 1) != "]") {
            ++pos_;
            hi = read_char(open, ']');
            if (hi < lo) fail(at, "bad range in character class: its end comes before its start");
        }
        ranges.emplace_back(lo, hi);
    }
    ++pos_;
    if (ranges.empty()) fail(open, "empty character class");
    Grammar::CharSet set = normalize(std::move(ranges), negated);
    if (set.empty()) fail(open, "the character class matches no character");
    return {char_set(std::move(set))};
}

void GrammarParser::check_defined() const {
    for (const PendingRule& r : rules_)
        if (!r.defined) fail(r.first_use, "undefined rule '" + r.name + "'");
}

void GrammarParser::check_left_recursion() const {
    const size_t n = rules_.size();
    std::vector<char> nullable(n, 0);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < n; ++i) {
            if (nullable[i]) continue;
            for (const Sequence& alt : rules_[i].alternatives)
                if (std::all_of(alt.begin(), alt.end(), [&](const Grammar::Element& e) { return e.kind == Grammar::Element::kRule && nullable[e.index]; })) {
                    nullable[i] = changed = true;
                    break;
                }
        }
    }
    // The rules each can begin with (without reading a character first).
    std::vector<std::vector<uint32_t>> first(n);
    for (size_t i = 0; i < n; ++i)
        for (const Sequence& alt : rules_[i].alternatives)
            for (const Grammar::Element& e : alt) {
                if (e.kind != Grammar::Element::kRule) break;
                first[i].push_back(e.index);
                if (!nullable[e.index]) break;
            }
    std::vector<uint8_t> color(n, 0);  // 0 unseen, 1 on the path, 2 done
    std::vector<uint32_t> path;
    const std::function<void(uint32_t)> visit = [&](uint32_t r) {
        color[r] = 1;
        path.push_back(r);
        for (uint32_t next : first[r]) {
            if (color[next] == 2) continue;
            if (color[next] == 1) {
                const auto from = std::find(path.begin(), path.end(), next);
                std::string cycle;
                for (auto it = from; it != path.end(); ++it) {
                    const std::string& named = rules_[rules_[*it].origin].name;
                    if (cycle.empty() || cycle.substr(cycle.rfind(' ') + 1) != named) cycle += (cycle.empty() ? "" : " -> ") + named;
                }
                const PendingRule& culprit = rules_[rules_[next].origin];
                fail(culprit.defined_at, "rule '" + culprit.name + "' is left-recursive (" + cycle + " -> " + culprit.name +
                                             " without reading a character); write the repetition with * or + instead");
            }
            visit(next);
        }
        path.pop_back();
        color[r] = 2;
    };
    for (uint32_t i = 0; i < n; ++i)
        if (color[i] == 0) visit(i);
}

std::shared_ptr<const Grammar> Grammar::parse(std::string_view text) { return GrammarParser(text).run(); }

}  // namespace hetero
