#include "openai_request.hpp"

#include "chat_messages.hpp"
#include "response_format.hpp"

#include "openai_fields.hpp"

#include <hetero/chat/grammar_matcher.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <map>
#include <optional>

namespace hetero::serve {

using nlohmann::json;

ApiError invalid_request(const std::string& message, const std::string& param, const std::string& code) {
    return ApiError(400, "invalid_request_error", message, param, code);
}

namespace {

json parse_object(const std::string& body) {
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded())
        throw invalid_request("the request body is not valid JSON");
    if (!j.is_object()) throw invalid_request("the request body must be a JSON object");
    return j;
}

// A field that is absent or null counts as not given.
const json* field(const json& j, const char* name) {
    const auto it = j.find(name);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

// A field that must be given: "'NAME' is required" when it is not.
const json& required(const json& j, const char* name) {
    const json* v = field(j, name);
    if (!v) throw invalid_request(fmt::format("'{}' is required", name), name);
    return *v;
}

std::string required_string(const json& j, const char* name) {
    const json& v = required(j, name);
    if (!v.is_string()) throw invalid_request(fmt::format("'{}' must be a string", name), name);
    return v.get<std::string>();
}

float number_in(const json& j, const char* name, double lo, double hi, float fallback) {
    const json* v = field(j, name);
    if (!v) return fallback;
    if (!v->is_number()) throw invalid_request(fmt::format("'{}' must be a number", name), name);
    const double x = v->get<double>();
    if (!(x >= lo && x <= hi)) throw invalid_request(fmt::format("'{}' must be between {} and {}", name, lo, hi), name);
    return float(x);
}

// An integer field in [lo, hi], or nullopt when absent.
std::optional<int32_t> int_in(const json& j, const char* name, int32_t lo, int32_t hi) {
    const json* v = field(j, name);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi)
        throw invalid_request(fmt::format("'{}' must be an integer between {} and {}", name, lo, hi), name);
    return int32_t(v->get<int64_t>());
}

// {"token id": bias, ...}: ids as decimal strings, biases in [-100, 100].
std::map<int32_t, float> logit_bias(const json& v) {
    if (!v.is_object()) throw invalid_request("'logit_bias' must be an object of token ids and biases", "logit_bias");
    std::map<int32_t, float> out;
    for (const auto& [key, bias] : v.items()) {
        int32_t token = -1;
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), token);
        if (key.empty() || ec != std::errc() || end != key.data() + key.size() || token < 0)
            throw invalid_request(fmt::format("'logit_bias' key '{}' is not a token id (a non-negative integer)", key), "logit_bias");
        if (!bias.is_number() || !(bias.get<double>() >= -100 && bias.get<double>() <= 100))
            throw invalid_request(fmt::format("'logit_bias' of token {} must be a number between -100 and 100", key), "logit_bias");
        out[token] = bias.get<float>();
    }
    return out;
}

void parse_sampling(const json& j, SamplerOptions& s) {
    s.temperature = number_in(j, "temperature", 0, 2, s.temperature);
    s.top_p = number_in(j, "top_p", 0, 1, s.top_p);
    // Nucleus sampling keeps the tokens up to this much probability: none at all is no sampling.
    if (!(s.top_p > 0.f)) throw invalid_request("'top_p' must be greater than 0 and at most 1", "top_p");
    s.top_k = int_in(j, "top_k", 0, INT32_MAX).value_or(s.top_k);
    s.min_p = number_in(j, "min_p", 0, 1, s.min_p);
    // vLLM's and Hugging Face's name, and llama.cpp server's.
    if (field(j, "repetition_penalty") && field(j, "repeat_penalty"))
        throw invalid_request("give 'repetition_penalty' or 'repeat_penalty', not both", "repeat_penalty");
    for (const char* name : {"repetition_penalty", "repeat_penalty"}) {
        s.repetition_penalty = number_in(j, name, 0, 100, s.repetition_penalty);
        if (!(s.repetition_penalty > 0.f)) throw invalid_request(fmt::format("'{}' must be greater than 0 (1 = off)", name), name);
    }
    s.repetition_window = int_in(j, "repeat_last_n", -1, INT32_MAX).value_or(s.repetition_window);
    s.presence_penalty = number_in(j, "presence_penalty", -2, 2, s.presence_penalty);
    s.frequency_penalty = number_in(j, "frequency_penalty", -2, 2, s.frequency_penalty);
    if (const json* v = field(j, "logit_bias")) s.logit_bias = logit_bias(*v);
}

void parse_common(const json& j, GenerationRequest& r) {
    r.model = required_string(j, "model");
    for (const char* name : {"max_tokens", "max_completion_tokens"})
        if (const json* v = field(j, name)) {
            if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > INT32_MAX)
                throw invalid_request(fmt::format("'{}' must be a positive integer", name), name);
            r.max_tokens = int32_t(v->get<int64_t>());
        }
    parse_sampling(j, r.sampling);
    if (const json* v = field(j, "seed")) {
        if (!v->is_number_integer()) throw invalid_request("'seed' must be an integer", "seed");
        r.seed = v->is_number_unsigned() ? v->get<uint64_t>() : uint64_t(v->get<int64_t>());
    }
    if (const json* v = field(j, "stop")) {
        if (v->is_string()) {
            r.stop.push_back(v->get<std::string>());
        } else if (v->is_array() && v->size() <= 4) {
            for (const json& s : *v) {
                if (!s.is_string()) throw invalid_request("'stop' must be a string or a list of at most 4 strings", "stop");
                r.stop.push_back(s.get<std::string>());
            }
        } else {
            throw invalid_request("'stop' must be a string or a list of at most 4 strings", "stop");
        }
    }
    if (const json* v = field(j, "stream")) {
        if (!v->is_boolean()) throw invalid_request("'stream' must be true or false", "stream");
        r.stream = v->get<bool>();
    }
    if (const json* v = field(j, "stream_options")) {
        if (!v->is_object()) throw invalid_request("'stream_options' must be an object", "stream_options");
        for (const auto& [key, value] : v->items())
            // include_obfuscation pads chunks against length side channels: harmless to leave out.
            if (key != "include_usage" && key != "include_obfuscation" && !value.is_null())
                throw invalid_request(fmt::format("'stream_options.{}' is not a field this server implements", key), "stream_options." + key);
        if (const json* u = field(*v, "include_usage")) {
            if (!u->is_boolean()) throw invalid_request("'stream_options.include_usage' must be true or false", "stream_options.include_usage");
            r.include_usage = u->get<bool>();
        }
    }
    if (const json* v = field(j, "n"))
        if (!v->is_number_integer() || v->get<int64_t>() != 1) throw invalid_request("only n = 1 is supported", "n");
    if (const json* v = field(j, "grammar")) {
        if (!v->is_string()) throw invalid_request("'grammar' must be a string (a GBNF grammar)", "grammar");
        try {
            r.grammar = Grammar::parse(v->get<std::string>());
            GrammarMatcher start(r.grammar);  // refuses a grammar too ambiguous at its start
        } catch (const GrammarError& e) {
            throw invalid_request(e.what(), "grammar");
        }
    }
}

// The body of a chat or completion request, with the fields this server
// leaves out refused by name.
json parse_request_object(const std::string& body, bool chat) {
    json j = parse_object(body);
    refuse_unimplemented_fields(j, chat);
    return j;
}

}  // namespace

GenerationRequest parse_chat_request(const std::string& body) {
    const json j = parse_request_object(body, true);
    GenerationRequest r;
    r.chat = true;
    const json& messages = required(j, "messages");
    if (!messages.is_array() || messages.empty()) throw invalid_request("'messages' must be a non-empty list", "messages");
    ChatMessages parsed = parse_chat_messages(messages);
    r.messages = std::move(parsed.plain);
    r.has_tool_turns = parsed.has_tool_turns;
    r.template_messages = parsed.for_template.dump(-1, ' ', false, json::error_handler_t::replace);
    parse_common(j, r);
    bool logprobs = false;
    if (const json* v = field(j, "logprobs")) {
        if (!v->is_boolean()) throw invalid_request("'logprobs' must be true or false", "logprobs");
        logprobs = v->get<bool>();
    }
    const std::optional<int32_t> top = int_in(j, "top_logprobs", 0, 20);
    if (top && !logprobs) throw invalid_request("'top_logprobs' needs 'logprobs': true", "top_logprobs");
    if (logprobs) r.top_logprobs = top.value_or(0);
    if (const json* format = field(j, "response_format")) r.response_schema = parse_response_format(*format);
    r.tools = parse_tool_request(j);
    // The template sees the tools as the client wrote them, keys in their order.
    if (!r.tools.tools_json.empty()) r.tools.tools_json = nlohmann::ordered_json::parse(body)["tools"].dump(-1, ' ', false, json::error_handler_t::replace);
    if (r.response_schema && r.tools.call_required())
        throw invalid_request("a required tool call and 'response_format' cannot both shape the reply; send one of them", "tool_choice");
    if (r.grammar && r.response_schema)
        throw invalid_request("'grammar' and a JSON 'response_format' cannot both shape the reply; send one of them", "grammar");
    if (r.grammar && r.tools.call_required())
        throw invalid_request("'grammar' and a required tool call cannot both shape the reply; send one of them", "grammar");
    return r;
}

GenerationRequest parse_completion_request(const std::string& body) {
    const json j = parse_request_object(body, false);
    GenerationRequest r;
    r.chat = false;
    const json& prompt = required(j, "prompt");
    if (prompt.is_string()) {
        r.prompt = prompt.get<std::string>();
    } else if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) {
        r.prompt = prompt[0].get<std::string>();
    } else {
        throw invalid_request("'prompt' must be a string (or a list of one string)", "prompt");
    }
    parse_common(j, r);
    r.top_logprobs = int_in(j, "logprobs", 0, 5).value_or(-1);
    return r;
}

}  // namespace hetero::serve
