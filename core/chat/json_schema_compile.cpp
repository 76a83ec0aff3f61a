// JSON schema -> JsonSchema nodes (the subset json_schema_matcher.hpp names).
#include <hetero/chat/json_schema_matcher.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace hetero {

class JsonSchemaCompiler {
public:
    explicit JsonSchemaCompiler(const nlohmann::json& root) : root_(root) {
        out_ = std::make_shared<JsonSchema>();
        out_->nodes_.push_back({});  // kAny
    }

    std::shared_ptr<const JsonSchema> run() {
        out_->root_ = compile(root_, "(root)");
        return out_;
    }

private:
    using json = nlohmann::json;

    [[noreturn]] static void fail(const std::string& path, const std::string& what) {
        throw JsonSchemaError(fmt::format("response schema: {}: {}", path, what));
    }

    static std::string join(const std::string& path, const std::string& key) { return path == "(root)" ? key : path + "." + key; }

    static uint64_t count(const json& j, const std::string& key, const std::string& path) {
        const json& v = j.at(key);
        if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
            fail(join(path, key), "must be a non-negative integer");
        return v.get<uint64_t>();
    }

    static uint32_t type_bit(const json& t, const std::string& path) {
        static const std::map<std::string, uint32_t> bits = {
            {"object", JsonSchema::kObject}, {"array", JsonSchema::kArray},     {"string", JsonSchema::kString}, {"number", JsonSchema::kNumber},
            {"integer", JsonSchema::kInteger}, {"boolean", JsonSchema::kBoolean}, {"null", JsonSchema::kNull}};
        const auto it = t.is_string() ? bits.find(t.get<std::string>()) : bits.end();
        if (it == bits.end()) fail(path, fmt::format("{} is not a JSON type (object, array, string, number, integer, boolean, null)", t.dump()));
        // "number" admits integers too.
        return it->second == JsonSchema::kNumber ? (JsonSchema::kNumber | JsonSchema::kInteger) : it->second;
    }

    // Keywords read below, those that only annotate, and the rest refused.
    static void check_keywords(const json& j, const std::string& path) {
        static const std::set<std::string> enforced = {"type",     "properties", "required", "additionalProperties", "items", "minItems",
                                                       "maxItems", "minLength",  "maxLength", "enum",                "const", "anyOf",
                                                       "oneOf",    "$ref",       "$defs",     "definitions"};
        // Annotations (JSON Schema 2020-12 treats "format" as one unless a
        // validator opts into asserting it).
        static const std::set<std::string> annotations = {"title",    "description", "default",    "examples",   "$schema", "$id",
                                                          "$comment", "format",      "deprecated", "readOnly", "writeOnly"};
        for (auto it = j.begin(); it != j.end(); ++it)
            if (!enforced.count(it.key()) && !annotations.count(it.key()))
                fail(join(path, it.key()), "is not enforced during generation, so it is refused (enforced: type, properties, required, "
                                           "additionalProperties, items, minItems, maxItems, minLength, maxLength, enum, const, anyOf, "
                                           "oneOf, $ref to $defs)");
    }

    int add_node() {
        out_->nodes_.push_back({});
        return int(out_->nodes_.size()) - 1;
    }

    int compile(const json& j, const std::string& path) {
        if (j.is_boolean()) {
            if (j.get<bool>()) return JsonSchema::kAny;
            fail(path, "the schema false admits nothing");
        }
        if (!j.is_object()) fail(path, "a schema must be an object or true");
        if (++depth_ > 64) fail(path, "nested more than 64 deep");
        check_keywords(j, path);
        int index;
        if (j.contains("$ref")) index = reference(j, path);
        else index = compile_node(j, path);
        --depth_;
        return index;
    }

    int reference(const json& j, const std::string& path) {
        for (auto it = j.begin(); it != j.end(); ++it)
            if (it.key() != "$ref" && it.key() != "title" && it.key() != "description" && it.key() != "$defs" && it.key() != "definitions")
                fail(join(path, it.key()), "beside $ref is not supported");
        const json& ref = j.at("$ref");
        if (!ref.is_string()) fail(join(path, "$ref"), "must be a string");
        const std::string target = ref.get<std::string>();
        if (const auto it = refs_.find(target); it != refs_.end()) return it->second;
        if (target != "#" && target.rfind("#/", 0) != 0) fail(join(path, "$ref"), fmt::format("\"{}\": only references inside this schema (#/...)", target));
        const json* at = &root_;
        try {
            if (target != "#") at = &root_.at(json::json_pointer(target.substr(1)));
        } catch (const json::exception&) {
            fail(join(path, "$ref"), fmt::format("\"{}\" points nowhere in the schema", target));
        }
        // Reserved before compiling the target, so a recursive schema refers to itself.
        const int index = add_node();
        refs_[target] = index;
        const int body = compile(*at, target);
        out_->nodes_[size_t(index)] = out_->nodes_[size_t(body)];
        return index;
    }

    int compile_node(const json& j, const std::string& path) {
        JsonSchema::Node n;
        if (j.contains("type")) {
            const json& t = j.at("type");
            n.types = 0;
            if (t.is_array()) {
                if (t.empty()) fail(join(path, "type"), "an empty list admits nothing");
                for (const json& e : t) n.types |= type_bit(e, join(path, "type"));
            } else {
                n.types = type_bit(t, join(path, "type"));
            }
        }
        if (j.contains("enum")) {
            if (!j.at("enum").is_array() || j.at("enum").empty()) fail(join(path, "enum"), "must be a non-empty array");
            for (const json& v : j.at("enum")) n.literals.push_back(v.dump());
        }
        if (j.contains("const")) n.literals = {j.at("const").dump()};
        for (const char* key : {"anyOf", "oneOf"}) {
            if (!j.contains(key)) continue;
            // Alternatives carry every constraint themselves (the way pydantic writes Optional[...]).
            for (const char* other : {"type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "minLength",
                                      "maxLength", "enum", "const", key == std::string("anyOf") ? "oneOf" : "anyOf"})
                if (j.contains(other)) fail(join(path, other), fmt::format("beside {} is not supported: move it into the alternatives", key));
            const json& alts = j.at(key);
            if (!alts.is_array() || alts.empty()) fail(join(path, key), "must be a non-empty array of schemas");
            for (size_t i = 0; i < alts.size(); ++i) n.any_of.push_back(compile(alts[i], fmt::format("{}[{}]", join(path, key), i)));
        }
        if (j.contains("minLength")) n.min_length = count(j, "minLength", path);
        if (j.contains("maxLength")) n.max_length = count(j, "maxLength", path);
        if (j.contains("minItems")) n.min_items = count(j, "minItems", path);
        if (j.contains("maxItems")) n.max_items = count(j, "maxItems", path);
        if (n.min_length > n.max_length) fail(join(path, "minLength"), "exceeds maxLength");
        if (n.min_items > n.max_items) fail(join(path, "minItems"), "exceeds maxItems");
        if (j.contains("items")) {
            if (j.at("items").is_array()) fail(join(path, "items"), "a list of item schemas (a tuple) is not supported");
            n.items = compile(j.at("items"), join(path, "items"));
        }
        object_keywords(j, path, n);
        const int index = add_node();
        out_->nodes_[size_t(index)] = std::move(n);
        return index;
    }

    void object_keywords(const json& j, const std::string& path, JsonSchema::Node& n) {
        if (j.contains("properties")) {
            const json& props = j.at("properties");
            if (!props.is_object()) fail(join(path, "properties"), "must be an object of schemas");
            if (props.size() > 64) fail(join(path, "properties"), "more than 64 properties");
            for (auto it = props.begin(); it != props.end(); ++it) {
                for (char c : it.key())
                    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
                        fail(join(path, "properties"), fmt::format("the name {} needs escaping in JSON: not supported", json(it.key()).dump()));
                n.properties.push_back({it.key(), compile(it.value(), join(join(path, "properties"), it.key())), false});
            }
        }
        if (j.contains("required")) {
            const json& req = j.at("required");
            if (!req.is_array()) fail(join(path, "required"), "must be an array of property names");
            for (const json& r : req) {
                bool found = false;
                for (JsonSchema::Property& p : n.properties)
                    if (r.is_string() && p.name == r.get<std::string>()) found = p.required = true;
                if (!found) fail(join(path, "required"), fmt::format("{} is not one of the properties", r.dump()));
            }
        }
        if (j.contains("additionalProperties")) {
            const json& a = j.at("additionalProperties");
            n.additional = a.is_boolean() && !a.get<bool>() ? -1 : compile(a, join(path, "additionalProperties"));
        }
    }

    const json& root_;
    std::shared_ptr<JsonSchema> out_;
    std::map<std::string, int> refs_;
    int depth_ = 0;
};

std::shared_ptr<const JsonSchema> JsonSchema::compile(std::string_view schema_json) {
    nlohmann::json schema;
    try {
        schema = nlohmann::json::parse(schema_json);
    } catch (const nlohmann::json::parse_error& e) {
        throw JsonSchemaError(fmt::format("response schema: not JSON: {}", e.what()));
    }
    return JsonSchemaCompiler(schema).run();
}

std::shared_ptr<const JsonSchema> JsonSchema::any_object() { return compile(R"({"type": "object"})"); }

}  // namespace hetero
