// GPT-2-style BPE vocabularies from tokenizer.json (Llama 3, Qwen, Phi-4,
// Gemma 3 without tokenizer.model): tokens by id, added tokens typed as
// llama.cpp's converter types them, the merges, and the pre-tokenizer named
// from its split expression.
#include "hf_json.hpp"
#include "hf_vocab.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <map>

namespace hetero::model_detail {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The split expressions of the pre-tokenizers hetero implements, as
// tokenizer.json spells them, and the tokenizer.ggml.pre name of each.
const std::map<std::string, std::string>& known_splits() {
    static const std::map<std::string, std::string> m = {
        {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)", "llama-bpe"},
        {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)", "qwen2"},
    };
    return m;
}

const json* field(const json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

// tokenizer.ggml.pre for a tokenizer.json pre_tokenizer: a byte-level
// tokenizer alone is GPT-2's; a split by a known expression before it names
// that expression's pre-tokenizer. Anything else is refused (hetero would
// split the text differently from the model's own tokenizer).
std::string pre_tokenizer_name(const json& tok, const std::string& path) {
    const json* pre = field(tok, "pre_tokenizer");
    if (!pre) throw Error(fmt::format("{}: no pre_tokenizer: hetero cannot tell how this tokenizer splits text", path));
    std::vector<json> steps;
    if (const json* type = field(*pre, "type"); type && *type == "Sequence") {
        const json* list = field(*pre, "pretokenizers");
        if (!list || !list->is_array()) throw Error(fmt::format("{}: pre_tokenizer Sequence without a pretokenizers list", path));
        steps.assign(list->begin(), list->end());
    } else {
        steps.push_back(*pre);
    }
    std::string split;
    bool byte_level = false, byte_level_regex = false;
    for (const json& s : steps) {
        const json* type = field(s, "type");
        if (type && *type == "ByteLevel") {
            byte_level = true;
            byte_level_regex = !field(s, "use_regex") || (*field(s, "use_regex") == true);
            if (const json* prefix = field(s, "add_prefix_space"); prefix && *prefix == true)
                throw Error(fmt::format("{}: a ByteLevel pre-tokenizer that adds a prefix space is not one hetero implements", path));
        } else if (type && *type == "Split" && split.empty()) {
            const json* pattern = field(s, "pattern");
            const json* regex = pattern ? field(*pattern, "Regex") : nullptr;
            if (!regex || !regex->is_string()) throw Error(fmt::format("{}: a Split pre-tokenizer without a Regex pattern", path));
            split = regex->get<std::string>();
        } else {
            throw Error(fmt::format("{}: pre-tokenizer step {} is not one hetero implements", path, type ? type->dump() : "without a type"));
        }
    }
    if (!byte_level) throw Error(fmt::format("{}: the pre-tokenizer is not byte-level: not a GPT-2-style BPE tokenizer", path));
    if (split.empty() && byte_level_regex) return "gpt-2";
    const auto it = known_splits().find(split);
    if (it == known_splits().end() || byte_level_regex)
        throw Error(fmt::format("{}: pre-tokenizer expression '{}' is not one hetero implements (Llama 3's, Qwen2's or GPT-2's)", path,
                                split.size() > 120 ? split.substr(0, 117) + "..." : split));
    return it->second;
}

}  // namespace

GgufVocabulary read_bpe_vocabulary(const std::string& dir, const HfConfig& config) {
    const std::string path = (fs::path(dir) / "tokenizer.json").string();
    if (!fs::is_regular_file(path)) throw Error(fmt::format("{}: no tokenizer.json and no tokenizer.model: the model has no tokenizer to convert", dir));
    const json tok = read_json_file(path);
    const json* model = field(tok, "model");
    if (!model || !model->is_object()) throw Error(fmt::format("{}: no 'model' object", path));
    const json* type = field(*model, "type");
    if (!type || *type != "BPE")
        throw Error(fmt::format("{}: tokenizer model {} is not BPE: hetero converts BPE tokenizer.json files and SentencePiece "
                                "tokenizer.model files",
                                path, type ? type->dump() : "(none)"));
    if (const json* fallback = field(*model, "byte_fallback"); fallback && *fallback == true)
        throw Error(fmt::format("{}: a SentencePiece-style BPE (byte fallback) without tokenizer.model: put the model's "
                                "tokenizer.model beside it",
                                path));
    const json* vocab = field(*model, "vocab");
    if (!vocab || !vocab->is_object()) throw Error(fmt::format("{}: model.vocab is not an object of token -> id", path));

    const size_t n = size_t(config.n_vocab);
    std::vector<std::string> by_id(n);
    std::vector<bool> present(n, false), added(n, false), special(n, false);
    auto place = [&](const std::string& text, const json& id, const char* where) {
        if (!id.is_number_unsigned())
            throw Error(fmt::format("{}: {} token '{}' has an id that is not a non-negative integer", path, where, text));
        const uint64_t i = id.get<uint64_t>();
        if (i >= n) throw Error(fmt::format("{}: {} token '{}' has id {}, but config.json's vocab_size is {}", path, where, text, i, n));
        by_id[i] = text;
        present[i] = true;
        return size_t(i);
    };
    for (const auto& [text, id] : vocab->items()) place(text, id, "model.vocab");
    if (const json* list = field(tok, "added_tokens")) {
        if (!list->is_array()) throw Error(fmt::format("{}: 'added_tokens' is not an array", path));
        for (const json& a : *list) {
            const json* content = field(a, "content");
            const json* id = field(a, "id");
            if (!content || !content->is_string() || !id) throw Error(fmt::format("{}: an added token without content and id", path));
            const size_t i = place(content->get<std::string>(), *id, "added");
            added[i] = true;
            special[i] = json_bool(a, "special", path).value_or(false);
        }
    }

    GgufVocabulary v;
    v.model = "gpt2";
    v.pre = pre_tokenizer_name(tok, path);
    for (size_t i = 0; i < n; ++i) {
        if (!present[i]) {
            v.tokens.push_back(fmt::format("[PAD{}]", i));
            v.types.push_back(kTokUnused);
        } else if (added[i]) {
            std::string text = by_id[i];
            if (special[i] || token_looks_special(text)) {
                v.types.push_back(kTokControl);
            } else {
                // User-defined spaces, pre-normalized (as for Gemma's).
                for (size_t at = text.find("\xE2\x96\x81"); at != std::string::npos; at = text.find("\xE2\x96\x81", at + 1))
                    text.replace(at, 3, " ");
                v.types.push_back(kTokUserDefined);
            }
            v.tokens.push_back(std::move(text));
        } else {
            v.tokens.push_back(by_id[i]);
            v.types.push_back(kTokNormal);
        }
    }
    SpecialTokens s = read_special_tokens(dir, true, std::nullopt);
    if (s.merges.empty()) throw Error(fmt::format("{}: model.merges is missing or empty: a BPE vocabulary needs its merges", path));
    v.merges = std::move(s.merges);
    v.special_ids = std::move(s.ids);
    v.add_special = std::move(s.add);
    v.chat_template = std::move(s.chat_template);
    v.named_chat_templates = std::move(s.named_chat_templates);
    return v;
}

}  // namespace hetero::model_detail
