// A loaded model: hyper-parameters plus zero-copy views of every weight,
// from a GGUF file or a llama2.c checkpoint (load_model detects which).
//
// Weight names are GGUF's canonical ones: token_embd.weight,
// output_norm.weight, output.weight (absent when the classifier is tied to
// the embedding), blk.N.{attn_norm,attn_q,attn_k,attn_v,attn_output,
// ffn_norm,ffn_gate,ffn_up,ffn_down}.weight and, for Qwen2,
// blk.N.attn_{q,k,v}.bias. Shapes are hetero's (outermost first): a GGUF
// tensor with ne = [K, M] is {M, K}. Matrices may be F32, F16, BF16, Q8_0 or
// Q4_0; norms and biases are F32. Every required tensor is checked for
// presence, shape and dtype when the model loads.
#pragma once

#include <hetero/model/gguf.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hetero {

struct LlamaHParams {
    std::string arch;  // "llama", "qwen2"
    int64_t n_vocab = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t n_ff = 0;
    int64_t n_ctx_train = 0;
    int64_t head_dim = 0;
    int64_t rope_dims = 0;  // rotated dimensions per head (<= head_dim, even)
    float rope_freq_base = 10000.f;
    float norm_eps = 1e-5f;
    int rope_mode = 0;  // hetero_rope_mode
    bool tied_output = false;
};

struct WeightView {
    std::string name;
    uint32_t dtype = 0;          // hetero_dtype
    std::vector<int64_t> shape;  // outermost first
    const uint8_t* data = nullptr;
    uint64_t bytes = 0;
};

enum class ModelFormat { GGUF, LLAMA2C };

class ModelFile {
public:
    ModelFormat format = ModelFormat::GGUF;
    std::string path;
    LlamaHParams hparams;
    std::map<std::string, WeightView> weights;
    std::optional<GgufFile> gguf;  // set for GGUF models (tokenizer metadata lives there)
    std::shared_ptr<const void> storage;  // keeps a llama2.c mapping alive

    // Throws hetero::Error naming the missing tensor.
    const WeightView& weight(const std::string& name) const;
    bool has(const std::string& name) const { return weights.count(name) != 0; }
};

// Opens a GGUF (by its magic) or a llama2.c checkpoint; throws hetero::Error.
ModelFile load_model(const std::string& path);

// Builds the model description from an already opened GGUF file.
ModelFile load_model_from_gguf(GgufFile gguf);

}  // namespace hetero
