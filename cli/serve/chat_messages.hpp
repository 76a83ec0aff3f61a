// A chat request's messages: role and content, and, for tool calling,
// assistant messages with "tool_calls" (content may then be null) and
// "tool" messages answering a call by its "tool_call_id".
#pragma once

#include <hetero/chat/chat_template.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace hetero::serve {

struct ChatMessages {
    std::vector<ChatMessage> plain;  // role and text of each message
    // The messages as a template's render_json takes them: call arguments as
    // objects, each tool message with the "name" of the call it answers.
    nlohmann::ordered_json for_template = nlohmann::ordered_json::array();
    bool has_tool_turns = false;  // some message carries tool calls or a tool's result
};

// Throws ApiError (400) naming the field at fault ("messages[2].tool_calls[0].function.arguments").
ChatMessages parse_chat_messages(const nlohmann::json& messages);

}  // namespace hetero::serve
