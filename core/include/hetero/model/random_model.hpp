// Writes llama-architecture GGUF files with random weights at any shape, for
// speed measurements on real model sizes without shipping gigabytes. The
// vocabulary is a synthetic SentencePiece one (control, byte and filler
// tokens), so `hetero run` works on the result too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

struct RandomModelShape {
    int64_t n_embd = 2048, n_ff = 5632, n_layer = 22, n_head = 32, n_head_kv = 4, n_vocab = 32000, n_ctx = 2048;
    // 0: n_embd / n_head. Any other value is written as attention.key_length
    // and value_length, and Q / attn_output are n_head * head_dim wide.
    int64_t head_dim = 0;

    int64_t head_size() const { return head_dim > 0 ? head_dim : n_embd / n_head; }
};

// The largest value of each field write_random_model takes: above every
// released model's, far below the loader's limits and size overflow.
inline constexpr RandomModelShape kRandomModelLimits{65536, 262144, 1024, 1024, 1024, 1 << 20, 1 << 24, 1024};

// The synthetic tokenizer's control and byte tokens: the smallest vocabulary.
inline constexpr int64_t kRandomModelMinVocab = 259;

// Throws Error naming the first problem: a field out of range, heads that do
// not divide the embedding (without head_dim), kv heads that do not divide
// the heads, an odd head size (RoPE rotates pairs), or rows that `out_dtype`'s
// 32-element blocks cannot hold.
void check_random_model_shape(const RandomModelShape& shape, uint32_t out_dtype);

// The dtype a matrix with rows of `cols` values is written in. K-quant rows
// that are not a multiple of 256 fall back as llama-quantize does: q2_K and
// q3_K to iq4_nl, q4_K to q5_0, q5_K to q5_1, q6_K to q8_0, and to f16 where
// the row is not a multiple of 32 either. Every other dtype is kept.
uint32_t random_model_matrix_dtype(uint32_t out_dtype, int64_t cols);

// One line per row width that falls back (random_model_matrix_dtype), naming
// the width, the matrices and the dtype written; empty when none does.
std::vector<std::string> random_model_fallbacks(const RandomModelShape& shape, uint32_t out_dtype);

// Known shapes: "tinyllama-1.1b" (the default above), "llama-7b", "mistral-7b" (grouped-query,
// 8 KV heads), "stories15m", "tiny",
// "tiny-k" (tiny with widths that are multiples of 256, for K-quants).
RandomModelShape random_model_preset(const std::string& name);

// Architectures write_random_model knows: "llama" (the default), "llama3"
// (llama with Llama 3 RoPE factors in rope_freqs.weight), "llama3-meta" (the
// same factors as rope.scaling.* metadata only), "llama-linear" (linear RoPE
// scaling), "mistral", "qwen2", "qwen3", "phi3", "gemma2", "gemma3". Every one
// but plain llama gets norms around 1 and a sharper classifier, so greedy
// decoding has clear winners; sliding windows are short (8 tokens) so that a
// few dozen tokens cross them.
const char* random_model_archs();

// out_dtype: hetero_dtype of the matrices (F32, F16, Q8_0, Q4_0, Q4_1, Q5_0,
// Q5_1, IQ4_NL, Q2_K .. Q6_K; K-quant rows of other widths fall back, see
// random_model_matrix_dtype); norms stay F32. The shape is checked first
// (check_random_model_shape). The same seed gives the same values before
// encoding, whatever the dtype.
void write_random_model(const std::string& path, const RandomModelShape& shape, uint32_t out_dtype, uint64_t seed,
                        const std::string& arch = "llama");

}  // namespace hetero
