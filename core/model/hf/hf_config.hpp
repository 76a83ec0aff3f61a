// config.json of a Hugging Face model: which GGUF architecture it becomes
// and its hyper-parameters, each checked against the range real models keep
// (an error names config.json, the key and the value).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace hetero::model_detail {

struct HfConfig {
    std::string path;     // of config.json, for messages
    std::string hf_arch;  // architectures[0], e.g. "Qwen2ForCausalLM"
    std::string arch;     // the GGUF architecture: llama, qwen2, qwen3, phi3, gemma2, gemma3
    nlohmann::json params;  // config.json, with a text_config's keys lifted to the top
    nlohmann::json rope;    // rope_parameters / rope_scaling, with rope_theta and friends mirrored in

    int64_t n_layer = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0, n_vocab = 0;
    int64_t head_dim = 0;               // per head; config's head_dim, else n_embd / n_head
    bool head_dim_given = false;        // config.json names head_dim
    bool tied_embeddings = false;       // tie_word_embeddings
    std::optional<int64_t> n_ctx;       // max_position_embeddings (or another name for it)
    std::optional<double> rms_eps;      // rms_norm_eps
    std::optional<double> rope_theta;   // of the global layers
    std::optional<double> rope_theta_local;  // of the sliding-window layers (Gemma 3)
    std::string rope_type;              // "" or rope_scaling's type: linear, llama3, ...
};

// Reads `dir`/config.json; throws hetero::Error for an architecture hetero
// does not run, a missing or out-of-range hyper-parameter, or weights that
// are already quantized (quantization_config).
HfConfig read_hf_config(const std::string& dir);

}  // namespace hetero::model_detail
