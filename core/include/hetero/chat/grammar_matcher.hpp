// Where a text stands against a grammar (grammar.hpp), fed byte by byte: a
// set of parse stacks, each a position in a rule's alternative above the
// positions to return to, advanced by each whole UTF-8 code point. Bytes of
// a code point not yet whole are taken only when some stack accepts a
// character that begins with them, so invalid UTF-8 never gets in.
//
// Bounded: a byte that would leave more than kMaxStacks live stacks (an
// ambiguous grammar) or a stack deeper than kMaxDepth (nesting) is refused
// like a byte the grammar does not allow, so masks stay cheap and finite.
#pragma once

#include <hetero/chat/byte_matcher.hpp>
#include <hetero/chat/grammar.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

class GrammarMatcher final : public ByteMatcher {
public:
    static constexpr size_t kMaxStacks = 256;
    static constexpr size_t kMaxDepth = 512;

    // Throws GrammarError when the grammar is too ambiguous at its start.
    explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

    std::unique_ptr<ByteMatcher> clone() const override { return std::make_unique<GrammarMatcher>(*this); }
    void assign(const ByteMatcher& other) override { *this = static_cast<const GrammarMatcher&>(other); }
    bool feed(char c) override;
    bool feed(std::string_view bytes) override;  // all or nothing
    bool complete() const override;
    bool can_continue() const override;
    std::string state_key() const override;

private:
    using Stack = std::vector<uint32_t>;  // element positions; the top (back) is a character class, or empty: done

    // Every stack `stack` reaches before its next character, appended to `out`; false when over the limits.
    bool expand(Stack stack, std::vector<Stack>& out) const;
    bool advance(char32_t c);
    bool accepts_some(char32_t lo, char32_t hi) const;  // a character in [lo, hi] can come next

    std::shared_ptr<const Grammar> grammar_;
    std::vector<Stack> stacks_;  // sorted, distinct
    // A code point begun: its bits so far, continuation bytes still due, its byte count.
    char32_t partial_ = 0;
    uint8_t utf8_left_ = 0, utf8_length_ = 0;
};

}  // namespace hetero
