// load_model: format detection and the GGUF side of the model description
// (hyper-parameters from <arch>.* metadata, canonical tensors checked for
// shape and dtype).
#include <hetero/model/model.hpp>

#include "arch_rules.hpp"
#include "hparam_ranges.hpp"
#include "value_checks.hpp"

#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/llama2c.hpp>
#include <hetero/model/rope_scaling.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cmath>
#include <cstring>

namespace hetero {

namespace {

using model_detail::ArchRules;
using model_detail::arch_rules;

// Anything larger is a corrupt header, and keeps shape products far from overflow.
constexpr int64_t kMaxDim = int64_t(1) << 24;

std::string shape_str(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

int64_t required_dim(const GgufFile& f, const std::string& key) {
    const auto v = f.get_uint(key);
    if (!v) throw Error(fmt::format("{}: metadata key '{}' is missing", f.path(), key));
    if (*v == 0 || *v > uint64_t(kMaxDim))
        throw Error(fmt::format("{}: metadata key '{}' = {} is out of range (1..{})", f.path(), key, *v, kMaxDim));
    return int64_t(*v);
}

int64_t optional_dim(const GgufFile& f, const std::string& key, int64_t fallback) {
    return f.has(key) ? required_dim(f, key) : fallback;
}

LlamaHParams read_hparams(const GgufFile& f) {
    const std::string& path = f.path();
    const auto arch = f.get_string("general.architecture");
    if (!arch) throw Error(fmt::format("{}: metadata key 'general.architecture' is missing", path));
    LlamaHParams hp;
    hp.arch = *arch;
    const ArchRules rules = arch_rules(hp.arch, path);
    const std::string a = hp.arch + ".";
    hp.n_embd = required_dim(f, a + "embedding_length");
    hp.n_layer = required_dim(f, a + "block_count");
    hp.n_head = required_dim(f, a + "attention.head_count");
    hp.n_head_kv = optional_dim(f, a + "attention.head_count_kv", hp.n_head);
    hp.n_ff = required_dim(f, a + "feed_forward_length");
    hp.n_ctx_train = f.has(a + "context_length") ? required_dim(f, a + "context_length") : 0;
    if (hp.n_embd % hp.n_head != 0 && !f.has(a + "attention.key_length"))
        throw Error(fmt::format("{}: embedding_length {} is not a multiple of head_count {}", path, hp.n_embd, hp.n_head));
    hp.head_dim = optional_dim(f, a + "attention.key_length", hp.n_embd / hp.n_head);
    if (f.has(a + "attention.value_length") && required_dim(f, a + "attention.value_length") != hp.head_dim)
        throw Error(fmt::format("{}: attention.value_length differs from key_length (not supported)", path));
    hp.rope_dims = optional_dim(f, a + "rope.dimension_count", hp.head_dim);
    if (hp.n_head_kv > hp.n_head || hp.n_head % hp.n_head_kv != 0)
        throw Error(fmt::format("{}: head_count {} is not a multiple of head_count_kv {}", path, hp.n_head, hp.n_head_kv));
    if (hp.rope_dims > hp.head_dim || hp.rope_dims % 2 != 0)
        throw Error(fmt::format("{}: rope.dimension_count {} must be even and at most the head size {}", path, hp.rope_dims,
                                hp.head_dim));
    hp.rope_freq_base = float(f.get_float(a + "rope.freq_base").value_or(10000.0));
    hp.norm_eps = float(f.get_float(a + "attention.layer_norm_rms_epsilon").value_or(1e-5));
    if (!(hp.rope_freq_base > 0.f) || !std::isfinite(hp.rope_freq_base))
        throw Error(fmt::format("{}: rope.freq_base {} must be a finite positive number", path, hp.rope_freq_base));
    if (!(hp.norm_eps >= 0.f) || !std::isfinite(hp.norm_eps) || hp.norm_eps > 1.f)
        throw Error(fmt::format("{}: layer_norm_rms_epsilon {} must be finite, in [0, 1]", path, hp.norm_eps));
    if (f.has(a + "rope.freq_base"))
        model_detail::require_in_range(f, a + "rope.freq_base", hp.rope_freq_base, model_detail::kMinRopeBase, model_detail::kMaxRopeBase);
    hp.rope_mode = rules.rope_mode;
    model_detail::read_arch_hparams(f, hp);
    return hp;
}

// Views a tensor as a weight after checking its shape and dtype.
WeightView view_of(const GgufFile& f, const GgufTensorInfo& t, const std::vector<int64_t>& expected, bool must_be_f32) {
    std::vector<int64_t> shape(t.ne.rbegin(), t.ne.rend());
    if (shape != expected)
        throw Error(fmt::format("{}: tensor '{}' has shape {} but the hyper-parameters need {}", f.path(), t.name,
                                shape_str(shape), shape_str(expected)));
    const auto dtype = hetero_dtype_from_ggml(t.ggml_type);
    if (!dtype)
        throw Error(fmt::format("{}: unsupported tensor type {} ({}) for tensor '{}' (supported: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_K, q3_K, q4_K, q5_K, q6_K)",
                                f.path(), ggml_type_name(t.ggml_type), t.ggml_type, t.name));
    if (must_be_f32 && *dtype != HETERO_DTYPE_F32)
        throw Error(fmt::format("{}: tensor '{}' has type {} but norms and biases must be f32", f.path(), t.name,
                                ggml_type_name(t.ggml_type)));
    return WeightView{t.name, *dtype, std::move(shape), t.data, t.bytes};
}

// rope_freqs.weight divides each rotated pair's frequency: a value outside
// the range real models use (1 to a few dozen) is damage, not a model.
void check_rope_factors(const GgufFile& f, const WeightView& w) {
    for (uint64_t i = 0; i < w.bytes / sizeof(float); ++i) {
        float x;
        std::memcpy(&x, w.data + i * sizeof x, sizeof x);  // the mapping need not align it
        if (!(x >= model_detail::kMinRopeFactor && x <= model_detail::kMaxRopeFactor))
            throw Error(fmt::format("{}: tensor 'rope_freqs.weight' element {} = {} is out of range [{}, {}] (RoPE frequency divisors)",
                                    f.path(), i, x, model_detail::kMinRopeFactor, model_detail::kMaxRopeFactor));
    }
}

// A constant the graph needs that the file does not hold as a tensor.
void add_derived(ModelFile& m, const std::string& name, std::vector<float> values) {
    auto owned = std::make_shared<const std::vector<float>>(std::move(values));
    m.weights[name] = WeightView{name, HETERO_DTYPE_F32, {int64_t(owned->size())}, reinterpret_cast<const uint8_t*>(owned->data()),
                                 owned->size() * sizeof(float)};
    m.derived.push_back(std::move(owned));
}

// RoPE factors (from rope_freqs.weight, else from Llama 3 scaling metadata)
// and the embedding scale.
void add_derived_constants(ModelFile& m, const GgufFile& gguf) {
    LlamaHParams& hp = m.hparams;
    const std::string a = hp.arch + ".", path = gguf.path();
    if (const GgufTensorInfo* t = gguf.find_tensor("rope_freqs.weight")) {
        m.weights["rope_freqs.weight"] = view_of(gguf, *t, {hp.rope_dims / 2}, true);
        check_rope_factors(gguf, m.weights["rope_freqs.weight"]);
    } else if (gguf.get_string(a + "rope.scaling.type").value_or("") == "llama3") {
        auto need_float = [&](const std::string& key) {
            const auto v = gguf.get_float(a + key);
            if (!v || !(*v > 0.0) || !std::isfinite(*v))
                throw Error(fmt::format("{}: Llama 3 RoPE scaling needs metadata key '{}{}' (a positive number)", path, a, key));
            return *v;
        };
        Llama3RopeScaling s;
        s.factor = need_float("rope.scaling.factor");
        s.low_freq_factor = need_float("rope.scaling.low_freq_factor");
        s.high_freq_factor = need_float("rope.scaling.high_freq_factor");
        s.original_context = need_float("rope.scaling.original_context_length");
        if (!(s.high_freq_factor > s.low_freq_factor))
            throw Error(fmt::format("{}: rope.scaling.high_freq_factor must exceed low_freq_factor", path));
        add_derived(m, "rope_freqs.weight", llama3_rope_factors(s, hp.rope_freq_base, hp.rope_dims));
    }
    if (hp.embd_scale) add_derived(m, "embd_scale", std::vector<float>(size_t(hp.n_embd), std::sqrt(float(hp.n_embd))));
}

}  // namespace

LlamaHParams plain_llama_hparams(const LlamaSizes& s) {
    LlamaHParams hp;
    hp.arch = "llama";
    hp.n_vocab = s.n_vocab;
    hp.n_embd = s.n_embd;
    hp.n_layer = s.n_layer;
    hp.n_head = s.n_head;
    hp.n_head_kv = s.n_head_kv;
    hp.n_ff = s.n_ff;
    hp.n_ctx_train = s.n_ctx_train;
    hp.head_dim = s.n_embd / s.n_head;
    hp.rope_dims = hp.head_dim;
    return hp;
}

const WeightView& ModelFile::weight(const std::string& name) const {
    auto it = weights.find(name);
    if (it == weights.end()) throw Error(fmt::format("{}: model has no tensor '{}'", path, name));
    return it->second;
}

ModelFile load_model_from_gguf(GgufFile gguf) {
    ModelFile m;
    m.format = ModelFormat::GGUF;
    m.path = gguf.path();
    m.hparams = read_hparams(gguf);
    LlamaHParams& hp = m.hparams;
    const std::string& path = gguf.path();

    const GgufTensorInfo* embd = gguf.find_tensor("token_embd.weight");
    if (!embd) throw Error(fmt::format("{}: required tensor 'token_embd.weight' is missing", path));
    if (embd->ne.size() != 2)
        throw Error(fmt::format("{}: tensor 'token_embd.weight' has {} dimensions, expected 2", path, embd->ne.size()));
    hp.n_vocab = embd->ne[1];
    const std::string a = hp.arch + ".";
    if (const auto tokens = gguf.has("tokenizer.ggml.tokens") ? gguf.array_size("tokenizer.ggml.tokens") : 0;
        tokens != 0 && tokens != uint64_t(hp.n_vocab))
        throw Error(fmt::format("{}: tokenizer.ggml.tokens has {} entries but token_embd.weight has {} rows", path, tokens,
                                hp.n_vocab));
    if (const auto v = gguf.get_uint(a + "vocab_size"); v && *v != uint64_t(hp.n_vocab))
        throw Error(fmt::format("{}: {}vocab_size {} differs from the {} rows of token_embd.weight", path, a, *v, hp.n_vocab));

    const int64_t D = hp.n_embd, Q = hp.n_head * hp.head_dim, KV = hp.n_head_kv * hp.head_dim, F = hp.n_ff, V = hp.n_vocab;
    auto need = [&](const std::string& name, std::vector<int64_t> shape, bool f32) {
        const GgufTensorInfo* t = gguf.find_tensor(name);
        if (!t)
            throw Error(fmt::format("{}: required tensor '{}' (shape {}) is missing", path, name, shape_str(shape)));
        m.weights[name] = view_of(gguf, *t, shape, f32);
    };
    auto maybe = [&](const std::string& name, std::vector<int64_t> shape, bool f32) {
        if (gguf.find_tensor(name)) need(name, std::move(shape), f32);
    };
    // Consecutive row ranges of one fused tensor, viewed under the separate names.
    auto split_rows = [&](const std::string& fused, const std::vector<int64_t>& shape,
                          const std::vector<std::pair<std::string, int64_t>>& parts) {
        need(fused, shape, false);
        const WeightView whole = m.weights.at(fused);
        m.weights.erase(fused);
        const uint64_t row = sdk::row_bytes(whole.dtype, whole.shape[1]);
        int64_t r0 = 0;
        for (const auto& [name, rows] : parts) {
            m.weights[name] = WeightView{name, whole.dtype, {rows, whole.shape[1]}, whole.data + uint64_t(r0) * row, uint64_t(rows) * row};
            r0 += rows;
        }
    };
    const ArchRules rules = arch_rules(hp.arch, path);
    const bool qkv_bias = rules.qkv_bias;
    need("token_embd.weight", {V, D}, false);
    need("output_norm.weight", {D}, true);
    if (!rules.tied) maybe("output.weight", {V, D}, false);
    hp.tied_output = m.weights.count("output.weight") == 0;
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string b = fmt::format("blk.{}.", l);
        need(b + "attn_norm.weight", {D}, true);
        if (rules.fused && gguf.find_tensor(b + "attn_qkv.weight")) {
            split_rows(b + "attn_qkv.weight", {Q + 2 * KV, D}, {{b + "attn_q.weight", Q}, {b + "attn_k.weight", KV}, {b + "attn_v.weight", KV}});
        } else {
            need(b + "attn_q.weight", {Q, D}, false);
            need(b + "attn_k.weight", {KV, D}, false);
            need(b + "attn_v.weight", {KV, D}, false);
        }
        need(b + "attn_output.weight", {D, Q}, false);
        need(b + "ffn_norm.weight", {D}, true);
        if (rules.fused) {
            // The first half of ffn_up is the gate, the second the up projection.
            split_rows(b + "ffn_up.weight", {2 * F, D}, {{b + "ffn_gate.weight", F}, {b + "ffn_up.weight", F}});
        } else {
            need(b + "ffn_gate.weight", {F, D}, false);
            need(b + "ffn_up.weight", {F, D}, false);
        }
        need(b + "ffn_down.weight", {D, F}, false);
        if (rules.qk_norm) {
            need(b + "attn_q_norm.weight", {hp.head_dim}, true);
            need(b + "attn_k_norm.weight", {hp.head_dim}, true);
        }
        if (rules.post_norms) {
            need(b + "post_attention_norm.weight", {D}, true);
            need(b + "post_ffw_norm.weight", {D}, true);
        }
        for (const auto& [bias, rows] : {std::pair{"attn_q.bias", Q}, {"attn_k.bias", KV}, {"attn_v.bias", KV}}) {
            if (qkv_bias) need(b + bias, {rows}, true);
            else maybe(b + bias, {rows}, true);
        }
        maybe(b + "attn_output.bias", {D}, true);
    }
    // Tensors of layers the metadata does not count: the file and its
    // block_count disagree (running the first layers only would be wrong).
    for (const GgufTensorInfo& t : gguf.tensors()) {
        unsigned layer = 0;
        if (std::sscanf(t.name.c_str(), "blk.%u.", &layer) == 1 && int64_t(layer) >= hp.n_layer)
            throw Error(fmt::format("{}: tensor '{}' belongs to layer {}, but {}block_count is {}", path, t.name, layer, a, hp.n_layer));
    }
    add_derived_constants(m, gguf);
    m.gguf.emplace(std::move(gguf));  // the views point into its mapping, which does not move
    model_detail::check_weight_values(m);
    return m;
}

ModelFile load_model(const std::string& path) {
    char magic[4] = {};
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
        const size_t n = std::fread(magic, 1, 4, f);
        std::fclose(f);
        if (n == 4 && std::memcmp(magic, "GGUF", 4) == 0) return load_model_from_gguf(GgufFile::open(path));
    } else {
        throw Error(fmt::format("{}: cannot open model file", path));
    }
    return load_llama2c_model(path);
}

}  // namespace hetero
