// How a model writes tool calls, read from its chat template, and the
// parsing of a reply in that format into calls and plain content.
//   hermes   <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>   (Qwen 2.5, Hermes)
//   llama3   {"name": ..., "parameters": {...}}                            (Llama 3.1 / 3.2, the whole reply)
//   mistral  [TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]         (Mistral)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

enum class ToolCallStyle { none, hermes, llama3, mistral };

const char* tool_call_style_name(ToolCallStyle style);  // "none", "hermes", ...

// The format a template renders tool calls in: none when the template
// never reads `tools` or writes calls in no format known here.
ToolCallStyle detect_tool_call_style(std::string_view template_source);

struct ToolCall {
    std::string name;
    std::string arguments;  // a JSON object, compact, keys in the order written
};

struct ParsedReply {
    std::string content;  // the text that is no call (trimmed when there are calls)
    std::vector<ToolCall> calls;
};

// Splits a reply into calls and content. A marker whose call is malformed
// (no closing tag, JSON that does not parse, no name or no arguments
// object) is left in the content as written.
ParsedReply parse_tool_calls(ToolCallStyle style, std::string_view text);

// How many leading bytes of a reply being generated are content for sure:
// the text before the start of a call, or before what may still grow into
// a call marker. The rest is held until more text (or the end) decides.
size_t settled_content_bytes(ToolCallStyle style, std::string_view text);

}  // namespace hetero
