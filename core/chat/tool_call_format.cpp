#include <hetero/chat/tool_call_format.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

namespace hetero {

using ordered_json = nlohmann::ordered_json;

namespace {

constexpr std::string_view kHermesOpen = "<tool_call>", kHermesClose = "</tool_call>";
constexpr std::string_view kMistralMarker = "[TOOL_CALLS]";
constexpr std::string_view kPythonTag = "<|python_tag|>";  // Llama 3.1 may open a call with it
constexpr std::string_view kSpace = " \t\r\n";

std::string_view trim(std::string_view s) {
    const size_t first = s.find_first_not_of(kSpace);
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

std::optional<ordered_json> parse_json(std::string_view text) {
    ordered_json j = ordered_json::parse(text, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

// {"name": "...", <arguments_key>: {...}}; arguments given as a JSON string
// holding an object are taken too (some models write them that way).
std::optional<ToolCall> call_from(const ordered_json& j, std::initializer_list<const char*> argument_keys) {
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty()) return std::nullopt;
    for (const char* key : argument_keys) {
        if (!j.contains(key)) continue;
        ordered_json args = j[key];
        if (args.is_string()) args = parse_json(args.get<std::string>()).value_or(ordered_json());
        if (!args.is_object()) return std::nullopt;
        return ToolCall{j["name"].get<std::string>(), args.dump()};
    }
    return std::nullopt;
}

ParsedReply parse_hermes(std::string_view text) {
    ParsedReply r;
    std::string content;
    size_t at = 0;
    while (at < text.size()) {
        const size_t open = text.find(kHermesOpen, at);
        if (open == std::string_view::npos) break;
        const size_t body = open + kHermesOpen.size();
        const size_t close = text.find(kHermesClose, body);
        std::optional<ToolCall> call;
        if (close != std::string_view::npos)
            if (auto j = parse_json(trim(text.substr(body, close - body)))) call = call_from(*j, {"arguments", "parameters"});
        if (!call) {  // malformed: the marker stays content, and the search goes on after it
            content.append(text.substr(at, body - at));
            at = body;
            continue;
        }
        content.append(text.substr(at, open - at));
        r.calls.push_back(std::move(*call));
        at = close + kHermesClose.size();
    }
    content.append(text.substr(std::min(at, text.size())));
    r.content = r.calls.empty() ? std::string(text) : std::string(trim(content));
    return r;
}

ParsedReply parse_llama3(std::string_view text) {
    std::string_view body = trim(text);
    if (body.starts_with(kPythonTag)) body = trim(body.substr(kPythonTag.size()));
    if (body.starts_with('{'))
        if (auto j = parse_json(body))
            if (auto call = call_from(*j, {"parameters", "arguments"})) return {"", {std::move(*call)}};
    return {std::string(text), {}};
}

ParsedReply parse_mistral(std::string_view text) {
    const size_t marker = text.find(kMistralMarker);
    if (marker == std::string_view::npos) return {std::string(text), {}};
    const auto j = parse_json(trim(text.substr(marker + kMistralMarker.size())));
    ParsedReply r{std::string(trim(text.substr(0, marker))), {}};
    if (j && j->is_array() && !j->empty()) {
        for (const ordered_json& item : *j) {
            auto call = call_from(item, {"arguments", "parameters"});
            if (!call) return {std::string(text), {}};
            r.calls.push_back(std::move(*call));
        }
        return r;
    }
    return {std::string(text), {}};
}

// The bytes before `marker`, or before a tail of `text` that may still grow into it.
size_t before_marker(std::string_view text, std::string_view marker) {
    if (const size_t at = text.find(marker); at != std::string_view::npos) return at;
    for (size_t keep = std::min(marker.size() - 1, text.size()); keep > 0; --keep)
        if (marker.starts_with(text.substr(text.size() - keep))) return text.size() - keep;
    return text.size();
}

}  // namespace

const char* tool_call_style_name(ToolCallStyle style) {
    switch (style) {
        case ToolCallStyle::hermes: return "hermes";
        case ToolCallStyle::llama3: return "llama3";
        case ToolCallStyle::mistral: return "mistral";
        case ToolCallStyle::none: break;
    }
    return "none";
}

ToolCallStyle detect_tool_call_style(std::string_view source) {
    // A template that never reads `tools` cannot show the model what it may call.
    if (source.find("tools") == std::string_view::npos) return ToolCallStyle::none;
    if (source.find(kHermesOpen) != std::string_view::npos) return ToolCallStyle::hermes;
    if (source.find(kMistralMarker) != std::string_view::npos) return ToolCallStyle::mistral;
    // Llama 3.x writes a past call as {"name": ..., "parameters": ...} and tells the model to answer so.
    if (source.find("\"parameters\": ") != std::string_view::npos && source.find("tool_call") != std::string_view::npos)
        return ToolCallStyle::llama3;
    return ToolCallStyle::none;
}

ParsedReply parse_tool_calls(ToolCallStyle style, std::string_view text) {
    switch (style) {
        case ToolCallStyle::hermes: return parse_hermes(text);
        case ToolCallStyle::llama3: return parse_llama3(text);
        case ToolCallStyle::mistral: return parse_mistral(text);
        case ToolCallStyle::none: break;
    }
    return {std::string(text), {}};
}

size_t settled_content_bytes(ToolCallStyle style, std::string_view text) {
    switch (style) {
        case ToolCallStyle::hermes: return before_marker(text, kHermesOpen);
        case ToolCallStyle::mistral: return before_marker(text, kMistralMarker);
        case ToolCallStyle::llama3: {
            // The call is the whole reply: held while the reply may still be one.
            const std::string_view body = trim(text);
            if (body.empty() || body.starts_with('{') || body.starts_with(kPythonTag) || kPythonTag.starts_with(body)) return 0;
            return text.size();
        }
        case ToolCallStyle::none: break;
    }
    return text.size();
}

}  // namespace hetero
