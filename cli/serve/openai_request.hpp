// The OpenAI request bodies `hetero serve` accepts, checked field by field;
// anything wrong becomes an ApiError with the status and code OpenAI uses.
#pragma once

#include <hetero/chat/chat_template.hpp>
#include <hetero/chat/grammar.hpp>
#include <hetero/chat/json_schema_matcher.hpp>
#include <hetero/runtime/sampler.hpp>

#include "tool_request.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetero::serve {

struct ApiError : std::runtime_error {
    ApiError(int status, std::string type, std::string message, std::string param = "", std::string code = "")
        : std::runtime_error(message), status(status), type(std::move(type)), param(std::move(param)), code(std::move(code)) {}
    int status;
    std::string type;   // "invalid_request_error", "not_found_error", "server_error"
    std::string param;  // the field at fault; "" = null
    std::string code;   // "context_length_exceeded", "model_not_found"; "" = null
};

ApiError invalid_request(const std::string& message, const std::string& param = "", const std::string& code = "");

inline SamplerOptions default_sampling() {
    SamplerOptions s;
    s.temperature = 1.f;
    s.top_p = 1.f;
    s.top_k = 0;
    return s;
}

struct GenerationRequest {
    bool chat = true;  // /v1/chat/completions, else /v1/completions
    std::string model;
    std::vector<ChatMessage> messages;  // chat
    std::string prompt;                 // completion
    std::optional<int32_t> max_tokens;
    // OpenAI's defaults (temperature 1, top_p 1, no top-k) and, from
    // llama.cpp's server, top_k, min_p, repeat_penalty and repeat_last_n.
    SamplerOptions sampling = default_sampling();
    std::optional<uint64_t> seed;  // nullopt: the server picks one
    std::vector<std::string> stop;
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
    // Log-probabilities of the reply's tokens with this many alternatives
    // each (chat: logprobs + top_logprobs; completions: logprobs = N); -1: none.
    int32_t top_logprobs = -1;
    // response_format json_object / json_schema (chat): the schema the reply is held to.
    std::shared_ptr<const JsonSchema> response_schema;
    // grammar (GBNF, as llama.cpp's server takes it): the grammar the reply is held to.
    std::shared_ptr<const Grammar> grammar;
    // tools, tool_choice, parallel_tool_calls (chat).
    ToolRequest tools;
    // The messages as JSON for the template's render_json, used when there
    // are tools or tool turns (the plain `messages` cannot carry them).
    std::string template_messages;
    bool has_tool_turns = false;
    bool renders_as_json() const { return !tools.tools.empty() || has_tool_turns; }
};

// Throws ApiError (400) for malformed JSON, a missing or mistyped field, a
// field hetero does not implement (openai_fields.hpp). logit_bias token ids
// are checked against the vocabulary later, by whoever knows it.
GenerationRequest parse_chat_request(const std::string& body);
GenerationRequest parse_completion_request(const std::string& body);

}  // namespace hetero::serve
