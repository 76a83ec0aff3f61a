// Model conversion to GGUF.
#pragma once

#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/model.hpp>

#include <cstdint>
#include <string>

namespace hetero {

// The llama.* hyper-parameter keys of a llama-architecture GGUF.
void add_llama_hparams(GgufWriter& w, const LlamaHParams& hp);

// Writes a llama2.c checkpoint and its tokenizer.bin as a GGUF (architecture
// llama, tokenizer metadata as llama.cpp names it). `out_dtype` (hetero_dtype:
// F32, F16, Q8_0 or Q4_0) applies to the matrices; norms stay F32, and a
// matrix whose rows are not a multiple of 32 cannot hold blocks and is
// written as F16 instead of Q8_0/Q4_0. With Q4_0 the token embedding (also the
// tied classifier) is written as Q8_0 to keep the output layer accurate.
void convert_llama2c_to_gguf(const std::string& bin, const std::string& tokenizer_bin, const std::string& out_gguf,
                             uint32_t out_dtype);

// Copies a llama/qwen2 GGUF, re-encoding every 2-D weight matrix to
// `out_dtype` (same rules as above); other tensors and all metadata are kept.
void quantize_gguf(const std::string& in_gguf, const std::string& out_gguf, uint32_t out_dtype);

}  // namespace hetero
