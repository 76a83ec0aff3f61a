#include "chat_messages.hpp"

#include "openai_request.hpp"

#include <fmt/format.h>

#include <map>

namespace hetero::serve {

using nlohmann::json;
using ojson = nlohmann::ordered_json;  // keeps the client's key order for the template

namespace {

const json* given(const json& j, const char* name) {
    const auto it = j.find(name);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

// Message content: a string, or a list of parts of which the text ones count.
std::string content_text(const json& content, const std::string& param) {
    if (content.is_null()) return "";
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) throw invalid_request(param + " must be a string or a list of content parts", param);
    std::string text;
    for (const json& part : content) {
        if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
            throw invalid_request(param + ": every content part needs a 'type'", param);
        if (part["type"] != "text") throw invalid_request(fmt::format("{}: content parts of type '{}' are not supported", param, part["type"].get<std::string>()), param);
        if (!part.contains("text") || !part["text"].is_string()) throw invalid_request(param + ": a text part needs 'text'", param);
        text += part["text"].get<std::string>();
    }
    return text;
}

// One entry of an assistant message's tool_calls; records its id and name in `calls`.
ojson tool_call(const json& call, const std::string& at, std::map<std::string, std::string>& calls) {
    if (!call.is_object()) throw invalid_request(at + " must be an object {\"id\", \"type\": \"function\", \"function\": {...}}", at);
    const json* id = given(call, "id");
    if (!id || !id->is_string() || id->get<std::string>().empty()) throw invalid_request(at + ".id must be a non-empty string", at + ".id");
    if (const json* type = given(call, "type"); type && *type != "function") throw invalid_request(at + ".type must be \"function\"", at + ".type");
    const json* function = given(call, "function");
    if (!function || !function->is_object())
        throw invalid_request(at + ".function must be an object with \"name\" and \"arguments\"", at + ".function");
    const json* name = given(*function, "name");
    if (!name || !name->is_string() || name->get<std::string>().empty())
        throw invalid_request(at + ".function.name must be a non-empty string", at + ".function.name");
    // Arguments travel as JSON text; templates write them back with tojson, so they go in as the object.
    const json* arguments = given(*function, "arguments");
    ojson object = arguments && arguments->is_string() ? ojson::parse(arguments->get<std::string>(), nullptr, false) : ojson();
    if (arguments && arguments->is_object()) object = ojson::parse(arguments->dump());
    if (!object.is_object())
        throw invalid_request(at + ".function.arguments must be a string holding a JSON object", at + ".function.arguments");
    if (calls.count(id->get<std::string>()))
        throw invalid_request(fmt::format("{}.id '{}' is used by an earlier tool call", at, id->get<std::string>()), at + ".id");
    calls[id->get<std::string>()] = name->get<std::string>();
    return {{"id", id->get<std::string>()}, {"type", "function"}, {"function", {{"name", name->get<std::string>()}, {"arguments", object}}}};
}

}  // namespace

ChatMessages parse_chat_messages(const json& messages) {
    ChatMessages out;
    std::map<std::string, std::string> calls;  // tool call id -> function name, of the calls so far
    for (size_t i = 0; i < messages.size(); ++i) {
        const json& m = messages[i];
        const std::string at = fmt::format("messages[{}]", i);
        if (!m.is_object()) throw invalid_request(at + " must be an object", at);
        const json* role = given(m, "role");
        if (!role || !role->is_string()) throw invalid_request(at + ".role is required and must be a string", at + ".role");
        const std::string r = role->get<std::string>();
        for (const auto& [key, value] : m.items()) {
            const bool known = key == "role" || key == "content" || (key == "tool_calls" && r == "assistant") ||
                               ((key == "tool_call_id" || key == "name") && r == "tool");
            if (!known && !value.is_null())
                throw invalid_request(fmt::format("{}.{} is not supported by this server (role, content; tool_calls on assistant "
                                                  "messages; tool_call_id on tool messages)", at, key),
                                      fmt::format("{}.{}", at, key));
        }
        const auto content = m.find("content");
        const std::string text = content_text(content == m.end() ? json() : *content, at + ".content");
        out.plain.push_back({r, text});
        ojson entry = {{"role", r}, {"content", text}};
        if (const json* tool_calls = given(m, "tool_calls")) {
            if (!tool_calls->is_array() || tool_calls->empty())
                throw invalid_request(at + ".tool_calls must be a non-empty list of calls", at + ".tool_calls");
            ojson list = ojson::array();
            for (size_t j = 0; j < tool_calls->size(); ++j) list.push_back(tool_call((*tool_calls)[j], fmt::format("{}.tool_calls[{}]", at, j), calls));
            if (content == m.end() || content->is_null()) entry["content"] = nullptr;
            entry["tool_calls"] = std::move(list);
            out.has_tool_turns = true;
        }
        if (r == "tool") {
            const json* id = given(m, "tool_call_id");
            if (!id || !id->is_string()) throw invalid_request(at + ".tool_call_id is required on a tool message (the id of the call it answers)", at + ".tool_call_id");
            const auto call = calls.find(id->get<std::string>());
            if (call == calls.end())
                throw invalid_request(fmt::format("{}.tool_call_id '{}' answers no tool call of an earlier assistant message", at, id->get<std::string>()),
                                      at + ".tool_call_id");
            if (const json* name = given(m, "name"); name && !name->is_string()) throw invalid_request(at + ".name must be a string", at + ".name");
            entry["tool_call_id"] = id->get<std::string>();
            entry["name"] = call->second;
            out.has_tool_turns = true;
        }
        out.for_template.push_back(std::move(entry));
    }
    return out;
}

}  // namespace hetero::serve
