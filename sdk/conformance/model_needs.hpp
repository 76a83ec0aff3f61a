// What a model asks of a provider (--model): every node of the graph the
// runtime builds for it, at decode (1 token) and at a prefill chunk, grouped
// into rows of op + dtypes with their shape classes (weight shapes, head
// size, cache dtype). The interface speaks only the C ABI's types; the
// implementation uses libhetero's model loader and graph builder, so the
// questions are exactly the ones the runtime asks.
#pragma once

#include <hetero/ep_api.h>

#include <memory>
#include <string>
#include <vector>

namespace hetero::conformance {

// One node as op_supported is asked it, with every tensor of its graph.
struct NodeQuestion {
    const hetero_node* node = nullptr;
    const std::vector<hetero_tensor_desc>* descs = nullptr;
    int32_t n_tokens = 0;  // 1 (decode) or the prefill chunk
    std::string where;     // "layer 0 q", for messages
};

struct NeedRow {
    std::string op;      // "matmul"
    std::string dtypes;  // the dtype that sets these nodes apart: "q4_0", "cache f16", "f32"
    std::string shapes;  // shape classes: "[64,64] [172,64]", "head size 8, 8 heads / 4 kv"
    std::vector<NodeQuestion> questions;
};

class ModelNeeds {
public:
    virtual ~ModelNeeds() = default;
    // "stories260K.gguf: llama, 5 layers, ..."
    virtual std::string summary() const = 0;
    // The rows for a device: its KV cache dtype is the one the runtime would give it.
    virtual const std::vector<NeedRow>& rows(const hetero_device_props& props) const = 0;
};

// Loads the model (weights mapped, not read) and builds its graphs; throws std::exception.
std::unique_ptr<ModelNeeds> read_model_needs(const std::string& path);

// Whether this build has read_model_needs (it needs libhetero).
bool model_needs_available();

}  // namespace hetero::conformance
