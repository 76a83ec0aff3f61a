// hetero convert hf: a Hugging Face model folder (config.json, safetensors
// weights, tokenizer.json or tokenizer.model, tokenizer_config.json) to a
// GGUF with the metadata and tensor names llama.cpp's converter writes, so
// hetero and llama.cpp both run it. Architectures: the model classes of
// Llama (and Mistral, written as llama), Qwen2, Qwen3, Phi-3, Gemma 2 and
// Gemma 3.
#pragma once

#include <hetero/model/quantize.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace hetero {

struct HfConvertOptions {
    // f32, f16, bf16 or q8_0 (every matrix in that type, as llama.cpp's
    // converter writes them), or any file type of hetero quantize (Q4_K_M,
    // ...), whose rules then pick each matrix's type. Any case.
    std::string type = "f16";
    int threads = 0;  // rows encoded in parallel; 0 = one per hardware thread
};

// What a conversion wrote.
struct HfConvertResult {
    std::string arch;                      // general.architecture
    std::vector<QuantizedTensor> tensors;  // each tensor's name and ggml type, in file order
    size_t n_tokens = 0;                   // the vocabulary
};

// The --type names convert_hf_to_gguf takes besides quantize_type_names().
const std::vector<std::string>& hf_convert_type_names();

// Reads `dir`, writes `out_gguf`. Throws hetero::Error naming the file and
// the problem: an architecture or tokenizer hetero does not convert, a
// missing, truncated or inconsistent file, a tensor missing, of the wrong
// shape or of a dtype other than F32, F16 and BF16.
HfConvertResult convert_hf_to_gguf(const std::string& dir, const std::string& out_gguf, const HfConvertOptions& options);

}  // namespace hetero
