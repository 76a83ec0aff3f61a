#include "hf_config.hpp"

#include "hf_json.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <map>

namespace hetero::model_detail {

namespace {

// Hugging Face model classes and the GGUF architecture llama.cpp's
// converter writes for each (Mistral's class becomes llama there too).
const std::map<std::string, std::string>& known_architectures() {
    static const std::map<std::string, std::string> m = {
        {"LlamaForCausalLM", "llama"},   {"LLaMAForCausalLM", "llama"}, {"MistralForCausalLM", "llama"},
        {"Qwen2ForCausalLM", "qwen2"},   {"Qwen3ForCausalLM", "qwen3"}, {"Phi3ForCausalLM", "phi3"},
        {"Gemma2ForCausalLM", "gemma2"}, {"Gemma3ForCausalLM", "gemma3"}, {"Gemma3ForConditionalGeneration", "gemma3"},
    };
    return m;
}

std::string known_list() {
    std::string s;
    for (const auto& [hf, arch] : known_architectures()) s += (s.empty() ? "" : ", ") + hf;
    return s;
}

// The first of `keys` present in `j` (llama.cpp's find_hparam).
std::optional<int64_t> first_int(const nlohmann::json& j, std::initializer_list<const char*> keys, const std::string& path, int64_t lo,
                                 int64_t hi) {
    for (const char* k : keys)
        if (auto v = json_int(j, k, path, lo, hi)) return v;
    return std::nullopt;
}

int64_t required_int(const nlohmann::json& j, std::initializer_list<const char*> keys, const std::string& path, int64_t lo, int64_t hi) {
    if (auto v = first_int(j, keys, path, lo, hi)) return *v;
    throw Error(fmt::format("{}: '{}' is missing", path, *keys.begin()));
}

// Upper bounds far above any released model, far below overflow.
constexpr int64_t kMaxLayers = 1024, kMaxEmbd = 1 << 16, kMaxFf = 1 << 18, kMaxHeads = 1024, kMaxVocab = 1 << 22, kMaxHeadDim = 1024;
constexpr int64_t kMaxContext = int64_t(1) << 30;

}  // namespace

HfConfig read_hf_config(const std::string& dir) {
    HfConfig c;
    c.path = (std::filesystem::path(dir) / "config.json").string();
    if (!std::filesystem::is_regular_file(c.path))
        throw Error(fmt::format("{}: no config.json: not a Hugging Face model folder", dir));
    const nlohmann::json raw = read_json_file(c.path);
    const std::string& p = c.path;
    if (!raw.is_object()) throw Error(fmt::format("{}: not a JSON object", p));
    const auto archs = raw.find("architectures");
    if (archs == raw.end() || !archs->is_array() || archs->empty() || !(*archs)[0].is_string())
        throw Error(fmt::format("{}: 'architectures' must name the model class (e.g. [\"LlamaForCausalLM\"])", p));
    c.hf_arch = (*archs)[0].get<std::string>();
    const auto known = known_architectures().find(c.hf_arch);
    if (known == known_architectures().end())
        throw Error(fmt::format("{}: model class '{}' is not one hetero converts (supported: {})", p, c.hf_arch, known_list()));
    c.arch = known->second;
    c.params = raw;
    if (const auto tc = raw.find("text_config"); tc != raw.end()) {
        if (!tc->is_object()) throw Error(fmt::format("{}: 'text_config' is not an object", p));
        for (const auto& [k, v] : tc->items()) c.params[k] = v;
    }
    const nlohmann::json& j = c.params;
    if (const auto q = j.find("quantization_config"); q != j.end() && !q->is_null()) {
        const std::string method = q->is_object() && q->contains("quant_method") ? (*q)["quant_method"].dump() : "unknown";
        throw Error(fmt::format("{}: the weights are already quantized (quant_method {}): convert the unquantized model", p, method));
    }

    c.n_layer = required_int(j, {"num_hidden_layers", "n_layers", "n_layer", "num_layers"}, p, 1, kMaxLayers);
    c.n_embd = required_int(j, {"hidden_size", "n_embd", "dim"}, p, 1, kMaxEmbd);
    c.n_ff = required_int(j, {"intermediate_size", "n_inner", "hidden_dim"}, p, 1, kMaxFf);
    const bool gemma = c.arch.starts_with("gemma");
    // Gemma 3 configs may leave the head counts to the class defaults.
    c.n_head = c.arch == "gemma3" ? first_int(j, {"num_attention_heads"}, p, 1, kMaxHeads).value_or(8)
                                  : required_int(j, {"num_attention_heads", "n_head", "n_heads"}, p, 1, kMaxHeads);
    c.n_head_kv = first_int(j, {"num_key_value_heads", "n_kv_heads"}, p, 1, kMaxHeads).value_or(c.arch == "gemma3" ? 4 : c.n_head);
    if (c.n_head % c.n_head_kv != 0)
        throw Error(fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", p, c.n_head, c.n_head_kv));
    c.n_vocab = required_int(j, {"vocab_size"}, p, 1, kMaxVocab);
    c.head_dim_given = j.contains("head_dim") && !j["head_dim"].is_null();
    if (c.head_dim_given) {
        c.head_dim = *json_int(j, "head_dim", p, 2, kMaxHeadDim);
    } else if (c.arch == "gemma3") {
        c.head_dim = 256;
    } else if (gemma) {
        throw Error(fmt::format("{}: 'head_dim' is missing", p));
    } else {
        if (c.n_embd % c.n_head != 0)
            throw Error(fmt::format("{}: hidden_size {} is not a multiple of num_attention_heads {} (and no head_dim is given)", p, c.n_embd,
                                    c.n_head));
        c.head_dim = c.n_embd / c.n_head;
    }
    if (c.head_dim % 2 != 0) throw Error(fmt::format("{}: the head size {} is odd; RoPE rotates pairs of values", p, c.head_dim));
    c.tied_embeddings = json_bool(j, "tie_word_embeddings", p).value_or(false);
    c.n_ctx = first_int(j, {"max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length", "model_max_length"}, p, 1,
                        kMaxContext);
    c.rms_eps = json_number(j, "rms_norm_eps", p, 0, 1);
    if (!c.rms_eps) c.rms_eps = json_number(j, "norm_eps", p, 0, 1);

    // RoPE: rope_parameters (newer configs) or rope_scaling, with the
    // top-level thetas mirrored in, as llama.cpp's converter reads them.
    for (const char* key : {"rope_parameters", "rope_scaling"}) {
        if (const auto r = j.find(key); r != j.end() && !r->is_null()) {
            if (!r->is_object()) throw Error(fmt::format("{}: '{}' is not an object", p, key));
            c.rope = *r;
            break;
        }
    }
    if (c.rope.is_null()) c.rope = nlohmann::json::object();
    const nlohmann::json& full = c.rope.contains("full_attention") ? c.rope["full_attention"] : c.rope;
    const std::string rope_path = p + " (rope_scaling)";
    c.rope_type = json_string(full, "rope_type", rope_path).value_or(json_string(full, "type", rope_path).value_or(""));
    for (const char* k : {"global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta", "rotary_emb_base"}) {
        if (auto v = json_number(j, k, p, 1, 1e12)) {
            c.rope_theta = v;
            break;
        }
    }
    if (auto v = json_number(full, "rope_theta", rope_path, 1, 1e12)) c.rope_theta = v;
    for (const char* k : {"local_rope_theta", "rope_local_theta", "rope_theta_local", "swa_rope_theta", "rope_local_base_freq"}) {
        if (auto v = json_number(j, k, p, 1, 1e12)) {
            c.rope_theta_local = v;
            break;
        }
    }
    if (c.rope.contains("sliding_attention"))
        if (auto v = json_number(c.rope["sliding_attention"], "rope_theta", rope_path, 1, 1e12)) c.rope_theta_local = v;
    if (!c.rope_type.empty() && c.rope_type != "default" && c.rope_type != "linear" && c.rope_type != "llama3")
        throw Error(fmt::format("{}: RoPE scaling '{}' is not one hetero runs (supported: linear, llama3)", p, c.rope_type));
    return c;
}

}  // namespace hetero::model_detail
