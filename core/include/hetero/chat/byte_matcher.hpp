// What a token mask (token_constraint.hpp) needs of a recognizer fed one
// byte at a time: the JSON schema matcher (framed_json_matcher.hpp) and the
// grammar matcher (grammar_matcher.hpp) both are one.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace hetero {

class ByteMatcher {
public:
    virtual ~ByteMatcher() = default;

    // A copy to try a continuation on.
    virtual std::unique_ptr<ByteMatcher> clone() const = 0;
    // Becomes a copy of `other`, a matcher of the same kind, reusing this
    // one's storage (a mask's walk tries every edge of a trie node on one).
    virtual void assign(const ByteMatcher& other) = 0;
    // Feeds one byte; false (and the state unchanged) when no allowed text
    // continues this way.
    virtual bool feed(char c) = 0;
    virtual bool feed(std::string_view bytes) = 0;  // all or nothing
    // Whether the text so far is a whole allowed text.
    virtual bool complete() const = 0;
    // Whether a byte can still follow.
    virtual bool can_continue() const = 0;
    // Where every plain ASCII byte other than '"' and '\\' (0x20..0x7F) is
    // accepted and leaves the state as it is, so a mask may walk such bytes
    // without copying the state (inside an unconstrained JSON string).
    virtual bool in_free_string() const { return false; }
    // Equal for two states that accept the same continuations: a mask
    // computed for one serves both.
    virtual std::string state_key() const = 0;
};

// feed(bytes) of a matcher of value type M: every byte fed to a copy, which
// is kept only when all were accepted.
template <class M>
bool feed_all_or_nothing(M& matcher, std::string_view bytes) {
    M trial = matcher;
    for (char c : bytes)
        if (!trial.feed(c)) return false;
    matcher = std::move(trial);
    return true;
}

}  // namespace hetero
