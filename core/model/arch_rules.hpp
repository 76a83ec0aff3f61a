// What each supported GGUF architecture adds to the llama block (private to
// core/model): which tensors it needs, and the hyper-parameters it reads
// beyond the common ones.
#pragma once

#include <hetero/model/gguf.hpp>
#include <hetero/model/model.hpp>

#include <string>

namespace hetero::model_detail {

struct ArchRules {
    int rope_mode = 0;         // hetero_rope_mode
    bool qkv_bias = false;     // Q/K/V biases required
    bool qk_norm = false;      // attn_q_norm / attn_k_norm required
    bool post_norms = false;   // post_attention_norm / post_ffw_norm required
    bool fused = false;        // attn_qkv (or separate Q/K/V) and ffn_up holding gate and up
    bool tied = false;         // the classifier is always token_embd
};

// Throws hetero::Error naming the architecture and the supported ones.
ArchRules arch_rules(const std::string& arch, const std::string& path);

// Fills the architecture's own fields of hp (RoPE scaling, sliding windows,
// soft-caps, scales) from <arch>.* metadata; hp's common fields are read.
void read_arch_hparams(const GgufFile& f, LlamaHParams& hp);

}  // namespace hetero::model_detail
