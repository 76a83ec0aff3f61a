#include <hetero/error.hpp>
#include <hetero/model/convert.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/model/rope_scaling.hpp>
#include <hetero/progress.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace hetero {

RandomModelShape random_model_preset(const std::string& name) {
    if (name == "tinyllama-1.1b") return {};
    if (name == "llama-7b") return {4096, 11008, 32, 32, 32, 32000, 4096};
    if (name == "mistral-7b") return {4096, 14336, 32, 32, 8, 32000, 32768};  // grouped-query: 8 KV heads
    if (name == "stories15m") return {288, 768, 6, 6, 6, 32000, 256};
    if (name == "tiny") return {64, 192, 2, 4, 2, 512, 128};
    if (name == "tiny-k") return {256, 512, 2, 4, 2, 512, 128};  // widths fit K-quant super-blocks
    throw Error(fmt::format("unknown model shape '{}' (known: tinyllama-1.1b, llama-7b, mistral-7b, stories15m, tiny, tiny-k)", name));
}

namespace {

void check_range(const char* what, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) throw Error(fmt::format("random model: {} {} is out of range ({} .. {})", what, v, lo, hi));
}

// Every distinct row width of the matrices, with the matrices that have it.
std::vector<std::pair<int64_t, std::string>> row_widths(const RandomModelShape& s) {
    std::vector<std::pair<int64_t, std::string>> w = {{s.n_embd, "the embedding width: token_embd, output, attn_q/k/v, ffn_gate/up"}};
    if (const int64_t q = s.n_head * s.head_size(); q != s.n_embd) w.emplace_back(q, "heads x head size: attn_output");
    if (s.n_ff != s.n_embd) w.emplace_back(s.n_ff, "the feed-forward width: ffn_down");
    return w;
}

}  // namespace

void check_random_model_shape(const RandomModelShape& s, uint32_t dtype) {
    const RandomModelShape& m = kRandomModelLimits;
    check_range("embedding width", s.n_embd, 1, m.n_embd);
    check_range("feed-forward width", s.n_ff, 1, m.n_ff);
    check_range("layer count", s.n_layer, 1, m.n_layer);
    check_range("head count", s.n_head, 1, m.n_head);
    check_range("kv head count", s.n_head_kv, 1, m.n_head_kv);
    if (s.n_vocab < kRandomModelMinVocab)
        throw Error(fmt::format("random model: vocabulary {} is smaller than the synthetic tokenizer's {} tokens (3 control, 256 bytes)",
                                s.n_vocab, kRandomModelMinVocab));
    check_range("vocabulary", s.n_vocab, kRandomModelMinVocab, m.n_vocab);
    check_range("context length", s.n_ctx, 1, m.n_ctx);
    if (s.head_dim != 0) check_range("head size", s.head_dim, 2, m.head_dim);
    if (s.head_dim == 0 && s.n_embd % s.n_head)
        throw Error(fmt::format("random model: {} heads do not divide the embedding width {} (give a head size to decouple them)", s.n_head,
                                s.n_embd));
    if (s.n_head % s.n_head_kv)
        throw Error(fmt::format("random model: {} kv heads do not divide the {} heads (each kv head serves a whole group)", s.n_head_kv, s.n_head));
    if (s.head_size() % 2) throw Error(fmt::format("random model: head size {} is odd; RoPE rotates pairs of values", s.head_size()));
    if (!sdk::is_block32_dtype(dtype)) return;  // f32, f16 take any row; K-quants fall back
    for (const auto& [w, what] : row_widths(s))
        if (w % 32)
            throw Error(fmt::format("random model: {} stores rows in blocks of 32 values, but rows of {} values ({}) do not fill them; "
                                    "use f16, f32 or a K-quant (which falls back per matrix)",
                                    sdk::dtype_name(dtype), w, what));
}

uint32_t random_model_matrix_dtype(uint32_t dtype, int64_t cols) {
    if (!sdk::is_kquant_dtype(dtype) || cols % sdk::kKBlock == 0) return dtype;
    // llama-quantize's table (llama_tensor_get_type, convert_incompatible_tensor).
    uint32_t legacy = HETERO_DTYPE_IQ4_NL;
    if (dtype == HETERO_DTYPE_Q4_K) legacy = HETERO_DTYPE_Q5_0;
    if (dtype == HETERO_DTYPE_Q5_K) legacy = HETERO_DTYPE_Q5_1;
    if (dtype == HETERO_DTYPE_Q6_K) legacy = HETERO_DTYPE_Q8_0;
    return cols % 32 == 0 ? legacy : uint32_t(HETERO_DTYPE_F16);
}

std::vector<std::string> random_model_fallbacks(const RandomModelShape& s, uint32_t dtype) {
    std::vector<std::string> out;
    for (const auto& [w, what] : row_widths(s))
        if (const uint32_t dt = random_model_matrix_dtype(dtype, w); dt != dtype)
            out.push_back(fmt::format("rows of {} values ({}) are not a multiple of 256: written as {} instead of {}, as llama-quantize does",
                                      w, what, sdk::dtype_name(dt), sdk::dtype_name(dtype)));
    return out;
}

namespace {

// rows x cols uniform(-a, a) values encoded as `dtype`, generated in parallel
// from per-row seeds so the result does not depend on the thread count.
std::vector<uint8_t> random_matrix(int64_t rows, int64_t cols, uint32_t dtype, float a, uint64_t seed) {
    const uint64_t row_bytes = sdk::row_bytes(dtype, cols);
    std::vector<uint8_t> out(row_bytes * uint64_t(rows));
    const unsigned n_threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n_threads; ++t) {
        pool.emplace_back([&, t] {
            std::vector<float> row(static_cast<size_t>(cols));
            for (int64_t r = t; r < rows; r += n_threads) {
                std::mt19937 rng(uint32_t(seed * 1000003u + uint64_t(r)));
                std::uniform_real_distribution<float> dist(-a, a);
                for (auto& v : row) v = dist(rng);
                sdk::row_from_f32(dtype, row.data(), out.data() + row_bytes * uint64_t(r), cols);
            }
        });
    }
    for (auto& th : pool) th.join();
    return out;
}

}  // namespace

const char* random_model_archs() { return "llama, llama3, llama3-meta, llama-linear, mistral, qwen2, qwen3, phi3, gemma2, gemma3"; }

namespace {

// What one architecture variant writes beyond the llama block.
struct ArchVariant {
    std::string gguf_arch;    // general.architecture
    bool plain = false;       // the historical llama file: unit norms, no sharpening
    bool qkv_bias = false, qk_norm = false, fused = false, post_norms = false, tied = false;
};

ArchVariant variant_of(const std::string& arch) {
    ArchVariant v;
    v.gguf_arch = arch;
    if (arch == "llama") v.plain = true;
    else if (arch == "llama3" || arch == "llama3-meta" || arch == "llama-linear") v.gguf_arch = "llama";
    else if (arch == "qwen2") v.qkv_bias = true;
    else if (arch == "qwen3") v.qk_norm = true;
    else if (arch == "phi3") v.fused = true;
    else if (arch == "gemma2") v.post_norms = v.tied = true;
    else if (arch == "gemma3") v.post_norms = v.tied = v.qk_norm = true;
    else if (arch != "mistral") throw Error(fmt::format("unknown architecture '{}' (known: {})", arch, random_model_archs()));
    return v;
}

constexpr uint32_t kSlidingWindow = 8;
// Llama 3.1's factor and bands, against a short original context so the
// blended band falls on the tiny head sizes' frequencies.
constexpr Llama3RopeScaling kLlama3Scaling{8.0, 1.0, 4.0, 64.0};

void add_hparams(GgufWriter& w, const std::string& arch, const std::string& gguf_arch, const RandomModelShape& s, int64_t hd) {
    const std::string a = gguf_arch + ".";
    w.add_uint32(a + "vocab_size", uint32_t(s.n_vocab));
    w.add_uint32(a + "context_length", uint32_t(s.n_ctx));
    w.add_uint32(a + "embedding_length", uint32_t(s.n_embd));
    w.add_uint32(a + "block_count", uint32_t(s.n_layer));
    w.add_uint32(a + "feed_forward_length", uint32_t(s.n_ff));
    w.add_uint32(a + "attention.head_count", uint32_t(s.n_head));
    w.add_uint32(a + "attention.head_count_kv", uint32_t(s.n_head_kv));
    w.add_uint32(a + "rope.dimension_count", uint32_t(hd));
    w.add_float32(a + "rope.freq_base", arch == "gemma3" ? 1000000.f : 10000.f);
    w.add_float32(a + "attention.layer_norm_rms_epsilon", arch.starts_with("gemma") ? 1e-6f : 1e-5f);
    // Gemma files always carry the head size; others where it is not n_embd / n_head.
    if (arch.starts_with("gemma") || hd * s.n_head != s.n_embd) {
        w.add_uint32(a + "attention.key_length", uint32_t(hd));
        w.add_uint32(a + "attention.value_length", uint32_t(hd));
    }
    if (arch == "gemma2" || arch == "gemma3") w.add_uint32(a + "attention.sliding_window", kSlidingWindow);
    if (arch == "gemma2") {
        w.add_float32(a + "attn_logit_softcapping", 4.f);  // small enough to bend this model's scores
        w.add_float32(a + "final_logit_softcapping", 8.f);
    }
    if (arch == "gemma3") w.add_float32(a + "rope.freq_base_swa", 10000.f);
    if (arch == "mistral") w.add_uint32(a + "attention.sliding_window", kSlidingWindow);
    if (arch == "llama-linear") {
        w.add_string(a + "rope.scaling.type", "linear");
        w.add_float32(a + "rope.scaling.factor", 4.f);
    }
    if (arch == "llama3-meta") {
        w.add_string(a + "rope.scaling.type", "llama3");
        w.add_float32(a + "rope.scaling.factor", float(kLlama3Scaling.factor));
        w.add_float32(a + "rope.scaling.low_freq_factor", float(kLlama3Scaling.low_freq_factor));
        w.add_float32(a + "rope.scaling.high_freq_factor", float(kLlama3Scaling.high_freq_factor));
        w.add_uint32(a + "rope.scaling.original_context_length", uint32_t(kLlama3Scaling.original_context));
    }
}

}  // namespace

void write_random_model(const std::string& path, const RandomModelShape& s, uint32_t dtype, uint64_t seed, const std::string& arch) {
    if (dtype != HETERO_DTYPE_F32 && dtype != HETERO_DTYPE_F16 && !sdk::is_quant_dtype(dtype))
        throw Error("random model: matrices must be f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_K, q3_K, q4_K, q5_K, q6_K or e0m4");
    check_random_model_shape(s, dtype);
    const ArchVariant av = variant_of(arch);
    const int64_t hd = s.head_size(), q = hd * s.n_head, kv = hd * s.n_head_kv;
    GgufWriter w;
    w.add_string("general.architecture", av.gguf_arch);
    w.add_string("general.name", "random");
    add_hparams(w, arch, av.gguf_arch, s, hd);
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(fmt::format("<0x{:02X}>", b));
        types.push_back(6);
    }
    while (int64_t(tokens.size()) < s.n_vocab) {
        tokens.push_back(fmt::format("\xe2\x96\x81tok{}", tokens.size()));
        types.push_back(1);
    }
    std::vector<float> scores(tokens.size(), 0.f);
    for (size_t i = 0; i < scores.size(); ++i) scores[i] = -float(i);
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_float32_array("tokenizer.ggml.scores", scores);
    w.add_int32_array("tokenizer.ggml.token_type", types);
    w.add_uint32("tokenizer.ggml.bos_token_id", 1);
    w.add_uint32("tokenizer.ggml.eos_token_id", 2);
    w.add_uint32("tokenizer.ggml.unknown_token_id", 0);

    uint64_t salt = seed;
    auto progress = std::make_unique<ProgressTask>("generating " + path, uint64_t(s.n_layer + 2), "steps");
    // Each matrix in its own dtype: K-quants fall back on rows they cannot hold.
    auto matrix_data = [&](int64_t rows, int64_t cols, float a) {
        const uint32_t dt = random_model_matrix_dtype(dtype, cols);
        return std::pair{random_matrix(rows, cols, dt, a, ++salt), dt};
    };
    auto add_matrix = [&](const std::string& name, int64_t rows, int64_t cols, uint32_t dt, const std::vector<uint8_t>& data) {
        w.add_tensor(name, *ggml_type_from_hetero(dt), {cols, rows}, data.data(), data.size());
    };
    auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
        const auto [data, dt] = matrix_data(rows, cols, 1.f / std::sqrt(float(cols)));
        add_matrix(name, rows, cols, dt, data);
    };
    auto vector = [&](const std::string& name, int64_t n, float center, float spread) {
        std::vector<float> v(size_t(n), center);
        if (spread > 0.f) {
            std::mt19937 rng(uint32_t(++salt));
            std::uniform_real_distribution<float> dist(center - spread, center + spread);
            for (float& x : v) x = dist(rng);
        }
        w.add_tensor(name, GGML_TYPE_ID_F32, {n}, v.data(), v.size() * 4);
    };
    // Norm weights: ones for the historical file, else around 1 so that a norm
    // applied with the wrong weight shows.
    auto norm = [&](const std::string& name, int64_t n) { vector(name, n, 1.f, av.plain ? 0.f : 0.5f); };
    {
        // Gemma scales embeddings up by sqrt(n_embd): keep their product near 1.
        const float a = av.gguf_arch.starts_with("gemma") ? 1.f / std::sqrt(float(s.n_embd)) : 1.f;
        const auto [emb, dt] = matrix_data(s.n_vocab, s.n_embd, a);
        add_matrix("token_embd.weight", s.n_vocab, s.n_embd, dt, emb);
        progress->advance(1);
    }
    if (arch == "llama3") {
        const std::vector<float> f = llama3_rope_factors(kLlama3Scaling, 10000.0, hd);
        w.add_tensor("rope_freqs.weight", GGML_TYPE_ID_F32, {int64_t(f.size())}, f.data(), f.size() * 4);
    }
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string b = fmt::format("blk.{}.", l);
        norm(b + "attn_norm.weight", s.n_embd);
        if (av.fused) {
            matrix(b + "attn_qkv.weight", q + 2 * kv, s.n_embd);
        } else {
            matrix(b + "attn_q.weight", q, s.n_embd);
            matrix(b + "attn_k.weight", kv, s.n_embd);
            matrix(b + "attn_v.weight", kv, s.n_embd);
        }
        if (av.qkv_bias) {
            vector(b + "attn_q.bias", q, 0.f, 0.2f);
            vector(b + "attn_k.bias", kv, 0.f, 0.2f);
            vector(b + "attn_v.bias", kv, 0.f, 0.2f);
        }
        if (av.qk_norm) {
            norm(b + "attn_q_norm.weight", hd);
            norm(b + "attn_k_norm.weight", hd);
        }
        matrix(b + "attn_output.weight", s.n_embd, q);
        if (av.post_norms) norm(b + "post_attention_norm.weight", s.n_embd);
        norm(b + "ffn_norm.weight", s.n_embd);
        if (av.fused) {
            matrix(b + "ffn_up.weight", 2 * s.n_ff, s.n_embd);  // gate rows, then up rows
        } else {
            matrix(b + "ffn_gate.weight", s.n_ff, s.n_embd);
            matrix(b + "ffn_up.weight", s.n_ff, s.n_embd);
        }
        matrix(b + "ffn_down.weight", s.n_embd, s.n_ff);
        if (av.post_norms) norm(b + "post_ffw_norm.weight", s.n_embd);
        progress->advance(1);
    }
    norm("output_norm.weight", s.n_embd);
    if (!av.tied && av.plain) matrix("output.weight", s.n_vocab, s.n_embd);
    if (!av.tied && !av.plain) {
        // Zero classifier rows for <unk> and <s>: greedy decoding never picks
        // them (runtimes differ on whether <s> ends a generation).
        auto [data, dt] = matrix_data(s.n_vocab, s.n_embd, 8.f / std::sqrt(float(s.n_embd)));
        std::vector<uint8_t> zero_row(sdk::row_bytes(dt, s.n_embd));
        const std::vector<float> zeros(size_t(s.n_embd), 0.f);
        sdk::row_from_f32(dt, zeros.data(), zero_row.data(), s.n_embd);
        for (int r = 0; r < 2; ++r) std::copy(zero_row.begin(), zero_row.end(), data.begin() + ptrdiff_t(r * zero_row.size()));
        add_matrix("output.weight", s.n_vocab, s.n_embd, dt, data);
    }
    progress->advance(1);
    progress.reset();
    w.write(path);
}

}  // namespace hetero
