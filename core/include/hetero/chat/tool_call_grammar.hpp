// What a reply must be when a tool call is required: a call of one of the
// given tools, in the model's format (tool_call_format.hpp), whose arguments
// satisfy that tool's parameter schema. Generation held to it
// (TokenConstraint with the schema and framing) cannot write anything else.
#pragma once

#include <hetero/chat/framed_json_matcher.hpp>
#include <hetero/chat/json_schema_matcher.hpp>
#include <hetero/chat/tool_call_format.hpp>

#include <memory>
#include <string>
#include <vector>

namespace hetero {

struct ToolSpec {
    std::string name;
    std::string parameters;  // the arguments' JSON schema as JSON text; "" = any object
};

struct ToolCallGrammar {
    std::shared_ptr<const JsonSchema> schema;
    JsonFraming framing;
    // Text the format starts with that the mask cannot write (Mistral's
    // [TOOL_CALLS] is a control token): put before the reply to parse it.
    std::string implied_prefix;
};

// `parallel`: several calls may follow one another (as many as the format
// allows); otherwise exactly one. Throws JsonSchemaError when a tool's
// parameters cannot be enforced; the message starts with "tools[i]: ", i
// the tool's index in `tools`. `tools` must not be empty.
ToolCallGrammar tool_call_grammar(ToolCallStyle style, const std::vector<ToolSpec>& tools, bool parallel);

}  // namespace hetero
