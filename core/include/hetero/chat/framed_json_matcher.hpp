// A JSON value held to a schema between fixed texts, repeated up to a count:
//   prefix VALUE suffix (separator prefix VALUE suffix)...
// Tool calls are written this way ("<tool_call>\n" {...} "\n</tool_call>"),
// so a token mask over it (token_constraint.hpp) keeps a reply a well-formed
// call. With no framing it is a plain JsonMatcher.
#pragma once

#include <hetero/chat/byte_matcher.hpp>
#include <hetero/chat/json_schema_matcher.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hetero {

struct JsonFraming {
    std::string prefix, suffix;  // around each value, matched byte for byte
    std::string separator;       // between two framed values
    size_t max_values = 1;       // at least one value, at most this many
};

class FramedJsonMatcher final : public ByteMatcher {
public:
    explicit FramedJsonMatcher(std::shared_ptr<const JsonSchema> schema, JsonFraming framing = {});

    // The same contract as JsonMatcher's: false (state unchanged) for a byte
    // no allowed text continues with.
    std::unique_ptr<ByteMatcher> clone() const override { return std::make_unique<FramedJsonMatcher>(*this); }
    void assign(const ByteMatcher& other) override { *this = static_cast<const FramedJsonMatcher&>(other); }
    bool feed(char c) override;
    bool feed(std::string_view bytes) override;  // all or nothing
    bool complete() const override;              // the text so far is a whole allowed text
    bool can_continue() const override;
    bool in_free_string() const override;
    std::string state_key() const override;

private:
    enum class Part : uint8_t { prefix, value, suffix, between, done };
    const std::string& literal() const;  // of prefix, suffix, between (the separator)
    void settle();                        // steps over parts that are already whole
    void end_value();

    std::shared_ptr<const JsonSchema> schema_;
    std::shared_ptr<const JsonFraming> framing_;
    Part part_ = Part::prefix;
    size_t matched_ = 0;  // bytes of the current literal matched
    size_t values_ = 0;   // values finished
    JsonMatcher value_;
};

}  // namespace hetero
