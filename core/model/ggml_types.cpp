#include <hetero/model/ggml_types.hpp>

#include <hetero/ep_api.h>

#include <array>

namespace hetero {

namespace {

// Indexed by ggml type id; ids 4, 5 and 31..33 were retired from ggml.
constexpr std::array<GgmlTypeTraits, 36> kTypes = {{
    {"f32", 1, 4},       // 0
    {"f16", 1, 2},       // 1
    {"q4_0", 32, 18},    // 2
    {"q4_1", 32, 20},    // 3
    {nullptr, 0, 0},     // 4 (retired q4_2)
    {nullptr, 0, 0},     // 5 (retired q4_3)
    {"q5_0", 32, 22},    // 6
    {"q5_1", 32, 24},    // 7
    {"q8_0", 32, 34},    // 8
    {"q8_1", 32, 36},    // 9
    {"q2_K", 256, 84},   // 10
    {"q3_K", 256, 110},  // 11
    {"q4_K", 256, 144},  // 12
    {"q5_K", 256, 176},  // 13
    {"q6_K", 256, 210},  // 14
    {"q8_K", 256, 292},  // 15
    {"iq2_xxs", 256, 66},  // 16
    {"iq2_xs", 256, 74},   // 17
    {"iq3_xxs", 256, 98},  // 18
    {"iq1_s", 256, 50},    // 19
    {"iq4_nl", 32, 18},    // 20
    {"iq3_s", 256, 110},   // 21
    {"iq2_s", 256, 82},    // 22
    {"iq4_xs", 256, 136},  // 23
    {"i8", 1, 1},          // 24
    {"i16", 1, 2},         // 25
    {"i32", 1, 4},         // 26
    {"i64", 1, 8},         // 27
    {"f64", 1, 8},         // 28
    {"iq1_m", 256, 56},    // 29
    {"bf16", 1, 2},        // 30
    {nullptr, 0, 0},       // 31 (retired q4_0_4_4)
    {nullptr, 0, 0},       // 32 (retired q4_0_4_8)
    {nullptr, 0, 0},       // 33 (retired q4_0_8_8)
    {"tq1_0", 256, 54},    // 34
    {"tq2_0", 256, 66},    // 35
}};

// hetero's own block types, at ids far past ggml's (docs/models.md): a
// reader without them refuses the file by the unknown type id.
constexpr GgmlTypeTraits kE0M4 = {"e0m4", 32, 20};

}  // namespace

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t ggml_type) {
    if (ggml_type == GGML_TYPE_ID_E0M4) return kE0M4;
    if (ggml_type >= kTypes.size() || kTypes[ggml_type].name == nullptr) return std::nullopt;
    return kTypes[ggml_type];
}

std::string ggml_type_name(uint32_t ggml_type) {
    const auto t = ggml_type_traits(ggml_type);
    return t ? t->name : "unknown";
}

std::optional<uint32_t> hetero_dtype_from_ggml(uint32_t ggml_type) {
    switch (ggml_type) {
        case GGML_TYPE_ID_F32: return HETERO_DTYPE_F32;
        case GGML_TYPE_ID_F16: return HETERO_DTYPE_F16;
        case GGML_TYPE_ID_BF16: return HETERO_DTYPE_BF16;
        case GGML_TYPE_ID_Q8_0: return HETERO_DTYPE_Q8_0;
        case GGML_TYPE_ID_Q4_0: return HETERO_DTYPE_Q4_0;
        case GGML_TYPE_ID_Q4_K: return HETERO_DTYPE_Q4_K;
        case GGML_TYPE_ID_Q5_K: return HETERO_DTYPE_Q5_K;
        case GGML_TYPE_ID_Q6_K: return HETERO_DTYPE_Q6_K;
        case GGML_TYPE_ID_Q4_1: return HETERO_DTYPE_Q4_1;
        case GGML_TYPE_ID_Q5_0: return HETERO_DTYPE_Q5_0;
        case GGML_TYPE_ID_Q5_1: return HETERO_DTYPE_Q5_1;
        case GGML_TYPE_ID_IQ4_NL: return HETERO_DTYPE_IQ4_NL;
        case GGML_TYPE_ID_Q2_K: return HETERO_DTYPE_Q2_K;
        case GGML_TYPE_ID_Q3_K: return HETERO_DTYPE_Q3_K;
        case GGML_TYPE_ID_E0M4: return HETERO_DTYPE_E0M4;
        default: return std::nullopt;
    }
}

std::optional<uint32_t> ggml_type_from_hetero(uint32_t hetero_dtype) {
    switch (hetero_dtype) {
        case HETERO_DTYPE_F32: return GGML_TYPE_ID_F32;
        case HETERO_DTYPE_F16: return GGML_TYPE_ID_F16;
        case HETERO_DTYPE_BF16: return GGML_TYPE_ID_BF16;
        case HETERO_DTYPE_Q8_0: return GGML_TYPE_ID_Q8_0;
        case HETERO_DTYPE_Q4_0: return GGML_TYPE_ID_Q4_0;
        case HETERO_DTYPE_Q4_K: return GGML_TYPE_ID_Q4_K;
        case HETERO_DTYPE_Q5_K: return GGML_TYPE_ID_Q5_K;
        case HETERO_DTYPE_Q6_K: return GGML_TYPE_ID_Q6_K;
        case HETERO_DTYPE_Q4_1: return GGML_TYPE_ID_Q4_1;
        case HETERO_DTYPE_Q5_0: return GGML_TYPE_ID_Q5_0;
        case HETERO_DTYPE_Q5_1: return GGML_TYPE_ID_Q5_1;
        case HETERO_DTYPE_IQ4_NL: return GGML_TYPE_ID_IQ4_NL;
        case HETERO_DTYPE_Q2_K: return GGML_TYPE_ID_Q2_K;
        case HETERO_DTYPE_Q3_K: return GGML_TYPE_ID_Q3_K;
        case HETERO_DTYPE_E0M4: return GGML_TYPE_ID_E0M4;
        default: return std::nullopt;
    }
}

}  // namespace hetero
