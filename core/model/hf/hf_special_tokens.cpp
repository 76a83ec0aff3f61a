// Special tokens, whether the tokenizer adds them, merges and the chat
// template, read as llama.cpp's gguf.SpecialVocab reads them: from
// tokenizer.json (its added tokens and post-processor template),
// tokenizer_config.json (first) and config.json (ids it did not give).
#include "hf_json.hpp"
#include "hf_vocab.hpp"

#include "../mapped_file.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace hetero::model_detail {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Python's truth value of a JSON value: null, "", {}, [], 0 and false are false.
bool truthy(const json& v) {
    if (v.is_null()) return false;
    if (v.is_string()) return !v.get_ref<const std::string&>().empty();
    if (v.is_object() || v.is_array()) return !v.empty();
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    return true;
}

json get_or_null(const json& obj, const std::string& key) {
    if (!obj.is_object()) return nullptr;
    const auto it = obj.find(key);
    return it == obj.end() ? json(nullptr) : *it;
}

// A SpecialToken template piece's id ("<s>"), else null.
json special_token_id(const json& piece) {
    if (!piece.is_object()) return nullptr;
    return get_or_null(get_or_null(piece, "SpecialToken"), "id");
}

bool in(const json& v, std::initializer_list<const json*> set) {
    return std::any_of(set.begin(), set.end(), [&](const json* s) { return *s == v; });
}

std::string read_text(const std::string& path) {
    const MappedFile f(path);
    return std::string(reinterpret_cast<const char*>(f.data()), size_t(f.size()));
}

// A merge of tokenizer.json: "a b", or ["a", "b"] whose spaces become U+0120
// so the pair stays splittable at its one space.
std::string merge_text(const json& m, const std::string& path, size_t i) {
    if (m.is_string()) return m.get<std::string>();
    if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        std::string out;
        for (int part = 0; part < 2; ++part) {
            if (part) out += ' ';
            for (char c : m[part].get<std::string>()) out += c == ' ' ? std::string("\xC4\xA0") : std::string(1, c);
        }
        return out;
    }
    throw Error(fmt::format("{}: model.merges[{}] is neither \"left right\" nor a pair of strings", path, i));
}

class SpecialVocabReader {
public:
    SpecialVocabReader(const std::string& dir, bool load_merges, std::optional<size_t> n_vocab)
        : dir_(dir), load_merges_(load_merges), n_vocab_(n_vocab) {}

    SpecialTokens read() {
        from_tokenizer_json();
        from_config_json();
        return std::move(out_);
    }

private:
    void set_id(const std::string& type, const json& id, const std::string& source) {
        if (!id.is_number_integer()) return;
        if (id.get<int64_t>() < 0) throw Error(fmt::format("{}: the {} token id {} is negative", source, type, id.get<int64_t>()));
        const uint64_t v = id.get<uint64_t>();
        if (n_vocab_ && v >= *n_vocab_) return;  // out of the vocabulary: llama.cpp skips it too
        if (v > UINT32_MAX) throw Error(fmt::format("{}: the {} token id {} is out of range", source, type, v));
        for (const auto& [t, i] : out_.ids)
            if (t == type) return;  // the first source wins
        out_.ids.emplace_back(type, uint32_t(v));
    }

    void set_add(const std::string& type, bool value) {
        for (auto& [t, v] : out_.add)
            if (t == type) {
                v = value;
                return;
            }
        out_.add.emplace_back(type, value);
    }

    // TemplateProcessing: a leading special token means BOS is added, a
    // trailing one EOS (another EOS than the configured one moves that one to
    // eot); a separator between A and B means SEP is added.
    void template_processing(const json& processor, json& tc, json& bos, json& cls, json& eos, json& sep) {
        const json single = get_or_null(processor, "single"), pair = get_or_null(processor, "pair");
        json first = nullptr, last = nullptr;
        if (single.is_array() && single.size() > 1) {
            first = special_token_id(single.front());
            if (truthy(first)) {
                if (!truthy(tc)) {
                    bos = first;
                } else if (!in(first, {&bos, &cls})) {
                    if (!truthy(bos)) tc["bos_token"] = bos = first;
                    if (!truthy(cls)) tc["cls_token"] = cls = first;
                }
                set_add("bos", in(first, {&bos, &cls}));
            }
            last = special_token_id(single.back());
            if (truthy(last)) {
                if (!truthy(tc)) {
                    eos = last;
                } else if (last != eos) {
                    if (std::find(types_.begin(), types_.end(), "eot") == types_.end()) {
                        types_.push_back("eot");
                        tc["eot_token"] = eos;
                    } else if (std::find(types_.begin(), types_.end(), "eom") == types_.end()) {
                        types_.push_back("eom");
                        tc["eom_token"] = eos;
                    }
                    tc["eos_token"] = eos = last;
                }
                set_add("eos", last == eos);
            }
        }
        if (!pair.is_array() || pair.empty()) return;
        size_t start = truthy(first) && special_token_id(pair.front()) == first ? 1 : 0;
        size_t stop = truthy(last) && special_token_id(pair.back()) == last ? pair.size() - 1 : pair.size();
        if (start >= stop) return;
        const json inner(pair.begin() + ptrdiff_t(start), pair.begin() + ptrdiff_t(stop));
        const json a = get_or_null(get_or_null(inner.front(), "Sequence"), "id"), b = get_or_null(get_or_null(inner.back(), "Sequence"), "id");
        if (a != "A" || b != "B" || inner.size() < 3) return;
        bool add_sep = false;
        const json entry = special_token_id(inner[1]);
        if (truthy(entry) && in(entry, {&sep, &eos}) && !truthy(last)) add_sep = true;
        if (inner.size() == 4) {  // A, two separators, B
            const json second = special_token_id(inner[2]);
            if (truthy(second) && in(second, {&sep, &eos})) add_sep = true;
        }
        set_add("sep", add_sep);
        if (add_sep && !truthy(sep) && truthy(tc)) tc["sep_token"] = eos;
    }

    void from_tokenizer_json() {
        const std::string tok_path = (fs::path(dir_) / "tokenizer.json").string();
        const std::string tc_path = (fs::path(dir_) / "tokenizer_config.json").string();
        json tokenizer = nullptr, added = json::array();
        if (fs::is_regular_file(tok_path)) {
            tokenizer = read_json_file(tok_path);
            if (!tokenizer.is_object()) throw Error(fmt::format("{}: not a JSON object", tok_path));
            if (load_merges_) {
                const json merges = get_or_null(get_or_null(tokenizer, "model"), "merges");
                if (merges.is_array())
                    for (size_t i = 0; i < merges.size(); ++i) out_.merges.push_back(merge_text(merges[i], tok_path, i));
            }
            added = get_or_null(tokenizer, "added_tokens");
            if (added.is_null()) added = json::array();
            if (!added.is_array()) throw Error(fmt::format("{}: 'added_tokens' is not an array", tok_path));
        }
        json tc = nullptr;
        if (fs::is_regular_file(tc_path)) {
            tc = read_json_file(tc_path);
            if (!tc.is_object()) throw Error(fmt::format("{}: not a JSON object", tc_path));
        }
        if (truthy(tokenizer)) {
            json bos = get_or_null(tc, "bos_token"), cls = get_or_null(tc, "cls_token"), eos = get_or_null(tc, "eos_token"),
                 sep = get_or_null(tc, "sep_token");
            if (!truthy(bos) && truthy(cls) && truthy(tc)) tc["bos_token"] = bos = cls;
            if (!truthy(eos) && truthy(sep) && truthy(tc)) tc["eos_token"] = eos = sep;
            const json post = get_or_null(tokenizer, "post_processor");
            if (truthy(post)) {
                const json procs = post.contains("processors") ? post["processors"] : json::array({post});
                if (procs.is_array())
                    for (const json& p : procs) {
                        const json type = get_or_null(p, "type");
                        if (type == "RobertaProcessing") {
                            set_add("bos", true);
                            set_add("eos", true);
                            set_add("sep", true);
                        } else if (type == "TemplateProcessing") {
                            template_processing(p, tc, bos, cls, eos, sep);
                        }
                    }
            }
        }
        if (!truthy(tc)) return;
        chat_templates(tc, tc_path);
        for (const std::string& type : types_) {
            const json add = get_or_null(tc, "add_" + type + "_token");
            if (add.is_boolean()) set_add(type, add.get<bool>());
            const json entry = get_or_null(tc, type + "_token");
            std::string content;
            if (entry.is_string()) content = entry.get<std::string>();
            else if (entry.is_object() && get_or_null(entry, "content").is_string()) content = entry["content"].get<std::string>();
            else continue;
            json id = nullptr;
            for (const json& t : added)
                if (get_or_null(t, "content") == content) {
                    id = get_or_null(t, "id");
                    break;
                }
            set_id(type, id, tok_path);
        }
    }

    void chat_templates(const json& tc, const std::string& tc_path) {
        json alt = nullptr;
        const fs::path jinja = fs::path(dir_) / "chat_template.jinja", jfile = fs::path(dir_) / "chat_template.json";
        if (fs::is_regular_file(jinja)) {
            alt = read_text(jinja.string());
        } else if (fs::is_regular_file(jfile)) {
            alt = get_or_null(read_json_file(jfile.string()), "chat_template");
        }
        const json t = tc.contains("chat_template") ? tc["chat_template"] : alt;
        if (t.is_string()) {
            out_.chat_template = t.get<std::string>();
        } else if (t.is_array()) {
            for (const json& choice : t) {
                std::string name = get_or_null(choice, "name").is_string() ? choice["name"].get<std::string>() : "";
                for (char& c : name)
                    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                const json body = get_or_null(choice, "template");
                if (name.empty() || !body.is_string()) continue;
                if (name == "default") out_.chat_template = body.get<std::string>();
                else out_.named_chat_templates.emplace_back(name, body.get<std::string>());
            }
        } else if (!t.is_null()) {
            throw Error(fmt::format("{}: 'chat_template' is neither a string nor a list of named templates", tc_path));
        }
    }

    void from_config_json() {
        const std::string path = (fs::path(dir_) / "config.json").string();
        if (!fs::is_regular_file(path)) return;
        const json config = read_json_file(path);
        for (const std::string& type : types_) {
            json id = get_or_null(config, type + "_token_id");
            if (id.is_null()) id = get_or_null(get_or_null(config, "text_config"), type + "_token_id");
            set_id(type, id, path);
        }
    }

    std::string dir_;
    bool load_merges_;
    std::optional<size_t> n_vocab_;
    std::vector<std::string> types_ = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    SpecialTokens out_;
};

}  // namespace

SpecialTokens read_special_tokens(const std::string& dir, bool load_merges, std::optional<size_t> n_vocab) {
    return SpecialVocabReader(dir, load_merges, n_vocab).read();
}

}  // namespace hetero::model_detail
