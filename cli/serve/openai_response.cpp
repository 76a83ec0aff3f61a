#include "openai_response.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <random>

namespace hetero::serve {

using nlohmann::json;

ResponseHead new_response_head(bool chat, const std::string& model) {
    static std::atomic<uint64_t> counter{0};
    static const uint64_t salt = std::random_device{}();
    ResponseHead h;
    h.chat = chat;
    h.model = model;
    h.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    h.id = fmt::format("{}-{:08x}{:06x}", chat ? "chatcmpl" : "cmpl", uint32_t(salt), counter.fetch_add(1) & 0xffffff);
    return h;
}

json error_body(const ApiError& e) {
    return {{"error",
             {{"message", e.what()},
              {"type", e.type},
              {"param", e.param.empty() ? json(nullptr) : json(e.param)},
              {"code", e.code.empty() ? json(nullptr) : json(e.code)}}}};
}

json usage_json(const Usage& u) {
    return {{"prompt_tokens", u.prompt_tokens}, {"completion_tokens", u.completion_tokens}, {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

namespace {
json head_json(const ResponseHead& h, bool chunked) {
    return {{"id", h.id},
            {"object", h.chat ? (chunked ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
            {"created", h.created},
            {"model", h.model}};
}
json reason(const std::string& finish_reason) { return finish_reason.empty() ? json(nullptr) : json(finish_reason); }
}  // namespace

json full_response(const ResponseHead& h, const std::string& text, const std::string& finish_reason, const Usage& u,
                   const json& logprobs, const json& tool_calls) {
    json j = head_json(h, false);
    json choice = {{"index", 0}, {"finish_reason", reason(finish_reason)}, {"logprobs", logprobs}};
    if (h.chat) {
        choice["message"] = {{"role", "assistant"}, {"content", text}};
        if (!tool_calls.is_null()) {
            if (text.empty()) choice["message"]["content"] = nullptr;
            choice["message"]["tool_calls"] = tool_calls;
        }
    } else {
        choice["text"] = text;
    }
    j["choices"] = json::array({choice});
    j["usage"] = usage_json(u);
    return j;
}

json chunk(const ResponseHead& h, const std::string& text, const std::string& finish_reason, bool role, const json& logprobs) {
    json j = head_json(h, true);
    json choice = {{"index", 0}, {"finish_reason", reason(finish_reason)}, {"logprobs", logprobs}};
    if (h.chat) {
        json delta = json::object();
        if (role) delta["role"] = "assistant";
        if (!text.empty() || role) delta["content"] = text;
        choice["delta"] = delta;
    } else {
        choice["text"] = text;
    }
    j["choices"] = json::array({choice});
    return j;
}

json tool_call_chunk(const ResponseHead& h, const json& call_delta) {
    json j = head_json(h, true);
    j["choices"] = json::array({{{"index", 0}, {"finish_reason", nullptr}, {"logprobs", nullptr},
                                 {"delta", {{"tool_calls", json::array({call_delta})}}}}});
    return j;
}

json logprobs_json(bool chat, const std::vector<cli::TokenLogprobs>& tokens, const Tokenizer& tokenizer, size_t offset) {
    const auto bytes = [](const std::string& piece) { return std::vector<uint8_t>(piece.begin(), piece.end()); };
    json content = json::array(), pieces = json::array(), logprobs = json::array(), tops = json::array(), offsets = json::array();
    for (const cli::TokenLogprobs& t : tokens) {
        const std::string piece = tokenizer.decode(t.token);
        if (chat) {
            json top = json::array();
            for (const auto& [id, lp] : t.top) {
                const std::string p = tokenizer.decode(id);
                top.push_back({{"token", p}, {"logprob", lp}, {"bytes", bytes(p)}});
            }
            content.push_back({{"token", piece}, {"logprob", t.logprob}, {"bytes", bytes(piece)}, {"top_logprobs", top}});
        } else {
            json top = json::object();
            for (const auto& [id, lp] : t.top) top[tokenizer.decode(id)] = lp;
            pieces.push_back(piece);
            logprobs.push_back(t.logprob);
            tops.push_back(top);
            offsets.push_back(offset);
        }
        offset += piece.size();
    }
    if (chat) return {{"content", content}};
    return {{"tokens", pieces}, {"token_logprobs", logprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

TokenSpan tokens_within(const std::vector<cli::TokenLogprobs>& tokens, const Tokenizer& tokenizer, size_t bytes) {
    TokenSpan span;
    for (const cli::TokenLogprobs& t : tokens) {
        const size_t piece = tokenizer.decode(t.token).size();
        if (span.bytes + piece > bytes) break;
        span.bytes += piece;
        ++span.count;
    }
    return span;
}

std::string to_text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse_event(const json& j) { return "data: " + to_text(j) + "\n\n"; }

}  // namespace hetero::serve
