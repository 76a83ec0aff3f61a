#include "hf_tensor_names.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <charconv>
#include <map>

namespace hetero::model_detail {

namespace {

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// Tensors of other modalities in multimodal checkpoints (llama.cpp's
// TextModel.filter_tensors), and caches that are not weights.
bool skipped(const std::string& n) {
    for (std::string_view tail : {".rotary_emb.inv_freq", ".attention.masked_bias", ".attention.bias"})
        if (n.ends_with(tail)) return true;
    for (std::string_view head : {"mlp", "vit.", "vpm.", "siglip2.", "conformer.", "merger.", "resampler.", "sound_encoder.",
                                  "sound_projection.", "speech_embeddings."})
        if (n.starts_with(head)) return true;
    for (std::string_view part : {"visual.", "vision.", "audio.", "talker.", "vision_", "audio_", "token2wav.", "code2wav.", "projector.",
                                  "pre_mm_projector_norm", "image_newline", "view_seperator", "patch_embed", "patch_embedding",
                                  "patch_merger.", "patch_merge_mlp.", "model.connector."})
        if (contains(n, part)) return true;
    return false;
}

// The part of a layer's tensor name after "model.layers.N." and its GGUF name after "blk.N.".
const std::map<std::string, std::string>& layer_names(bool gemma) {
    static const std::map<std::string, std::string> common = {
        {"input_layernorm.weight", "attn_norm.weight"},
        {"self_attn.q_proj.weight", "attn_q.weight"},
        {"self_attn.q_proj.bias", "attn_q.bias"},
        {"self_attn.k_proj.weight", "attn_k.weight"},
        {"self_attn.k_proj.bias", "attn_k.bias"},
        {"self_attn.v_proj.weight", "attn_v.weight"},
        {"self_attn.v_proj.bias", "attn_v.bias"},
        {"self_attn.o_proj.weight", "attn_output.weight"},
        {"self_attn.o_proj.bias", "attn_output.bias"},
        {"self_attn.qkv_proj.weight", "attn_qkv.weight"},
        {"self_attn.q_norm.weight", "attn_q_norm.weight"},
        {"self_attn.k_norm.weight", "attn_k_norm.weight"},
        {"post_attention_layernorm.weight", "ffn_norm.weight"},
        {"mlp.gate_proj.weight", "ffn_gate.weight"},
        {"mlp.up_proj.weight", "ffn_up.weight"},
        {"mlp.down_proj.weight", "ffn_down.weight"},
        {"mlp.gate_up_proj.weight", "ffn_up.weight"},
    };
    // Gemma 2 and 3 norm both sides of each branch.
    static const std::map<std::string, std::string> with_post = [] {
        auto m = common;
        m["post_attention_layernorm.weight"] = "post_attention_norm.weight";
        m["pre_feedforward_layernorm.weight"] = "ffn_norm.weight";
        m["post_feedforward_layernorm.weight"] = "post_ffw_norm.weight";
        return m;
    }();
    return gemma ? with_post : common;
}

}  // namespace

HfTensorName gguf_name_of(const HfConfig& c, const std::string& hf_name, const std::string& source) {
    std::string n = hf_name;
    for (size_t at = n.find("language_model."); at != std::string::npos; at = n.find("language_model.")) n.erase(at, 15);
    const bool gemma = c.arch.starts_with("gemma");
    HfTensorName out;
    if (skipped(n)) return out;
    if (n == "lm_head.weight" && gemma) return out;  // Gemma ties its classifier; some exports carry a copy
    out.kind = HfTensorName::Kind::Keep;
    if (n == "model.embed_tokens.weight") {
        out.gguf = "token_embd.weight";
        return out;
    }
    if (n == "model.norm.weight") {
        out.gguf = "output_norm.weight";
        return out;
    }
    if (n == "lm_head.weight") {
        out.gguf = "output.weight";
        return out;
    }
    const std::string_view prefix = "model.layers.";
    if (n.starts_with(prefix)) {
        const char* begin = n.data() + prefix.size();
        const char* end = n.data() + n.size();
        int64_t layer = -1;
        const auto [p, ec] = std::from_chars(begin, end, layer);
        if (ec == std::errc() && p != begin && p < end && *p == '.') {
            if (layer < 0 || layer >= c.n_layer)
                throw Error(fmt::format("{}: tensor '{}' is in layer {}, but config.json has {} layers", source, hf_name, layer, c.n_layer));
            const auto& names = layer_names(gemma);
            if (const auto it = names.find(std::string(p + 1, end)); it != names.end()) {
                out.gguf = fmt::format("blk.{}.{}", layer, it->second);
                out.layer = layer;
                return out;
            }
        }
    }
    throw Error(fmt::format("{}: tensor '{}' has no GGUF name for a {} model (an unexpected tensor: is this the model class config.json names?)",
                            source, hf_name, c.hf_arch));
}

std::string hf_name_for(const HfConfig& c, const std::string& gguf_name) {
    if (gguf_name == "token_embd.weight") return "model.embed_tokens.weight";
    if (gguf_name == "output_norm.weight") return "model.norm.weight";
    if (gguf_name == "output.weight") return "lm_head.weight";
    int64_t layer = -1;
    const char* begin = gguf_name.data() + 4;
    const auto [p, ec] = std::from_chars(begin, gguf_name.data() + gguf_name.size(), layer);
    if (gguf_name.starts_with("blk.") && ec == std::errc() && *p == '.') {
        const std::string tail(p + 1);
        const bool fused = c.arch == "phi3";
        for (const auto& [hf, gguf] : layer_names(c.arch.starts_with("gemma")))
            if (gguf == tail && (fused || hf != "mlp.gate_up_proj.weight") && (!fused || hf != "mlp.up_proj.weight"))
                return fmt::format("model.layers.{}.{}", layer, hf);
    }
    return gguf_name;
}

std::vector<ExpectedTensor> expected_tensors(const HfConfig& c) {
    const int64_t D = c.n_embd, F = c.n_ff, V = c.n_vocab, hd = c.head_dim, q = c.n_head * hd, kv = c.n_head_kv * hd;
    const bool gemma = c.arch.starts_with("gemma");
    std::vector<ExpectedTensor> t = {{"token_embd.weight", {V, D}}, {"output_norm.weight", {D}}, {"output.weight", {V, D}, true}};
    for (int64_t l = 0; l < c.n_layer; ++l) {
        const std::string b = fmt::format("blk.{}.", l);
        t.push_back({b + "attn_norm.weight", {D}});
        if (c.arch == "phi3") {
            t.push_back({b + "attn_qkv.weight", {q + 2 * kv, D}});
            t.push_back({b + "ffn_up.weight", {2 * F, D}});
        } else {
            t.push_back({b + "attn_q.weight", {q, D}});
            t.push_back({b + "attn_k.weight", {kv, D}});
            t.push_back({b + "attn_v.weight", {kv, D}});
            t.push_back({b + "ffn_gate.weight", {F, D}});
            t.push_back({b + "ffn_up.weight", {F, D}});
        }
        if (c.arch == "qwen2") {
            t.push_back({b + "attn_q.bias", {q}});
            t.push_back({b + "attn_k.bias", {kv}});
            t.push_back({b + "attn_v.bias", {kv}});
        }
        if (c.arch == "qwen3" || c.arch == "gemma3") {
            t.push_back({b + "attn_q_norm.weight", {hd}});
            t.push_back({b + "attn_k_norm.weight", {hd}});
        }
        t.push_back({b + "attn_output.weight", {D, q}});
        t.push_back({b + "ffn_norm.weight", {D}});
        if (gemma) {
            t.push_back({b + "post_attention_norm.weight", {D}});
            t.push_back({b + "post_ffw_norm.weight", {D}});
        }
        t.push_back({b + "ffn_down.weight", {D, F}});
    }
    return t;
}

}  // namespace hetero::model_detail
