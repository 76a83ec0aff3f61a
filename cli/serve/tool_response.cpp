#include "tool_response.hpp"

#include <random>

namespace hetero::serve {

using nlohmann::json;

namespace {

std::string new_call_id() {
    static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::uniform_int_distribution<size_t> pick(0, sizeof kAlphabet - 2);
    std::string id = "call_";
    for (int i = 0; i < 24; ++i) id += kAlphabet[pick(rng)];
    return id;
}

}  // namespace

ParsedReply read_tool_calls(const ToolReading& how, const ToolRequest& tools, const std::string& text) {
    ParsedReply r = parse_tool_calls(how.style, how.implied_prefix + text);
    for (const ToolCall& call : r.calls)
        if (!tools.lists(call.name)) return {text, {}};
    if (r.calls.empty()) r.content = text;  // as generated, without the implied prefix
    // Held to calls, the text after the last whole one is a call cut short (finish_reason says "length").
    else if (how.constrained) r.content.clear();
    if (!tools.parallel && r.calls.size() > 1) r.calls.resize(1);  // parallel_tool_calls: false asks for at most one
    return r;
}

json tool_calls_json(const std::vector<ToolCall>& calls) {
    json list = json::array();
    for (const ToolCall& c : calls)
        list.push_back({{"id", new_call_id()}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    return list;
}

std::vector<json> tool_call_chunks(const ResponseHead& head, const std::vector<ToolCall>& calls) {
    std::vector<json> chunks;
    const json list = tool_calls_json(calls);
    for (size_t i = 0; i < list.size(); ++i) {
        json opening = list[i];
        opening["index"] = i;
        opening["function"]["arguments"] = "";
        chunks.push_back(tool_call_chunk(head, opening));
        chunks.push_back(tool_call_chunk(head, {{"index", i}, {"function", {{"arguments", list[i]["function"]["arguments"]}}}}));
    }
    return chunks;
}

std::string ToolCallStream::push(const std::string& piece) {
    text_ += piece;
    if (how_.constrained) return "";
    const std::string_view rest = std::string_view(text_).substr(released_);
    // A Llama 3 call is the whole reply: once content has gone out, none can follow.
    // Otherwise the text from a (possible) call marker on is held: a marker is at the
    // start of the rest from then on, so nothing more goes out.
    const size_t settled = how_.style == ToolCallStyle::llama3 && released_ > 0 ? rest.size() : settled_content_bytes(how_.style, rest);
    released_ += settled;
    return std::string(rest.substr(0, settled));
}

ParsedReply ToolCallStream::finish() const {
    return read_tool_calls(how_, tools_, text_.substr(released_));
}

}  // namespace hetero::serve
