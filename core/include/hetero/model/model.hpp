// A loaded model: hyper-parameters plus zero-copy views of every weight,
// from a GGUF file or a llama2.c checkpoint (load_model detects which).
//
// Weight names are GGUF's canonical ones: token_embd.weight,
// output_norm.weight, output.weight (absent when the classifier is tied to
// the embedding), blk.N.{attn_norm,attn_q,attn_k,attn_v,attn_output,
// ffn_norm,ffn_gate,ffn_up,ffn_down}.weight and, for Qwen2,
// blk.N.attn_{q,k,v}.bias; per architecture also blk.N.attn_{q,k}_norm,
// post_attention_norm, post_ffw_norm and rope_freqs.weight. Fused tensors
// (phi3's attn_qkv, and its ffn_up holding gate and up) appear as row views
// under the separate names. Shapes are hetero's (outermost first): a GGUF
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
    std::string arch;  // "llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"
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

    // Variations of the llama block the other architectures need.
    float rope_freq_scale = 1.f;     // linear RoPE scaling: 1 / rope.scaling.factor
    float rope_freq_base_swa = 0.f;  // RoPE base of sliding-window layers; 0 = rope_freq_base
    float rope_freq_scale_swa = 0.f; // frequency scale of sliding-window layers; 0 = rope_freq_scale
    int64_t n_swa = 0;               // sliding-window length in tokens (0 = none)
    std::vector<bool> swa_layers;    // per layer: attends through the window (empty = no layer)
    float attn_softcap = 0.f;        // c * tanh(score / c) before the softmax (0 = none)
    float final_softcap = 0.f;       // the same on the logits
    float attn_scale = 0.f;          // score scale; 0 = 1 / sqrt(head_dim)
    bool embd_scale = false;         // embeddings times sqrt(n_embd)
    bool qk_norm = false;            // per-head RMSNorm of Q and K (attn_q_norm, attn_k_norm)
    bool post_norms = false;         // post_attention_norm and post_ffw_norm on the branch outputs
    bool gelu_ffn = false;           // GELU(tanh)-gated FFN instead of SwiGLU
    // <arch>.pooling_type: how an embedding pools the token states (0 none,
    // 1 mean, 2 cls, 3 last, 4 rank, as GGUF writers number them); -1 = absent.
    int32_t pooling_type = -1;

    bool layer_swa(int64_t l) const { return n_swa > 0 && size_t(l) < swa_layers.size() && swa_layers[size_t(l)]; }
};

// The sizes of a plain llama, in the order of the fields above.
struct LlamaSizes {
    int64_t n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx_train;
};

// A plain llama of these sizes: heads of n_embd / n_head, each rotated
// whole; every other field at its default.
LlamaHParams plain_llama_hparams(const LlamaSizes& s);

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
    // Constants the loader derives (scales, computed RoPE factors); weights may point into them.
    std::vector<std::shared_ptr<const std::vector<float>>> derived;

    // Throws hetero::Error naming the missing tensor.
    const WeightView& weight(const std::string& name) const;
    bool has(const std::string& name) const { return weights.count(name) != 0; }
};

// Opens a GGUF (by its magic) or a llama2.c checkpoint; throws hetero::Error.
ModelFile load_model(const std::string& path);

// Builds the model description from an already opened GGUF file.
ModelFile load_model_from_gguf(GgufFile gguf);

}  // namespace hetero
