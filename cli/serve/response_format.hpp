// A chat request's response_format, as OpenAI defines it:
//   {"type": "text"}                                   free text
//   {"type": "json_object"}                            any JSON object
//   {"type": "json_schema", "json_schema": {"name": "...", "schema": {...}, "strict": true}}
// The reply is held to it while it is generated (hetero/chat/token_constraint.hpp),
// streamed or not.
#pragma once

#include <hetero/chat/json_schema_matcher.hpp>
#include <hetero/chat/token_constraint.hpp>

#include <nlohmann/json.hpp>

#include <memory>

namespace hetero::serve {

// nullptr for free text. A malformed format, or a schema with a keyword
// that is not enforced, is a 400 whose param is "response_format" and whose
// message names the JSON path.
std::shared_ptr<const JsonSchema> parse_response_format(const nlohmann::json& format);

// The vocabulary trie the token masks walk, built on first use (tens of ms
// for a large vocabulary) and kept for the server's model.
std::shared_ptr<const TokenTrie> served_token_trie(const Tokenizer& tokenizer);

}  // namespace hetero::serve
