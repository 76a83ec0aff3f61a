#include <hetero/chat/grammar_matcher.hpp>

#include <algorithm>

namespace hetero {

namespace {

using Element = Grammar::Element;

bool contains(const Grammar::CharSet& set, char32_t c) {
    const auto it = std::lower_bound(set.begin(), set.end(), c, [](const auto& r, char32_t v) { return r.second < v; });
    return it != set.end() && it->first <= c;
}

bool intersects(const Grammar::CharSet& set, char32_t lo, char32_t hi) {
    const auto it = std::lower_bound(set.begin(), set.end(), lo, [](const auto& r, char32_t v) { return r.second < v; });
    return it != set.end() && it->first <= hi;
}

// The smallest code point that takes `length` bytes in UTF-8 (shorter forms are overlong).
char32_t min_code_point(uint8_t length) { return length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000; }

// Work items a single expansion may take before the grammar counts as too ambiguous.
constexpr size_t kMaxExpansionSteps = 1 << 16;

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
    if (!grammar_) throw Error("a grammar matcher needs a grammar");
    std::vector<Stack> start;
    bool ok = true;
    for (uint32_t alt : grammar_->rules()[grammar_->root()].alternatives) ok = ok && expand({alt}, start);
    std::sort(start.begin(), start.end());
    start.erase(std::unique(start.begin(), start.end()), start.end());
    if (!ok || start.size() > kMaxStacks)
        throw GrammarError(1, 1, "the grammar is too ambiguous at its start (over " + std::to_string(kMaxStacks) + " ways to read the first character)");
    stacks_ = std::move(start);
}

bool GrammarMatcher::expand(Stack stack, std::vector<Stack>& out) const {
    const auto& elements = grammar_->elements();
    std::vector<Stack> work{std::move(stack)};
    for (size_t steps = 0; !work.empty(); ++steps) {
        if (steps > kMaxExpansionSteps) return false;
        Stack s = std::move(work.back());
        work.pop_back();
        while (!s.empty() && elements[s.back()].kind == Element::kEnd) s.pop_back();  // alternatives done: return
        if (s.empty() || elements[s.back()].kind == Element::kChars) {
            out.push_back(std::move(s));
            if (out.size() > kMaxStacks) return false;
            continue;
        }
        const uint32_t rule = elements[s.back()].index;
        ++s.back();  // where to go on once the rule is read
        while (!s.empty() && elements[s.back()].kind == Element::kEnd) s.pop_back();  // a call in last place returns nowhere
        if (s.size() >= kMaxDepth) continue;  // nested too deep: this reading is dropped
        for (uint32_t alt : grammar_->rules()[rule].alternatives) {
            Stack next = s;
            next.push_back(alt);
            work.push_back(std::move(next));
        }
    }
    return true;
}

bool GrammarMatcher::advance(char32_t c) {
    const auto& elements = grammar_->elements();
    std::vector<Stack> next;
    for (const Stack& s : stacks_) {
        if (s.empty() || !contains(grammar_->char_sets()[elements[s.back()].index], c)) continue;
        Stack moved = s;
        ++moved.back();
        if (!expand(std::move(moved), next)) return false;
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    if (next.empty() || next.size() > kMaxStacks) return false;
    stacks_ = std::move(next);
    return true;
}

bool GrammarMatcher::accepts_some(char32_t lo, char32_t hi) const {
    const auto& elements = grammar_->elements();
    for (const Stack& s : stacks_)
        if (!s.empty() && intersects(grammar_->char_sets()[elements[s.back()].index], lo, hi)) return true;
    return false;
}

bool GrammarMatcher::feed(char ch) {
    const auto b = (unsigned char)ch;
    if (utf8_left_ == 0) {
        if (b < 0x80) return advance(b);
        uint8_t length;
        if (b >= 0xC2 && b <= 0xDF) length = 2;
        else if (b >= 0xE0 && b <= 0xEF) length = 3;
        else if (b >= 0xF0 && b <= 0xF4) length = 4;
        else return false;  // a continuation byte, or a lead byte UTF-8 never uses
        const char32_t bits = b & (0xFF >> (length + 1));
        const unsigned shift = 6u * (length - 1u);
        const char32_t lo = std::max<char32_t>(bits << shift, min_code_point(length));
        const char32_t hi = std::min<char32_t>(bits << shift | ((1u << shift) - 1), 0x10FFFF);
        if (lo > hi || !accepts_some(lo, hi)) return false;
        partial_ = bits, utf8_left_ = length - 1, utf8_length_ = length;
        return true;
    }
    if ((b & 0xC0) != 0x80) return false;
    const char32_t bits = partial_ << 6 | (b & 0x3F);
    const uint8_t left = utf8_left_ - 1;
    const unsigned shift = 6u * left;
    const char32_t lo = std::max<char32_t>(bits << shift, min_code_point(utf8_length_));
    const char32_t hi = std::min<char32_t>(bits << shift | ((1u << shift) - 1), 0x10FFFF);
    if (lo > hi || (lo >= 0xD800 && hi <= 0xDFFF)) return false;
    if (left == 0) {
        if (!advance(bits)) return false;
    } else if (!accepts_some(lo, hi)) {
        return false;
    }
    partial_ = left == 0 ? 0 : bits, utf8_left_ = left;
    if (left == 0) utf8_length_ = 0;
    return true;
}

bool GrammarMatcher::feed(std::string_view bytes) { return feed_all_or_nothing(*this, bytes); }

bool GrammarMatcher::complete() const { return utf8_left_ == 0 && !stacks_.empty() && stacks_.front().empty(); }

bool GrammarMatcher::can_continue() const { return utf8_left_ > 0 || (!stacks_.empty() && !stacks_.back().empty()); }

std::string GrammarMatcher::state_key() const {
    std::string key;
    const auto put = [&](uint32_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    put(uint32_t(partial_)), put(utf8_left_), put(utf8_length_);
    for (const Stack& s : stacks_) {
        put(uint32_t(s.size()));
        for (uint32_t p : s) put(p);
    }
    return key;
}

}  // namespace hetero
