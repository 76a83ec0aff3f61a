// A reply read for tool calls, whole or as it streams: calls in the model's
// format become OpenAI's tool_calls, the rest stays content.
#pragma once

#include "openai_response.hpp"
#include "tool_request.hpp"

#include <hetero/chat/tool_call_format.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace hetero::serve {

// How a reply is read for calls.
struct ToolReading {
    ToolCallStyle style = ToolCallStyle::none;
    bool constrained = false;    // the reply was held to calls: all of it is held back while streaming
    std::string implied_prefix;  // put before the reply to parse it (tool_call_grammar.hpp)
};

// The calls in `text`; when one of them names a tool the request does not
// list, none of it counts as a call and all of it is content. With
// parallel_tool_calls false only the first call is kept. When the reply was
// held to calls, text after the last whole call (one cut short by
// max_tokens) is no content.
ParsedReply read_tool_calls(const ToolReading& how, const ToolRequest& tools, const std::string& text);

// [{"id": "call_…", "type": "function", "function": {"name", "arguments"}}], each with a new id.
nlohmann::json tool_calls_json(const std::vector<ToolCall>& calls);

// The stream chunks that send `calls` as OpenAI streams them: per call, one
// chunk with its index, id, type, name and empty arguments, then one with the arguments.
std::vector<nlohmann::json> tool_call_chunks(const ResponseHead& head, const std::vector<ToolCall>& calls);

// Text streamed through it comes out as the content that is settled; what
// may be (or is) a call is held until the end.
class ToolCallStream {
public:
    ToolCallStream(ToolReading how, ToolRequest tools) : how_(std::move(how)), tools_(std::move(tools)) {}
    // The content to send now (possibly empty).
    std::string push(const std::string& piece);
    // At the reply's end: the content still to send, and the calls.
    ParsedReply finish() const;

private:
    ToolReading how_;
    ToolRequest tools_;  // a copy: the stream outlives the request it was parsed from
    std::string text_;
    size_t released_ = 0;
};

}  // namespace hetero::serve
