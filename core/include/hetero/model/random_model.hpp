// Writes llama-architecture GGUF files with random weights at any shape, for
// speed measurements on real model sizes without shipping gigabytes. The
// vocabulary is a synthetic SentencePiece one (control, byte and filler
// tokens), so `hetero run` works on the result too.
#pragma once

#include <cstdint>
#include <string>

namespace hetero {

struct RandomModelShape {
    int64_t n_embd = 2048, n_ff = 5632, n_layer = 22, n_head = 32, n_head_kv = 4, n_vocab = 32000, n_ctx = 2048;
};

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
// Q5_1, IQ4_NL, Q2_K .. Q6_K; K-quants need n_embd and n_ff multiples of
// 256); norms stay F32. The
// same seed gives the same values before encoding, whatever the dtype.
void write_random_model(const std::string& path, const RandomModelShape& shape, uint32_t out_dtype, uint64_t seed,
                        const std::string& arch = "llama");

}  // namespace hetero
