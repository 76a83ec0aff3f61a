// Model shapes without weights, for planning and simulating models that are
// not on disk: a ModelFile whose weights have dtypes, shapes and byte counts
// but no data (build_model_graph and the planner read nothing else).
#pragma once

#include <hetero/model/model.hpp>

#include <string>
#include <vector>

namespace hetero {

struct ModelShape {
    std::string name;
    int64_t n_embd = 0, n_ff = 0, n_layer = 0, n_head = 0, n_head_kv = 0, n_vocab = 0, n_ctx = 0;
};

// Known: llama-8b (Llama-3-8B), llama-7b (Llama-2-7B), llama-3b, tinyllama-1.1b.
// Throws hetero::Error listing them for another name.
ModelShape model_shape(const std::string& name);
std::vector<std::string> model_shape_names();

// Matrices in `wtype` (a hetero_dtype: F32, F16, Q8_0, Q4_0), norms F32.
ModelFile shape_only_model(const ModelShape& shape, uint32_t wtype);
// "q4_0" | "q8_0" | "f16" | "f32" -> hetero_dtype; throws for others.
uint32_t weight_type_from_name(const std::string& name);

}  // namespace hetero
