#include "tool_request.hpp"

#include "openai_request.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace hetero::serve {

using nlohmann::json;

namespace {

// OpenAI's rule for function names.
bool valid_tool_name(const std::string& name) {
    if (name.empty() || name.size() > 64) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

const json* given(const json& j, const char* name) {
    const auto it = j.find(name);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

ToolSpec parse_tool(const json& tool, size_t i) {
    const std::string at = fmt::format("tools[{}]", i);
    if (!tool.is_object()) throw invalid_request(at + " must be an object {\"type\": \"function\", \"function\": {...}}", at);
    const json* type = given(tool, "type");
    if (!type || *type != "function") throw invalid_request(at + ".type must be \"function\" (the only kind of tool there is)", at + ".type");
    const json* function = given(tool, "function");
    if (!function || !function->is_object())
        throw invalid_request(at + ".function must be an object with \"name\" (and \"description\", \"parameters\")", at + ".function");
    const json* name = given(*function, "name");
    if (!name || !name->is_string() || !valid_tool_name(name->get<std::string>()))
        throw invalid_request(at + ".function.name must be 1 to 64 letters, digits, '_' or '-'", at + ".function.name");
    if (const json* d = given(*function, "description"); d && !d->is_string())
        throw invalid_request(at + ".function.description must be a string", at + ".function.description");
    if (const json* s = given(*function, "strict"); s && !s->is_boolean())
        throw invalid_request(at + ".function.strict must be true or false", at + ".function.strict");
    ToolSpec spec{name->get<std::string>(), ""};
    if (const json* p = given(*function, "parameters")) {
        if (!p->is_object()) throw invalid_request(at + ".function.parameters must be a JSON schema object", at + ".function.parameters");
        if (const json* t = given(*p, "type"); t && *t != "object")
            throw invalid_request(at + ".function.parameters must describe an object (\"type\": \"object\")", at + ".function.parameters");
        spec.parameters = p->dump();
    }
    return spec;
}

void parse_choice(const json& choice, ToolRequest& r) {
    const char* bad = "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}";
    if (choice.is_string()) {
        const std::string c = choice.get<std::string>();
        if (c == "none") r.choice = ToolChoice::none;
        else if (c == "auto") r.choice = ToolChoice::automatic;
        else if (c == "required") r.choice = ToolChoice::required;
        else throw invalid_request(bad, "tool_choice");
    } else if (choice.is_object()) {
        const json* type = given(choice, "type");
        const json* function = given(choice, "function");
        const json* name = function && function->is_object() ? given(*function, "name") : nullptr;
        if (!type || *type != "function" || !name || !name->is_string()) throw invalid_request(bad, "tool_choice");
        r.choice = ToolChoice::named;
        r.named = name->get<std::string>();
    } else {
        throw invalid_request(bad, "tool_choice");
    }
    if (r.call_required() && r.tools.empty())
        throw invalid_request("'tool_choice' asks for a tool call, but the request lists no 'tools'", "tool_choice");
    if (r.choice == ToolChoice::named && !r.lists(r.named))
        throw invalid_request(fmt::format("'tool_choice' names the function '{}', which is not in 'tools'", r.named), "tool_choice.function.name");
}

}  // namespace

std::vector<ToolSpec> ToolRequest::callable() const {
    if (choice != ToolChoice::named) return tools;
    std::vector<ToolSpec> one;
    for (const ToolSpec& t : tools)
        if (t.name == named) one.push_back(t);
    return one;
}

bool ToolRequest::lists(const std::string& name) const {
    return std::any_of(tools.begin(), tools.end(), [&](const ToolSpec& t) { return t.name == name; });
}

ToolRequest parse_tool_request(const json& body) {
    ToolRequest r;
    if (const json* tools = given(body, "tools")) {
        if (!tools->is_array()) throw invalid_request("'tools' must be a list of tools", "tools");
        for (size_t i = 0; i < tools->size(); ++i) {
            ToolSpec spec = parse_tool((*tools)[i], i);
            if (r.lists(spec.name))
                throw invalid_request(fmt::format("tools[{}].function.name '{}' is given twice; tool names must be unique", i, spec.name),
                                      fmt::format("tools[{}].function.name", i));
            r.tools.push_back(std::move(spec));
        }
        if (!r.tools.empty()) r.tools_json = tools->dump();
    }
    // OpenAI's default: the model may call when there are tools.
    r.choice = r.tools.empty() ? ToolChoice::none : ToolChoice::automatic;
    if (const json* choice = given(body, "tool_choice")) parse_choice(*choice, r);
    if (const json* parallel = given(body, "parallel_tool_calls")) {
        if (!parallel->is_boolean()) throw invalid_request("'parallel_tool_calls' must be true or false", "parallel_tool_calls");
        r.parallel = parallel->get<bool>();
    }
    return r;
}

}  // namespace hetero::serve
