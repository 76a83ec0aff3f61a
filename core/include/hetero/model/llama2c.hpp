// llama2.c files: checkpoints (.bin: a 7 x int32 header then float32 arrays)
// and tokenizer.bin (max token length, then score/length/bytes per token).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

class ModelFile;

struct Llama2cConfig {
    int32_t dim = 0;
    int32_t hidden_dim = 0;
    int32_t n_layers = 0;
    int32_t n_heads = 0;
    int32_t n_kv_heads = 0;
    int32_t vocab_size = 0;  // always positive here
    int32_t seq_len = 0;
    bool shared_classifier = true;  // header vocab_size > 0: wcls is the token embedding
};

// Reads and validates the header, and checks the file size matches it exactly.
Llama2cConfig read_llama2c_config(const std::string& path);

// Maps a checkpoint and exposes its arrays under GGUF's canonical names as
// zero-copy F32 views (hparams: rope base 10000, eps 1e-5, adjacent RoPE).
ModelFile load_llama2c_model(const std::string& path);

struct Llama2cVocab {
    int32_t max_token_length = 0;
    std::vector<std::string> tokens;
    std::vector<float> scores;
};

// Reads exactly `vocab_size` tokens; a short file, a bad length or bytes left
// over are errors.
Llama2cVocab read_llama2c_tokenizer(const std::string& path, int32_t vocab_size);

}  // namespace hetero
