// Generation held to a JSON schema or a grammar: which tokens may come next
// (a mask over the vocabulary from a byte matcher walked along a byte trie of
// the tokens' texts), and the state advanced by each sampled token. A JSON
// value may be framed by fixed texts (framed_json_matcher.hpp), as tool calls
// are; a grammar is grammar_matcher.hpp's.
#pragma once

#include <hetero/chat/byte_matcher.hpp>
#include <hetero/chat/framed_json_matcher.hpp>
#include <hetero/chat/json_schema_matcher.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace hetero {

// The vocabulary's token texts (the bytes decode() gives) in a byte trie;
// control tokens and tokens that decode to nothing are left out. Built once
// per tokenizer and shared by the requests that use it.
class TokenTrie {
public:
    explicit TokenTrie(const Tokenizer& tokenizer);

    struct Node {
        std::vector<std::pair<unsigned char, int32_t>> children;  // byte -> node
        std::vector<int32_t> tokens;                              // tokens whose text ends here
    };
    const Node& node(int32_t i) const { return nodes_[size_t(i)]; }
    const std::string& text(int32_t token) const { return texts_[size_t(token)]; }
    size_t size() const { return texts_.size(); }  // the vocabulary's size

private:
    std::vector<Node> nodes_;  // 0 is the root
    std::vector<std::string> texts_;
};

class TokenConstraint {
public:
    TokenConstraint(std::shared_ptr<const JsonSchema> schema, std::shared_ptr<const TokenTrie> trie, JsonFraming framing = {});
    // Any matcher (a grammar's): its state now is where generation starts.
    TokenConstraint(std::unique_ptr<ByteMatcher> matcher, std::shared_ptr<const TokenTrie> trie);

    // Sets the logits of tokens that cannot come next to -infinity. The
    // `end_tokens` (EOS, end of turn) stay only once the value is whole; a
    // value that cannot go on leaves only them.
    void mask(std::vector<float>& logits, const std::vector<int32_t>& end_tokens) const;
    // Advances by a sampled token (not an end token); false when the token
    // was not allowed, and the state is then unchanged.
    bool accept(int32_t token);

    bool complete() const { return matcher_->complete(); }
    bool can_continue() const { return matcher_->can_continue(); }

private:
    void walk(int32_t node, const ByteMatcher& state, std::vector<char>& allowed) const;

    std::shared_ptr<const TokenTrie> trie_;
    std::unique_ptr<ByteMatcher> matcher_;
    // Masks by state_key(): inside a long string the state repeats token after token.
    mutable std::unordered_map<std::string, std::vector<char>> masks_;
};

}  // namespace hetero
