// Structured output: a JSON schema compiled into a byte-level recognizer of
// the JSON texts it allows, so that generation can be constrained byte by
// byte (token_constraint.hpp turns it into a mask over the vocabulary).
//
// The schema subset is what OpenAI's "strict" structured outputs take:
// "type" (one or a list), "properties", "required", "additionalProperties"
// (false, true or a schema), "items", "minItems"/"maxItems",
// "minLength"/"maxLength", "enum", "const", "anyOf"/"oneOf" (as anyOf), local
// "$ref" into "$defs"/"definitions"; annotations ("title", "description",
// "default", "examples", "$schema", "$id", "format", ...) are ignored. A
// keyword that would constrain the text and is not enforced ("pattern",
// "minimum", "multipleOf", ...) is refused with its JSON path: a client must
// never get output that silently breaks its schema.
//
// The recognizer accepts compact and indented JSON and nothing after the top
// value. What a model could otherwise grow forever is capped: whitespace
// between tokens is nothing, one space, or a newline and up to 20 spaces or
// tabs; digits 16 per integer or fraction part, 2 in an exponent (a double never overflows); nesting 64
// levels.
#pragma once

#include <hetero/error.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

// A schema the recognizer cannot enforce, or a malformed one; the message
// names the JSON path ("properties.age.minimum: ...").
class JsonSchemaError : public Error {
public:
    using Error::Error;
};

class JsonSchema {
public:
    static constexpr int kAny = 0;  // the node that accepts any JSON value

    // `schema_json` is the schema as JSON text. Throws JsonSchemaError for a
    // schema it cannot enforce and for text that is not JSON.
    static std::shared_ptr<const JsonSchema> compile(std::string_view schema_json);
    // Any JSON object (OpenAI's response_format {"type": "json_object"}).
    static std::shared_ptr<const JsonSchema> any_object();

    enum Type : uint32_t { kObject = 1, kArray = 2, kString = 4, kNumber = 8, kInteger = 16, kBoolean = 32, kNull = 64, kAllTypes = 127 };

    struct Property {
        std::string name;
        int node = kAny;
        bool required = false;
    };
    struct Node {
        uint32_t types = kAllTypes;
        std::vector<Property> properties;  // at most 64 (their seen-set is a bit mask)
        int additional = kAny;             // schema of other keys' values; -1: no other keys
        int items = kAny;
        uint64_t min_items = 0, max_items = std::numeric_limits<uint64_t>::max();
        uint64_t min_length = 0, max_length = std::numeric_limits<uint64_t>::max();  // in code points
        std::vector<std::string> literals;  // enum/const values, compact JSON; empty = no enum
        std::vector<int> any_of;            // alternatives (this node then matches one of them)
    };

    const Node& node(int i) const { return nodes_[size_t(i)]; }
    int root() const { return root_; }

private:
    friend class JsonSchemaCompiler;
    std::vector<Node> nodes_;
    int root_ = kAny;
};

// Where a text stands against a schema: copy it to try a continuation.
class JsonMatcher {
public:
    explicit JsonMatcher(std::shared_ptr<const JsonSchema> schema);

    // Feeds one byte; false (and the state unchanged) when no text the schema
    // allows continues this way.
    bool feed(char c);
    bool feed(std::string_view bytes);  // all or nothing
    // Whether the text so far is a whole value the schema allows.
    bool complete() const;
    // Whether a byte can still follow (false once the top value is closed).
    bool can_continue() const;
    // Inside a string whose length is not limited, between characters, where
    // every plain ASCII byte (not '"', '\\' or a control byte) is accepted and
    // changes nothing that matters: a token mask walks such bytes without
    // copying the state. Strings are held to well-formed UTF-8.
    bool in_free_string() const;
    // Equal for two states that accept the same continuations (counts that no
    // longer matter are left out): a token mask computed for one serves both.
    std::string state_key() const;

private:
    struct Frame {
        enum Kind : uint8_t { kValue, kObject, kArray, kString, kNumber, kLiteral } kind = kValue;
        uint8_t state = 0;
        bool is_key = false;        // a string that is an object's key
        bool integer_only = false;  // a number of type "integer"
        int node = JsonSchema::kAny;
        int key_node = JsonSchema::kAny;  // object: the schema of the value after the key just read
        uint64_t count = 0;               // array: items; string: code points
        uint64_t seen = 0;                // object: the properties present (bit per index)
        uint8_t utf8_left = 0;            // string: continuation bytes still due
        uint8_t utf8_lo = 0x80, utf8_hi = 0xBF;  // string: the range of the next continuation byte
        std::string text;                 // key: the bytes so far; literal: the bytes matched
        bool operator==(const Frame&) const = default;
    };
    struct Stack {
        std::vector<Frame> frames;
        uint32_t whitespace = 0;  // the whitespace since the last token (take_space)
        bool operator==(const Stack&) const = default;
    };

    // Each way `stack` can go on after byte `c` is appended to `out`.
    void feed_stack(Stack stack, unsigned char c, std::vector<Stack>& out) const;
    void start_value(Stack stack, unsigned char c, std::vector<Stack>& out) const;
    void feed_array(Stack stack, unsigned char c, std::vector<Stack>& out) const;
    // These never fork: true when `stack` took the byte.
    bool feed_object(Stack& stack, unsigned char c) const;
    bool feed_string(Stack& stack, unsigned char c) const;
    void finish_frame(Stack& stack) const;
    bool key_allowed(const Frame& object, const std::string& key, bool whole) const;
    std::vector<std::string_view> literal_candidates(const Frame& f) const;
    static bool number_terminal(const Frame& f);
    bool literal_complete(const Frame& f) const;

    std::shared_ptr<const JsonSchema> schema_;
    std::vector<Stack> alternatives_;  // several while an anyOf is undecided
};

}  // namespace hetero
