// The OpenAI response bodies and server-sent-event chunks `hetero serve`
// writes. Generated text that is not valid UTF-8 is sent with U+FFFD.
#pragma once

#include "../logprobs.hpp"
#include "openai_request.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace hetero::serve {

struct Usage {
    int32_t prompt_tokens = 0, completion_tokens = 0;
};

// Identity of one response: its id ("chatcmpl-…" / "cmpl-…"), creation time, model.
struct ResponseHead {
    std::string id;
    int64_t created = 0;
    std::string model;
    bool chat = true;
};
ResponseHead new_response_head(bool chat, const std::string& model);

nlohmann::json error_body(const ApiError& e);
nlohmann::json usage_json(const Usage& u);
// `logprobs`: the choice's log-probabilities (logprobs_json), null when not asked for.
// `tool_calls` (chat): the message's calls (tool_response.hpp); its content
// is then null unless `text` has some.
nlohmann::json full_response(const ResponseHead& h, const std::string& text, const std::string& finish_reason, const Usage& u,
                             const nlohmann::json& logprobs = nullptr, const nlohmann::json& tool_calls = nullptr);
// Sampled tokens with their log-probabilities as OpenAI lays them out:
// chat {"content": [{"token", "logprob", "bytes", "top_logprobs"}]},
// completions {"tokens", "token_logprobs", "top_logprobs", "text_offset"};
// `offset` is the first token's byte offset in the reply.
nlohmann::json logprobs_json(bool chat, const std::vector<cli::TokenLogprobs>& tokens, const Tokenizer& tokenizer, size_t offset = 0);
// The leading `tokens` that spell text within the first `bytes` bytes from
// where they start (a stop string cuts the text, not the sampled tokens, and
// a stream releases text behind the tokens): how many, and their bytes.
struct TokenSpan {
    size_t count = 0, bytes = 0;
};
TokenSpan tokens_within(const std::vector<cli::TokenLogprobs>& tokens, const Tokenizer& tokenizer, size_t bytes);
// A streamed chunk; `role` starts a chat stream, `finish_reason` ends it ("" = null).
nlohmann::json chunk(const ResponseHead& h, const std::string& text, const std::string& finish_reason, bool role = false,
                     const nlohmann::json& logprobs = nullptr);

// A chat stream chunk whose delta carries one entry of tool_calls.
nlohmann::json tool_call_chunk(const ResponseHead& h, const nlohmann::json& call_delta);

std::string to_text(const nlohmann::json& j);  // compact, invalid UTF-8 replaced
std::string sse_event(const nlohmann::json& j);  // "data: {...}\n\n"
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace hetero::serve
