#include "arch_rules.hpp"

#include "hparam_ranges.hpp"

#include <hetero/ep_api.h>
#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cmath>

namespace hetero::model_detail {

ArchRules arch_rules(const std::string& arch, const std::string& path) {
    ArchRules r;
    r.rope_mode = HETERO_ROPE_HALVES;
    if (arch == "llama" || arch == "mistral") r.rope_mode = HETERO_ROPE_ADJACENT;
    else if (arch == "qwen2") r.qkv_bias = true;
    else if (arch == "qwen3") r.qk_norm = true;
    else if (arch == "phi3") r.fused = true;
    else if (arch == "gemma2") r.post_norms = r.tied = true;
    else if (arch == "gemma3") r.post_norms = r.qk_norm = true;
    else
        throw Error(fmt::format("{}: unsupported architecture '{}' (supported: llama, mistral, qwen2, qwen3, phi3, gemma2, gemma3)",
                                path, arch));
    return r;
}

namespace {

float float_key(const GgufFile& f, const std::string& key, float fallback, double lo, double hi) {
    return float(float_in_range(f, key, fallback, lo, hi));
}

// Layers attending through the window: every `pattern`-th layer (the last of
// each group) is global, the others local; an explicit per-layer array wins.
std::vector<bool> swa_pattern(const GgufFile& f, const std::string& key, int64_t n_layer, uint64_t default_pattern) {
    std::vector<bool> out(size_t(n_layer), false);
    uint64_t pattern = default_pattern;
    if (f.has(key) && f.raw_value(key).type == GgufType::ARRAY) {
        const GgufRawValue v = f.raw_value(key);
        if (v.elem_type != GgufType::BOOL || int64_t(v.count) != n_layer)
            throw Error(fmt::format("{}: metadata key '{}' must be a bool per layer ({} layers), got {} of {}", f.path(), key, n_layer,
                                    v.count, gguf_type_name(v.elem_type)));
        for (int64_t l = 0; l < n_layer; ++l) out[size_t(l)] = v.bytes[l] != 0;
        return out;
    }
    if (f.has(key)) pattern = *f.get_uint(key);
    for (int64_t l = 0; l < n_layer; ++l) out[size_t(l)] = pattern == 0 || uint64_t(l) % pattern < pattern - 1;
    return out;
}

void read_rope_scaling(const GgufFile& f, LlamaHParams& hp) {
    const std::string a = hp.arch + ".";
    const std::string type = f.get_string(a + "rope.scaling.type").value_or("");
    check_rope_scaling_keys(f, hp.arch);
    std::string factor_key = a + "rope.scaling.factor";
    if (!f.has(factor_key) && f.has(a + "rope.scale_linear")) factor_key = a + "rope.scale_linear";
    if (type == "llama3") return;  // the factors feed rope_freqs (see the loader); no linear part
    if (type != "" && type != "none" && type != "linear")
        throw Error(fmt::format("{}: RoPE scaling '{}' ({}rope.scaling.type) is not supported (supported: none, linear, llama3)", f.path(), type, a));
    // A factor scales linearly unless the type is llama3 (GGUF's readers do the same with type none).
    if (f.has(factor_key) && f.get_float(factor_key).value_or(0.0) != 0.0)
        hp.rope_freq_scale = 1.f / float_key(f, factor_key, 1.f, kMinRopeFactor, kMaxRopeFactor);
}

}  // namespace

void read_arch_hparams(const GgufFile& f, LlamaHParams& hp) {
    const std::string a = hp.arch + ".";
    read_rope_scaling(f, hp);
    if (const auto pooling = f.get_uint(a + "pooling_type")) {
        require_in_range(f, a + "pooling_type", double(*pooling), 0, 4, "0 none, 1 mean, 2 cls, 3 last, 4 rank");
        hp.pooling_type = int32_t(*pooling);
    }
    const std::string window_key = a + "attention.sliding_window";
    const auto window = f.get_uint(window_key);
    // phi3 files carry 0 for "none" (Phi-4) and the window is not applied there.
    if (window && hp.arch != "phi3") require_in_range(f, window_key, double(*window), 1, kMaxTokens, "leave the key out for no window");
    auto all_layers = [&] { return std::vector<bool>(size_t(hp.n_layer), true); };
    if (hp.arch == "llama" || hp.arch == "mistral") {
        if (window && *window > 0) {
            hp.n_swa = int64_t(*window);
            hp.swa_layers = all_layers();
        }
    } else if (hp.arch == "gemma2") {
        hp.n_swa = window ? int64_t(*window) : 4096;
        hp.swa_layers = swa_pattern(f, a + "attention.sliding_window_pattern", hp.n_layer, 2);
        hp.rope_freq_base_swa = float_key(f, a + "rope.freq_base_swa", hp.rope_freq_base, kMinRopeBase, kMaxRopeBase);
        hp.rope_freq_scale_swa = hp.rope_freq_scale;
        hp.attn_softcap = float_key(f, a + "attn_logit_softcapping", 50.f, kMinSoftcap, kMaxSoftcap);
        hp.final_softcap = float_key(f, a + "final_logit_softcapping", 30.f, kMinSoftcap, kMaxSoftcap);
        hp.embd_scale = hp.gelu_ffn = true;
    } else if (hp.arch == "gemma3") {
        if (window && *window > 0) {
            hp.n_swa = int64_t(*window);
            hp.swa_layers = swa_pattern(f, a + "attention.sliding_window_pattern", hp.n_layer, 6);
            hp.rope_freq_base_swa = float_key(f, a + "rope.freq_base_swa", 10000.f, kMinRopeBase, kMaxRopeBase);
            hp.rope_freq_scale_swa = 1.f;  // local layers keep their frequencies
        }
        if (f.has(a + "final_logit_softcapping")) hp.final_softcap = float_key(f, a + "final_logit_softcapping", 30.f, kMinSoftcap, kMaxSoftcap);
        hp.embd_scale = hp.gelu_ffn = true;
    }
    // phi3's sliding_window is not applied: GGUF files carry the training
    // window even for layers that attend fully.
    if (hp.arch == "gemma2" || hp.arch == "gemma3") {
        // The 27B models scale queries by n_embd / n_head, the others by the head size.
        const int64_t d = hp.n_layer == (hp.arch == "gemma2" ? 46 : 62) ? hp.n_embd / hp.n_head : hp.head_dim;
        hp.attn_scale = float(1.0 / std::sqrt(double(d)));
    }
    const ArchRules r = arch_rules(hp.arch, f.path());
    hp.qk_norm = r.qk_norm;
    hp.post_norms = r.post_norms;
}

}  // namespace hetero::model_detail
