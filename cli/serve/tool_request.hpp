// A chat request's tools, as OpenAI defines them:
//   tools                [{"type": "function", "function": {"name", "description", "parameters"}}]
//   tool_choice          "none" | "auto" | "required" | {"type": "function", "function": {"name": ...}}
//   parallel_tool_calls  true (default) or false
// Every malformed piece is a 400 whose param names it ("tools[1].function.name").
#pragma once

#include <hetero/chat/tool_call_grammar.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace hetero::serve {

enum class ToolChoice { none, automatic, required, named };

struct ToolRequest {
    std::vector<ToolSpec> tools;
    std::string tools_json;  // the tools as given, for the chat template; "" = none
    ToolChoice choice = ToolChoice::none;
    std::string named;       // the tool tool_choice names (ToolChoice::named)
    bool parallel = true;

    // The reply must be a call (constrained while it is generated).
    bool call_required() const { return choice == ToolChoice::required || choice == ToolChoice::named; }
    // The reply is read for calls: constrained to them, or parsed after.
    bool reads_calls() const { return choice != ToolChoice::none && !tools.empty(); }
    // The tools a required call may use: the named one, or all.
    std::vector<ToolSpec> callable() const;
    bool lists(const std::string& name) const;
};

ToolRequest parse_tool_request(const nlohmann::json& body);

}  // namespace hetero::serve
