#include "openai_fields.hpp"

#include "openai_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace hetero::serve {

using nlohmann::json;

namespace {

// Read and applied by the request parser (openai_request.cpp).
constexpr std::string_view kSamplingFields[] = {
    "model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p", "repetition_penalty", "repeat_penalty",
    "repeat_last_n", "presence_penalty", "frequency_penalty", "logit_bias", "seed", "stop", "stream", "stream_options", "n", "logprobs",
    "grammar"};
constexpr std::string_view kChatOnlyFields[] = {"messages", "top_logprobs", "tools", "tool_choice", "parallel_tool_calls"};
constexpr std::string_view kCompletionOnlyFields[] = {"prompt"};

// Accepted knowingly and without effect: OpenAI clients send them, and they
// change nothing about the tokens one local model generates.
//   user, safety_identifier, prompt_cache_key  who is asking, cache routing hints
//   metadata, store                            OpenAI's stored-completion bookkeeping (nothing is stored here)
//   service_tier                               OpenAI's processing tiers; there is one here
constexpr std::string_view kHarmlessFields[] = {"user", "safety_identifier", "prompt_cache_key", "metadata", "store", "service_tier"};

// Implemented only in part: the values that ask for nothing hetero lacks are
// accepted, others refused by check_partial_fields.
constexpr std::string_view kPartialChatFields[] = {"functions", "function_call", "response_format", "modalities"};
constexpr std::string_view kPartialCompletionFields[] = {"echo", "best_of", "suffix"};

template <size_t N>
bool among(std::string_view name, const std::string_view (&names)[N]) {
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// A field that is absent or null counts as not given.
const json* given(const json& body, const char* name) {
    const auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void unsupported(const std::string& message, const char* param) { throw invalid_request(message, param); }

void check_partial_chat_fields(const json& body) {
    // tools, tool_choice and parallel_tool_calls are read by the request parser (tool_request.hpp);
    // the deprecated functions / function_call that preceded them are not.
    const json* functions = given(body, "functions");
    if (functions && !(functions->is_array() && functions->empty()))
        unsupported("'functions' (deprecated function calling) is not supported by this server; send 'tools'", "functions");
    if (const json* call = given(body, "function_call"); call && *call != "none")
        unsupported("'function_call' other than \"none\" is not supported by this server; send 'tool_choice'", "function_call");
    // response_format (text, json_object, json_schema) is read by the request parser (response_format.hpp).
    if (const json* modalities = given(body, "modalities"); modalities && *modalities != json::array({"text"}))
        unsupported("'modalities' other than [\"text\"] are not supported by this server", "modalities");
}

void check_partial_completion_fields(const json& body) {
    if (const json* echo = given(body, "echo")) {
        if (!echo->is_boolean()) throw invalid_request("'echo' must be true or false", "echo");
        if (echo->get<bool>()) unsupported("'echo': true is not supported by this server", "echo");
    }
    if (const json* best_of = given(body, "best_of"); best_of && *best_of != 1)
        unsupported("'best_of' other than 1 is not supported by this server", "best_of");
    if (const json* suffix = given(body, "suffix"); suffix && *suffix != "")
        unsupported("'suffix' (insertion) is not supported by this server", "suffix");
}

}  // namespace

void refuse_unimplemented_fields(const json& body, bool chat) {
    for (const auto& [key, value] : body.items()) {
        if (value.is_null()) continue;  // null is not given, as everywhere in a request
        const std::string_view name = key;
        const bool known = among(name, kSamplingFields) || among(name, kHarmlessFields) ||
                           (chat ? among(name, kChatOnlyFields) || among(name, kPartialChatFields)
                                 : among(name, kCompletionOnlyFields) || among(name, kPartialCompletionFields));
        if (!known) throw invalid_request(fmt::format("'{}' is not a field this server implements", key), key);
    }
    if (chat)
        check_partial_chat_fields(body);
    else
        check_partial_completion_fields(body);
}

}  // namespace hetero::serve
