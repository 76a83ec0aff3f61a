// Which tokenizer files make an architecture's vocabulary (llama.cpp's
// set_vocab per model class), the SentencePiece vocabularies, and the GGUF
// keys they are written as.
#include "hf_vocab.hpp"

#include "hf_json.hpp"
#include "sentencepiece_model.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace hetero::model_detail {

namespace {

namespace fs = std::filesystem;

const std::string kSpaceMark = "\xE2\x96\x81";  // SentencePiece's word marker, U+2581

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

int32_t type_of_piece(int32_t sp_type) {
    switch (sp_type) {
        case SentencePiece::kUnknown: return kTokUnknown;
        case SentencePiece::kControl: return kTokControl;
        case SentencePiece::kUnused: return kTokUnused;
        case SentencePiece::kByte: return kTokByte;
        default: return kTokNormal;  // user-defined pieces too, as llama.cpp's converter writes them
    }
}

// The vocabulary sized to config.json's vocab_size: every id a token, the
// ones no file names "[PADn]" and unused.
GgufVocabulary padded(size_t n) {
    GgufVocabulary v;
    v.model = "llama";
    v.pre = "default";
    for (size_t i = 0; i < n; ++i) v.tokens.push_back(fmt::format("[PAD{}]", i));
    v.scores.assign(n, -10000.f);
    v.types.assign(n, kTokUnused);
    return v;
}

std::string require_file(const std::string& dir, const std::string& name, const std::string& why) {
    const std::string p = (fs::path(dir) / name).string();
    if (!fs::is_regular_file(p)) throw Error(fmt::format("{}: no {} ({})", dir, name, why));
    return p;
}

// added_tokens.json: {"text": id}; each becomes a user-defined token.
void apply_added_tokens_json(const std::string& dir, GgufVocabulary& v, bool ids_must_fit) {
    const std::string p = (fs::path(dir) / "added_tokens.json").string();
    if (!fs::is_regular_file(p)) return;
    const nlohmann::json j = read_json_file(p);
    if (!j.is_object()) throw Error(fmt::format("{}: not a JSON object", p));
    for (const auto& [text, id] : j.items()) {
        if (!id.is_number_unsigned()) throw Error(fmt::format("{}: the id of '{}' is not a non-negative integer", p, text));
        const uint64_t i = id.get<uint64_t>();
        if (i >= v.tokens.size()) {
            if (ids_must_fit) throw Error(fmt::format("{}: token '{}' has id {}, outside the vocabulary of {}", p, text, i, v.tokens.size()));
            continue;
        }
        v.tokens[i] = text;
        v.scores[i] = -1000.f;
        v.types[i] = kTokUserDefined;
    }
}

void apply_special(GgufVocabulary& v, SpecialTokens s) {
    v.merges = std::move(s.merges);
    v.special_ids = std::move(s.ids);
    v.add_special = std::move(s.add);
    v.chat_template = std::move(s.chat_template);
    v.named_chat_templates = std::move(s.named_chat_templates);
}

}  // namespace

bool token_looks_special(const std::string& t) {
    if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
    auto wrapped = [&](const std::string& open, const std::string& close) {
        return t.size() >= open.size() + close.size() && t.starts_with(open) && t.ends_with(close);
    };
    return wrapped("<|", "|>") || wrapped("<\xEF\xBD\x9C", "\xEF\xBD\x9C>") || wrapped("<unused", ">");
}

GgufVocabulary read_sentencepiece_vocabulary(const std::string& dir, const HfConfig& config) {
    const std::string path = require_file(dir, "tokenizer.model", "the SentencePiece model");
    const SentencePieceModel sp = read_sentencepiece_model(path);
    GgufVocabulary v = padded(size_t(config.n_vocab));
    for (size_t id = 0; id < sp.pieces.size() && id < v.tokens.size(); ++id) {
        v.tokens[id] = sp.pieces[id].text;
        v.scores[id] = sp.pieces[id].score;
        v.types[id] = type_of_piece(sp.pieces[id].type);
    }
    apply_added_tokens_json(dir, v, false);
    const std::string tc_path = (fs::path(dir) / "tokenizer_config.json").string();
    if (fs::is_regular_file(tc_path)) {
        const nlohmann::json tc = read_json_file(tc_path);
        const auto decoder = tc.find("added_tokens_decoder");
        if (decoder != tc.end() && !decoder->is_null()) {
            if (!decoder->is_object()) throw Error(fmt::format("{}: 'added_tokens_decoder' is not an object", tc_path));
            for (const auto& [key, data] : decoder->items()) {
                size_t used = 0;
                uint64_t id = 0;
                try {
                    id = std::stoull(key, &used);
                } catch (const std::exception&) {
                    used = 0;
                }
                if (used != key.size() || key.empty() || !data.is_object() || !data.contains("content") || !data["content"].is_string())
                    throw Error(fmt::format("{}: added_tokens_decoder['{}'] is not a token id with a content string", tc_path, key));
                if (id >= v.tokens.size()) continue;  // outside the vocabulary, as llama.cpp skips it
                std::string text = data["content"].get<std::string>();
                const bool special = json_bool(data, "special", tc_path).value_or(false);
                if (special || token_looks_special(text)) {
                    v.types[id] = kTokControl;
                } else {
                    text = replace_all(text, kSpaceMark, " ");  // user-defined spaces, pre-normalized
                    v.types[id] = kTokUserDefined;
                }
                v.scores[id] = -1000.f;
                v.tokens[id] = text;
            }
        }
    }
    apply_special(v, read_special_tokens(dir, false, v.tokens.size()));
    return v;
}

GgufVocabulary read_phi3_sentencepiece_vocabulary(const std::string& dir, const HfConfig& config) {
    const std::string path = require_file(dir, "tokenizer.model", "Phi-3's SentencePiece model");
    const SentencePieceModel sp = read_sentencepiece_model(path);
    GgufVocabulary v = padded(size_t(config.n_vocab));
    if (sp.pieces.size() > v.tokens.size())
        throw Error(fmt::format("{}: {} pieces, more than config.json's vocab_size {}", path, sp.pieces.size(), v.tokens.size()));
    for (size_t id = 0; id < sp.pieces.size(); ++id) {
        v.tokens[id] = sp.pieces[id].text;
        v.scores[id] = sp.pieces[id].score;
        v.types[id] = type_of_piece(sp.pieces[id].type);
    }
    apply_added_tokens_json(dir, v, false);
    // Added tokens of tokenizer_config.json, then of tokenizer.json: control
    // when marked special, else user-defined, text as written.
    auto apply = [&](const std::string& file, const nlohmann::json& id, const nlohmann::json& data) {
        if (!id.is_number_unsigned() || !data.is_object() || !data.contains("content") || !data["content"].is_string())
            throw Error(fmt::format("{}: an added token without a non-negative id and a content string", file));
        const uint64_t i = id.get<uint64_t>();
        if (i >= v.tokens.size()) throw Error(fmt::format("{}: added token id {} is outside the vocabulary of {}", file, i, v.tokens.size()));
        v.tokens[i] = data["content"].get<std::string>();
        v.scores[i] = -1000.f;
        v.types[i] = json_bool(data, "special", file).value_or(false) ? kTokControl : kTokUserDefined;
    };
    const std::string tc_path = (fs::path(dir) / "tokenizer_config.json").string();
    if (fs::is_regular_file(tc_path)) {
        const nlohmann::json tc = read_json_file(tc_path);
        if (const auto d = tc.find("added_tokens_decoder"); d != tc.end() && d->is_object())
            for (const auto& [key, data] : d->items()) {
                const bool digits = !key.empty() && key.size() < 10 && key.find_first_not_of("0123456789") == std::string::npos;
                if (!digits) throw Error(fmt::format("{}: added_tokens_decoder key '{}' is not a token id", tc_path, key));
                apply(tc_path, nlohmann::json(std::stoull(key)), data);
            }
    }
    const std::string tj_path = (fs::path(dir) / "tokenizer.json").string();
    if (fs::is_regular_file(tj_path)) {
        const nlohmann::json tj = read_json_file(tj_path);
        if (const auto a = tj.find("added_tokens"); a != tj.end() && a->is_array())
            for (const auto& data : *a) apply(tj_path, data.is_object() && data.contains("id") ? data["id"] : nlohmann::json(), data);
    }
    apply_special(v, read_special_tokens(dir, false, v.tokens.size()));
    return v;
}

GgufVocabulary read_hf_vocabulary(const std::string& dir, const HfConfig& config) {
    const bool has_spm = fs::is_regular_file(fs::path(dir) / "tokenizer.model");
    const std::string tc_path = (fs::path(dir) / "tokenizer_config.json").string();
    const nlohmann::json tc = fs::is_regular_file(tc_path) ? read_json_file(tc_path) : nlohmann::json::object();
    GgufVocabulary v;
    if (config.arch == "phi3") {
        // Phi-4 ships a GPT-2 tokenizer under the same model class.
        v = json_string(tc, "tokenizer_class", tc_path) == "GPT2Tokenizer" ? read_bpe_vocabulary(dir, config)
                                                                           : read_phi3_sentencepiece_vocabulary(dir, config);
    } else if (config.arch == "gemma2") {
        v = read_sentencepiece_vocabulary(dir, config);
        v.add_space_prefix = false;
    } else if (has_spm) {
        v = read_sentencepiece_vocabulary(dir, config);
        if (config.arch == "gemma3") v.add_space_prefix = false;
    } else {
        v = read_bpe_vocabulary(dir, config);
    }
    if (config.arch == "llama") {
        if (const auto prefix = json_bool(tc, "add_prefix_space", tc_path)) v.add_space_prefix = *prefix;
        if (config.n_vocab == 32016) {  // Code Llama's infill tokens
            for (const auto& [type, id] : {std::pair<const char*, uint32_t>{"prefix", 32007}, {"suffix", 32008}, {"middle", 32009}, {"eot", 32010}})
                v.special_ids.emplace_back(type, id);
        }
        if (config.n_vocab == 49152) v.add_special.emplace_back("bos", false);  // Granite's small models
    }
    return v;
}

void add_vocabulary(GgufWriter& w, const GgufVocabulary& v) {
    if (v.add_space_prefix) w.add_bool("tokenizer.ggml.add_space_prefix", *v.add_space_prefix);
    w.add_string("tokenizer.ggml.model", v.model);
    w.add_string("tokenizer.ggml.pre", v.pre);
    w.add_string_array("tokenizer.ggml.tokens", v.tokens);
    if (!v.scores.empty()) w.add_float32_array("tokenizer.ggml.scores", v.scores);
    w.add_int32_array("tokenizer.ggml.token_type", v.types);
    if (!v.merges.empty()) w.add_string_array("tokenizer.ggml.merges", v.merges);
    // The keys llama.cpp's writer has (no cls key; "seperator" as it spells it).
    static const std::vector<std::pair<std::string, std::string>> id_keys = {
        {"bos", "bos_token_id"},      {"eos", "eos_token_id"},       {"unk", "unknown_token_id"}, {"sep", "seperator_token_id"},
        {"pad", "padding_token_id"},  {"mask", "mask_token_id"},     {"eot", "eot_token_id"},     {"eom", "eom_token_id"},
        {"prefix", "prefix_token_id"}, {"suffix", "suffix_token_id"}, {"middle", "middle_token_id"},
    };
    // A type given twice keeps its place and takes the later value.
    std::vector<std::pair<std::string, uint32_t>> ids;
    for (const auto& [type, id] : v.special_ids) {
        for (const auto& [t, key] : id_keys) {
            if (t != type) continue;
            const std::string& name = key;  // clang 14 cannot capture a structured binding
            auto it = std::find_if(ids.begin(), ids.end(), [&](const auto& e) { return e.first == name; });
            if (it == ids.end()) ids.emplace_back(key, id);
            else it->second = id;
        }
    }
    for (const auto& [key, id] : ids) w.add_uint32("tokenizer.ggml." + key, id);
    std::vector<std::pair<std::string, bool>> adds;
    for (const auto& [type, add] : v.add_special) {
        if (type != "bos" && type != "eos" && type != "sep") continue;
        const std::string& name = type;  // as above
        auto it = std::find_if(adds.begin(), adds.end(), [&](const auto& e) { return e.first == name; });
        if (it == adds.end()) adds.emplace_back(type, add);
        else it->second = add;
    }
    for (const auto& [type, add] : adds) w.add_bool("tokenizer.ggml.add_" + type + "_token", add);
    std::vector<std::string> names;
    for (const auto& [name, body] : v.named_chat_templates) {
        w.add_string("tokenizer.chat_template." + name, body);
        names.push_back(name);
    }
    if (!names.empty()) w.add_string_array("tokenizer.chat_templates", names);
    if (v.chat_template) w.add_string("tokenizer.chat_template", *v.chat_template);
}

}  // namespace hetero::model_detail
