#include <hetero/chat/tool_call_grammar.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hetero {

using nlohmann::json;

namespace {

// Parallel calls in a format that repeats a framed call: a bound on how many,
// so that a model that never stops calling still ends.
constexpr size_t kMaxParallelCalls = 16;

// {"name": <this tool>, <arguments_key>: <its parameters>}, nothing else.
json call_schema(const ToolSpec& tool, const char* arguments_key) {
    json parameters = tool.parameters.empty() ? json{{"type", "object"}} : json::parse(tool.parameters);
    return {{"type", "object"},
            {"properties", {{"name", {{"type", "string"}, {"const", tool.name}}}, {arguments_key, parameters}}},
            {"required", {"name", arguments_key}},
            {"additionalProperties", false}};
}

json any_call_schema(const std::vector<ToolSpec>& tools, const char* arguments_key) {
    if (tools.size() == 1) return call_schema(tools[0], arguments_key);
    json alternatives = json::array();
    for (const ToolSpec& tool : tools) alternatives.push_back(call_schema(tool, arguments_key));
    return {{"anyOf", alternatives}};
}

}  // namespace

ToolCallGrammar tool_call_grammar(ToolCallStyle style, const std::vector<ToolSpec>& tools, bool parallel) {
    if (tools.empty()) throw JsonSchemaError("a tool call needs at least one tool to call");
    // Each tool's parameters alone first, so that an error names the tool and a path within its schema.
    for (size_t i = 0; i < tools.size(); ++i) {
        try {
            if (!tools[i].parameters.empty()) JsonSchema::compile(tools[i].parameters);
        } catch (const JsonSchemaError& e) {
            throw JsonSchemaError(fmt::format("tools[{}]: {}", i, e.what()));
        }
    }
    ToolCallGrammar g;
    json schema;
    switch (style) {
        case ToolCallStyle::hermes:
            schema = any_call_schema(tools, "arguments");
            g.framing = {"<tool_call>\n", "\n</tool_call>", "\n", parallel ? kMaxParallelCalls : 1};
            break;
        case ToolCallStyle::llama3:  // one call: the templates refuse more than one in a turn
            schema = any_call_schema(tools, "parameters");
            break;
        case ToolCallStyle::mistral:
            schema = {{"type", "array"}, {"items", any_call_schema(tools, "arguments")}, {"minItems", 1}};
            if (!parallel) schema["maxItems"] = 1;
            g.implied_prefix = "[TOOL_CALLS]";
            break;
        case ToolCallStyle::none:
            throw JsonSchemaError("the chat template has no tool-call format");
    }
    g.schema = JsonSchema::compile(schema.dump());
    return g;
}

}  // namespace hetero
