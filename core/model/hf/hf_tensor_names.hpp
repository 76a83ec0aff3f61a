// Hugging Face tensor names to GGUF's (llama.cpp's tensor map for the
// architectures hetero runs), and the shape each GGUF tensor must have.
#pragma once

#include "hf_config.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetero::model_detail {

// What becomes of one Hugging Face tensor.
struct HfTensorName {
    enum class Kind { Skip, Keep };
    Kind kind = Kind::Skip;
    std::string gguf;  // "blk.3.attn_q.weight"
    int64_t layer = -1;
};

// The GGUF name of `hf_name` for `c`'s architecture; Skip for tensors the
// converter leaves out (rotary caches, vision towers, Gemma's lm_head).
// Throws hetero::Error naming `source` for a name with no GGUF counterpart
// or a layer index outside the model.
HfTensorName gguf_name_of(const HfConfig& c, const std::string& hf_name, const std::string& source);

// The Hugging Face name a GGUF tensor comes from (for messages about a
// missing one): "model.layers.3.mlp.down_proj.weight".
std::string hf_name_for(const HfConfig& c, const std::string& gguf_name);

// The GGUF tensors the model must have, with their shapes (outermost
// first); `optional` marks the ones it may lack (an untied classifier,
// biases a model may or may not have).
struct ExpectedTensor {
    std::string name;
    std::vector<int64_t> shape;
    bool optional = false;
};
std::vector<ExpectedTensor> expected_tensors(const HfConfig& c);

}  // namespace hetero::model_detail
