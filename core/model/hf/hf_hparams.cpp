#include "hf_hparams.hpp"

#include "hf_json.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <variant>
#include <vector>

namespace hetero::model_detail {

namespace {

namespace fs = std::filesystem;

// Keys in the order first set; setting one again replaces its value, as
// llama.cpp's writer does when a model class overrides its base class.
class KeyList {
public:
    using Value = std::variant<uint32_t, float, std::string>;
    void set(const std::string& key, Value v) {
        for (auto& [k, old] : kv_)
            if (k == key) {
                old = std::move(v);
                return;
            }
        kv_.emplace_back(key, std::move(v));
    }
    void write(GgufWriter& w) const {
        for (const auto& [k, v] : kv_) {
            if (const auto* u = std::get_if<uint32_t>(&v)) w.add_uint32(k, *u);
            else if (const auto* f = std::get_if<float>(&v)) w.add_float32(k, *f);
            else w.add_string(k, std::get<std::string>(v));
        }
    }

private:
    std::vector<std::pair<std::string, Value>> kv_;
};

bool given(const nlohmann::json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

// TextModel.set_gguf_parameters: what every architecture writes by default.
void base_hparams(KeyList& kv, const HfConfig& c, const std::string& a, uint32_t file_type) {
    const nlohmann::json& j = c.params;
    kv.set(a + "block_count", uint32_t(c.n_layer));
    if (c.n_ctx) kv.set(a + "context_length", uint32_t(*c.n_ctx));
    kv.set(a + "embedding_length", uint32_t(c.n_embd));
    kv.set(a + "feed_forward_length", uint32_t(c.n_ff));
    kv.set(a + "attention.head_count", uint32_t(c.n_head));
    if (given(j, "num_key_value_heads") || given(j, "n_kv_heads")) kv.set(a + "attention.head_count_kv", uint32_t(c.n_head_kv));
    const nlohmann::json& full = c.rope.contains("full_attention") ? c.rope["full_attention"] : c.rope;
    if (c.rope_type == "linear" && given(full, "factor")) {
        kv.set(a + "rope.scaling.type", std::string("linear"));
        kv.set(a + "rope.scaling.factor", float(*json_number(full, "factor", c.path + " (rope_scaling)", 1.0 / 1024, 1024)));
    }
    if (c.rope_theta) kv.set(a + "rope.freq_base", float(*c.rope_theta));
    if (c.rope_theta_local) kv.set(a + "rope.freq_base_swa", float(*c.rope_theta_local));
    if (c.rms_eps) kv.set(a + "attention.layer_norm_rms_epsilon", float(*c.rms_eps));
    if (c.head_dim_given) {
        kv.set(a + "attention.key_length", uint32_t(c.head_dim));
        kv.set(a + "attention.value_length", uint32_t(c.head_dim));
    }
    kv.set("general.file_type", file_type);
}

// The shape every architecture's keys hold: widths, layers, heads, the norm's
// epsilon (the callers have checked that the config gives it).
void set_shape_keys(KeyList& kv, const HfConfig& c, const std::string& a) {
    kv.set(a + "embedding_length", uint32_t(c.n_embd));
    kv.set(a + "feed_forward_length", uint32_t(c.n_ff));
    kv.set(a + "block_count", uint32_t(c.n_layer));
    kv.set(a + "attention.head_count", uint32_t(c.n_head));
    kv.set(a + "attention.head_count_kv", uint32_t(c.n_head_kv));
    kv.set(a + "attention.layer_norm_rms_epsilon", float(*c.rms_eps));
}

void phi3_hparams(KeyList& kv, const HfConfig& c, const std::string& a, uint32_t file_type) {
    const nlohmann::json& j = c.params;
    const std::string& p = c.path;
    if (!c.n_ctx) throw Error(fmt::format("{}: 'max_position_embeddings' is missing", p));
    auto orig = json_int(c.rope, "original_max_position_embeddings", p + " (rope_scaling)", 1, int64_t(1) << 30);
    if (!orig) orig = json_int(j, "original_max_position_embeddings", p, 1, int64_t(1) << 30);
    if (!orig) throw Error(fmt::format("{}: 'original_max_position_embeddings' is missing", p));
    if (!c.rms_eps) throw Error(fmt::format("{}: 'rms_norm_eps' is missing", p));
    if (!c.rope_theta) throw Error(fmt::format("{}: 'rope_theta' is missing", p));
    double rot_pct = 1.0;
    if (auto r = json_number(c.rope, "partial_rotary_factor", p + " (rope_scaling)", 0.0, 1.0)) rot_pct = *r;
    else if (auto r2 = json_number(j, "partial_rotary_factor", p, 0.0, 1.0)) rot_pct = *r2;
    const int64_t rope_dims = int64_t(rot_pct * double(c.n_embd)) / c.n_head;
    if (rope_dims < 2 || rope_dims % 2 != 0) throw Error(fmt::format("{}: partial_rotary_factor {} leaves {} rotated dimensions per head", p, rot_pct, rope_dims));
    if (given(c.rope, "long_factor"))
        throw Error(fmt::format("{}: long-context RoPE factors (rope_scaling long_factor/short_factor) are not supported by hetero", p));
    kv.set(a + "context_length", uint32_t(*c.n_ctx));
    kv.set(a + "rope.scaling.original_context_length", uint32_t(*orig));
    set_shape_keys(kv, c, a);
    kv.set(a + "rope.dimension_count", uint32_t(rope_dims));
    kv.set(a + "rope.freq_base", float(*c.rope_theta));
    kv.set("general.file_type", file_type);
    // 0 marks "no window" (Phi-4).
    kv.set(a + "attention.sliding_window", uint32_t(json_int(j, "sliding_window", p, 0, int64_t(1) << 30).value_or(0)));
}

void gemma2_hparams(KeyList& kv, const HfConfig& c, const std::string& a, uint32_t file_type) {
    const nlohmann::json& j = c.params;
    const std::string& p = c.path;
    if (!c.n_ctx) throw Error(fmt::format("{}: 'max_position_embeddings' is missing", p));
    if (!c.rms_eps) throw Error(fmt::format("{}: 'rms_norm_eps' is missing", p));
    auto required = [&](const char* key, double lo, double hi) {
        if (auto v = json_number(j, key, p, lo, hi)) return *v;
        throw Error(fmt::format("{}: '{}' is missing", p, key));
    };
    kv.set(a + "context_length", uint32_t(*c.n_ctx));
    set_shape_keys(kv, c, a);
    kv.set(a + "attention.key_length", uint32_t(c.head_dim));
    kv.set(a + "attention.value_length", uint32_t(c.head_dim));
    kv.set("general.file_type", file_type);
    kv.set(a + "attn_logit_softcapping", float(required("attn_logit_softcapping", 0.1, 1e5)));
    kv.set(a + "final_logit_softcapping", float(required("final_logit_softcapping", 0.1, 1e5)));
    kv.set(a + "attention.sliding_window", uint32_t(required("sliding_window", 1, double(int64_t(1) << 30))));
}

void gemma3_hparams(KeyList& kv, const HfConfig& c, const std::string& a, uint32_t file_type) {
    const nlohmann::json& j = c.params;
    const std::string& p = c.path;
    base_hparams(kv, c, a, file_type);
    kv.set(a + "context_length", uint32_t(c.n_ctx.value_or(131072)));
    kv.set(a + "attention.head_count", uint32_t(c.n_head));
    kv.set(a + "attention.layer_norm_rms_epsilon", float(c.rms_eps.value_or(1e-6)));
    kv.set(a + "attention.key_length", uint32_t(c.head_dim));
    kv.set(a + "attention.value_length", uint32_t(c.head_dim));
    const nlohmann::json& full = c.rope.contains("full_attention") ? c.rope["full_attention"] : c.rope;
    kv.set(a + "rope.freq_base", float(json_number(full, "rope_theta", p + " (rope_scaling)", 1, 1e12).value_or(c.rope_theta.value_or(1e6))));
    if (given(j, "attn_logit_softcapping"))
        throw Error(fmt::format("{}: 'attn_logit_softcapping' is set, but Gemma 3 has no attention soft-capping", p));
    if (auto cap = json_number(j, "final_logit_softcapping", p, 0, 1e5); cap && *cap != 0)
        kv.set(a + "final_logit_softcapping", float(*cap));
    if (json_int(j, "sliding_window_pattern", p, 0, 1 << 20).value_or(-1) != 1) {
        const auto window = json_int(j, "sliding_window", p, 1, int64_t(1) << 30);
        if (!window) throw Error(fmt::format("{}: 'sliding_window' is missing", p));
        kv.set(a + "attention.sliding_window", uint32_t(*window));
    }
    kv.set(a + "attention.head_count_kv", uint32_t(c.n_head_kv));
}

}  // namespace

void add_hf_hparams(GgufWriter& w, const HfConfig& c, const std::string& name, uint32_t file_type) {
    const std::string a = c.arch + ".";
    KeyList kv;
    kv.set("general.architecture", c.arch);
    kv.set("general.type", std::string("model"));
    kv.set("general.name", name);
    if (c.arch == "phi3") {
        phi3_hparams(kv, c, a, file_type);
    } else if (c.arch == "gemma2") {
        gemma2_hparams(kv, c, a, file_type);
    } else if (c.arch == "gemma3") {
        gemma3_hparams(kv, c, a, file_type);
    } else {
        base_hparams(kv, c, a, file_type);
        if (c.arch == "llama") {
            kv.set(a + "vocab_size", uint32_t(c.n_vocab));
            kv.set(a + "rope.dimension_count", uint32_t(c.head_dim));
        }
    }
    kv.set("general.quantization_version", uint32_t(2));
    kv.write(w);
}

void add_generation_defaults(GgufWriter& w, const std::string& dir) {
    const std::string p = (fs::path(dir) / "generation_config.json").string();
    if (!fs::is_regular_file(p)) return;
    const nlohmann::json g = read_json_file(p);
    if (!g.is_object()) throw Error(fmt::format("{}: not a JSON object", p));
    if (auto v = json_int(g, "top_k", p, 0, INT32_MAX)) w.add_int32("general.sampling.top_k", int32_t(*v));
    if (auto v = json_number(g, "top_p", p, 0, 1)) w.add_float32("general.sampling.top_p", float(*v));
    if (auto v = json_number(g, "min_p", p, 0, 1)) w.add_float32("general.sampling.min_p", float(*v));
    if (auto v = json_number(g, "temperature", p, 0, 1e3)) w.add_float32("general.sampling.temp", float(*v));
    if (auto v = json_int(g, "penalty_last_n", p, -1, INT32_MAX)) w.add_int32("general.sampling.penalty_last_n", int32_t(*v));
    auto repeat = json_number(g, "penalty_repeat", p, 0, 1e3);
    if (!repeat) repeat = json_number(g, "repetition_penalty", p, 0, 1e3);
    if (repeat) w.add_float32("general.sampling.penalty_repeat", float(*repeat));
}

}  // namespace hetero::model_detail
