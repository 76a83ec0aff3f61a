#include "response_format.hpp"

#include "openai_request.hpp"

#include <mutex>

namespace hetero::serve {

std::shared_ptr<const JsonSchema> parse_response_format(const nlohmann::json& format) {
    const auto bad = [](const std::string& what) { return invalid_request("'response_format' " + what, "response_format"); };
    if (!format.is_object() || !format.contains("type") || !format["type"].is_string())
        throw bad("must be an object with a \"type\": \"text\", \"json_object\" or \"json_schema\"");
    const std::string type = format["type"].get<std::string>();
    if (type == "text") return nullptr;
    if (type == "json_object") return JsonSchema::any_object();
    if (type != "json_schema") throw bad("type \"" + type + "\" is not one of text, json_object, json_schema");
    if (!format.contains("json_schema") || !format["json_schema"].is_object())
        throw bad("of type json_schema needs \"json_schema\": {\"name\": ..., \"schema\": {...}}");
    const nlohmann::json& spec = format["json_schema"];
    if (!spec.contains("name") || !spec["name"].is_string()) throw bad("json_schema.name is missing or not a string");
    if (spec.contains("strict") && !spec["strict"].is_boolean()) throw bad("json_schema.strict must be true or false");
    // Without a schema OpenAI takes any JSON; with one, it is enforced whether "strict" is set or not.
    if (!spec.contains("schema")) return JsonSchema::compile("{}");
    try {
        return JsonSchema::compile(spec["schema"].dump());
    } catch (const JsonSchemaError& e) {
        throw bad(std::string("json_schema.schema: ") + e.what());
    }
}

std::shared_ptr<const TokenTrie> served_token_trie(const Tokenizer& tokenizer) {
    static std::mutex mutex;
    static const Tokenizer* built_for = nullptr;
    static std::shared_ptr<const TokenTrie> trie;
    std::lock_guard<std::mutex> lock(mutex);
    if (built_for != &tokenizer || !trie) {
        trie = std::make_shared<const TokenTrie>(tokenizer);
        built_for = &tokenizer;
    }
    return trie;
}

}  // namespace hetero::serve
