#include "embedding_request.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>

namespace hetero::serve {

using nlohmann::json;

namespace {

// Token ids of input `index` (`where` names it in errors).
std::vector<int32_t> token_ids(const json& v, const std::string& where) {
    if (v.empty()) throw invalid_request(fmt::format("{} is an empty array of token ids", where), "input");
    std::vector<int32_t> ids;
    ids.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        const json& t = v[i];
        if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
            throw invalid_request(fmt::format("{}[{}] is not a token id (a non-negative integer)", where, i), "input");
        ids.push_back(int32_t(t.get<int64_t>()));
    }
    return ids;
}

EmbeddingInput text_input(const json& v, const std::string& where) {
    if (v.get_ref<const std::string&>().empty()) throw invalid_request(fmt::format("{} is an empty string", where), "input");
    return {true, v.get<std::string>(), {}};
}

std::vector<EmbeddingInput> parse_inputs(const json* input) {
    if (!input) throw invalid_request("'input' is required", "input");
    if (input->is_string()) return {text_input(*input, "'input'")};
    if (!input->is_array())
        throw invalid_request("'input' must be a string, an array of strings, an array of token ids or an array of arrays of token ids", "input");
    if (input->empty()) throw invalid_request("'input' is an empty array", "input");
    if (input->size() > kMaxEmbeddingInputs)
        throw invalid_request(fmt::format("'input' has {} items; at most {} are embedded per request", input->size(), kMaxEmbeddingInputs), "input");
    // An array of integers is one input of token ids.
    if (input->front().is_number()) return {{false, "", token_ids(*input, "'input'")}};
    std::vector<EmbeddingInput> out;
    for (size_t i = 0; i < input->size(); ++i) {
        const json& item = (*input)[i];
        const std::string where = fmt::format("'input'[{}]", i);
        if (item.is_string())
            out.push_back(text_input(item, where));
        else if (item.is_array())
            out.push_back({false, "", token_ids(item, where)});
        else
            throw invalid_request(fmt::format("{} must be a string or an array of token ids", where), "input");
    }
    return out;
}

}  // namespace

EmbeddingRequest parse_embedding_request(const std::string& body) {
    const json j = json::parse(body, nullptr, false);
    if (j.is_discarded()) throw invalid_request("the request body is not valid JSON");
    if (!j.is_object()) throw invalid_request("the request body must be a JSON object");
    for (const auto& [key, value] : j.items())
        if (key != "input" && key != "model" && key != "encoding_format" && key != "dimensions" && key != "user")
            throw invalid_request(fmt::format("'{}' is not a field of an embeddings request (input, model, encoding_format, dimensions, user)", key),
                                  key);
    const auto field = [&](const char* name) -> const json* {
        const auto it = j.find(name);
        return it == j.end() || it->is_null() ? nullptr : &*it;
    };
    EmbeddingRequest r;
    const json* model = field("model");
    if (!model) throw invalid_request("'model' is required", "model");
    if (!model->is_string()) throw invalid_request("'model' must be a string", "model");
    r.model = model->get<std::string>();
    r.inputs = parse_inputs(field("input"));
    if (const json* format = field("encoding_format")) {
        if (!format->is_string() || (*format != "float" && *format != "base64"))
            throw invalid_request("'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
        r.base64 = *format == "base64";
    }
    if (const json* dims = field("dimensions")) {
        if (!dims->is_number_integer() || dims->get<int64_t>() < 1)
            throw invalid_request("'dimensions' must be a positive integer", "dimensions");
        r.dimensions = dims->get<int64_t>();
    }
    if (const json* user = field("user"); user && !user->is_string()) throw invalid_request("'user' must be a string", "user");
    return r;
}

}  // namespace hetero::serve
