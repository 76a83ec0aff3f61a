// llama-quantize's file types and the rules that pick each tensor's type
// in them (llama.cpp's src/llama-quant.cpp, llama_tensor_get_type and
// tensor_type_fallback), for the types hetero can write and read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

// One of llama-quantize's file types.
struct QuantFileType {
    const char* name;    // "Q4_K_M"
    uint32_t ftype;      // its llama_ftype, written as general.file_type
    uint32_t base_type;  // ggml type of the matrices no rule singles out
};

// Every name quantize_gguf_file accepts, aliases included.
const std::vector<QuantFileType>& quant_file_types();
// Case-insensitive; nullptr for an unknown name.
const QuantFileType* find_quant_file_type(std::string_view name);

// What the rules read of the model (from its GGUF metadata).
struct QuantModelInfo {
    std::string arch;
    int64_t n_layer = 0;    // <arch>.block_count
    int64_t n_head = 0;     // <arch>.attention.head_count
    int64_t n_head_kv = 0;  // <arch>.attention.head_count_kv (n_head when absent)
};

struct QuantTensorDesc {
    std::string name;
    std::vector<int64_t> ne;  // ggml order
    uint32_t ggml_type = 0;   // as stored in the input
};

// Whether llama-quantize may change this tensor's type at all: matrices
// named *.weight, except norms and a few small tables.
bool quant_may_change(const QuantTensorDesc& t);

// The ggml type of each tensor (same order as `tensors`). Tensors that may
// not change keep their type.
std::vector<uint32_t> plan_quant_types(const QuantFileType& ft, const QuantModelInfo& model, const std::vector<QuantTensorDesc>& tensors);

}  // namespace hetero
