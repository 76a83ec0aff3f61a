// ggml tensor types as they appear in GGUF files: ids, names, block layouts,
// and the mapping to the weight dtypes hetero computes with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hetero {

// ggml type ids used by hetero directly.
enum GgmlTypeId : uint32_t {
    GGML_TYPE_ID_F32 = 0,
    GGML_TYPE_ID_F16 = 1,
    GGML_TYPE_ID_Q4_0 = 2,
    GGML_TYPE_ID_Q4_1 = 3,
    GGML_TYPE_ID_Q5_0 = 6,
    GGML_TYPE_ID_Q5_1 = 7,
    GGML_TYPE_ID_Q8_0 = 8,
    GGML_TYPE_ID_Q2_K = 10,
    GGML_TYPE_ID_Q3_K = 11,
    GGML_TYPE_ID_Q4_K = 12,
    GGML_TYPE_ID_Q5_K = 13,
    GGML_TYPE_ID_Q6_K = 14,
    GGML_TYPE_ID_IQ4_NL = 20,
    GGML_TYPE_ID_BF16 = 30,
    // hetero's own types (not ggml's; docs/models.md "hetero's block types").
    GGML_TYPE_ID_E0M4 = 1000,
};

struct GgmlTypeTraits {
    const char* name;      // "f32", "q4_K", ...
    uint32_t block_elems;  // elements per block (1 for scalar types)
    uint32_t block_bytes;  // bytes per block
};

// Layout of a ggml type; nullopt for ids that are unknown or retired.
std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t ggml_type);

// "q6_K" for known ids, "unknown" otherwise.
std::string ggml_type_name(uint32_t ggml_type);

// The hetero_dtype for a ggml type hetero computes with (F32, F16, BF16,
// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K .. Q6_K, and hetero's E0M4);
// nullopt for every other type.
std::optional<uint32_t> hetero_dtype_from_ggml(uint32_t ggml_type);

// The ggml type for a hetero weight dtype; nullopt for I32/I8/unknown.
std::optional<uint32_t> ggml_type_from_hetero(uint32_t hetero_dtype);

}  // namespace hetero
