// hetero quantize: a GGUF re-encoded to one of llama-quantize's file types
// (Q4_K_M, Q8_0, ...), each tensor in the type llama-quantize's rules give
// it: the mixes (_S, _M, _L) keep some tensors (attn_v, ffn_down in chosen
// layers, the classifier) in more bits, rows that cannot hold a type's
// blocks fall back to a smaller block, norms and other 1-D tensors are
// copied as they are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

struct QuantizeOptions {
    std::string type;               // a name of quantize_type_names(), any case
    int threads = 0;                // rows encoded in parallel; 0 = one per hardware thread
    bool allow_requantize = false;  // re-encode tensors that are already block-quantized
};

// The file types `quantize_gguf_file` writes, as llama-quantize names them
// (aliases included: Q4_K is Q4_K_M, Q3_K is Q3_K_M, Q5_K is Q5_K_M).
const std::vector<std::string>& quantize_type_names();

// One tensor of a quantized file: its name and the ggml type chosen for it.
struct QuantizedTensor {
    std::string name;
    uint32_t ggml_type = 0;
};

// Reads `in_gguf`, writes `out_gguf` (never over the input) and returns the
// type of every tensor written, in file order. Throws hetero::Error naming
// the file and the tensor on bad input: an unknown type name, a tensor
// already quantized without allow_requantize, a tensor type hetero cannot
// decode that would need re-encoding.
std::vector<QuantizedTensor> quantize_gguf_file(const std::string& in_gguf, const std::string& out_gguf, const QuantizeOptions& options);

}  // namespace hetero
