// GGUF's other 32-element block types (ABI 1.2): Q4_1, Q5_0, Q5_1, IQ4_NL.
// Included by quant.hpp after its f16 helpers; not a header of its own.
#pragma once

#include <hetero/sdk/block_layout.h>

namespace hetero::sdk {

// Q4_1: value = d * q + m, q in 0..15; element j in the low nibble of qs[j],
// element j + 16 in the high nibble.
struct BlockQ4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ4_1) == HETERO_Q4_1_BYTES, "Q4_1 block must match GGUF");

// Q5_0: value = d * (q - 16), q in 0..31: the low 4 bits as in Q4_0, the fifth
// bit of element e in bit e of qh (a little-endian 32-bit word).
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ5_0) == HETERO_Q5_0_BYTES, "Q5_0 block must match GGUF");

// Q5_1: value = d * q + m, q in 0..31, bits as in Q5_0.
struct BlockQ5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ5_1) == HETERO_Q5_1_BYTES, "Q5_1 block must match GGUF");

// IQ4_NL: value = d * kIQ4NLValues[q], the nibbles laid out as in Q4_0.
struct BlockIQ4_NL {
    uint16_t d;
    uint8_t qs[16];
};
static_assert(sizeof(BlockIQ4_NL) == HETERO_IQ4_NL_BYTES, "IQ4_NL block must match GGUF");

// The non-linear levels of IQ4_NL (part of the format).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The 5-bit value of element e of a Q5_0/Q5_1 block.
inline int q5_value(const uint8_t* qs, const uint8_t* qh, int e) {
    const uint32_t h = uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
    const int low = e < 16 ? qs[e] & 0x0f : qs[e - 16] >> 4;
    return low | int((h >> e) & 1u) << 4;
}

inline void dequantize_block_q4_1(const BlockQ4_1& b, float* y) {
    const float d = f16_to_f32(b.d), m = f16_to_f32(b.m);
    for (int j = 0; j < 16; ++j) {
        y[j] = float(b.qs[j] & 0x0f) * d + m;
        y[j + 16] = float(b.qs[j] >> 4) * d + m;
    }
}

inline void dequantize_block_q5_0(const BlockQ5_0& b, float* y) {
    const float d = f16_to_f32(b.d);
    for (int e = 0; e < 32; ++e) y[e] = float(q5_value(b.qs, b.qh, e) - 16) * d;
}

inline void dequantize_block_q5_1(const BlockQ5_1& b, float* y) {
    const float d = f16_to_f32(b.d), m = f16_to_f32(b.m);
    for (int e = 0; e < 32; ++e) y[e] = float(q5_value(b.qs, b.qh, e)) * d + m;
}

inline void dequantize_block_iq4_nl(const BlockIQ4_NL& b, float* y) {
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < 16; ++j) {
        y[j] = d * float(kIQ4NLValues[b.qs[j] & 0x0f]);
        y[j + 16] = d * float(kIQ4NLValues[b.qs[j] >> 4]);
    }
}

namespace detail {
// Stores 32 values of 0..15 (low 4 bits of 0..31) as nibble pairs, and their
// fifth bits into qh when it is given.
inline void pack_nibbles(const int* q, uint8_t* qs, uint8_t* qh) {
    uint32_t h = 0;
    for (int j = 0; j < 16; ++j) qs[j] = uint8_t((q[j] & 0x0f) | (q[j + 16] & 0x0f) << 4);
    for (int e = 0; e < 32; ++e) h |= uint32_t(q[e] >> 4 & 1) << e;
    if (qh)
        for (int i = 0; i < 4; ++i) qh[i] = uint8_t(h >> (8 * i));
}

// Min/max quantization to 0..levels: value = d * q + m with m the block's
// minimum, as Q4_1 and Q5_1 store it.
inline void quantize_min_max(const float* x, int levels, uint16_t& d_out, uint16_t& m_out, int* q) {
    float lo = x[0], hi = x[0];
    for (int e = 1; e < 32; ++e) { lo = std::fmin(lo, x[e]); hi = std::fmax(hi, x[e]); }
    d_out = f32_to_f16((hi - lo) / float(levels));
    m_out = f32_to_f16(lo);
    const float d = f16_to_f32(d_out), m = f16_to_f32(m_out);
    const float id = d > 0.f ? 1.f / d : 0.f;
    for (int e = 0; e < 32; ++e) q[e] = std::clamp(int(std::lround((x[e] - m) * id)), 0, levels);
}
}  // namespace detail

// Reference quantizers: GGUF's layouts, round to nearest.
inline void quantize_block_q4_1(const float* x, BlockQ4_1& b) {
    int q[32];
    detail::quantize_min_max(x, 15, b.d, b.m, q);
    detail::pack_nibbles(q, b.qs, nullptr);
}

inline void quantize_block_q5_1(const float* x, BlockQ5_1& b) {
    int q[32];
    detail::quantize_min_max(x, 31, b.d, b.m, q);
    detail::pack_nibbles(q, b.qs, b.qh);
}

// The value of largest magnitude maps to -16, the end of 0..31 with room.
inline void quantize_block_q5_0(const float* x, BlockQ5_0& b) {
    float amax = 0.f, vmax = 0.f;
    for (int e = 0; e < 32; ++e)
        if (std::fabs(x[e]) > amax) { amax = std::fabs(x[e]); vmax = x[e]; }
    b.d = f32_to_f16(vmax / -16.f);
    const float d = f16_to_f32(b.d), id = d != 0.f ? 1.f / d : 0.f;
    int q[32];
    for (int e = 0; e < 32; ++e) q[e] = std::clamp(int(std::lround(x[e] * id)) + 16, 0, 31);
    detail::pack_nibbles(q, b.qs, b.qh);
}

// The value of largest magnitude maps to the table's -127; every element then
// takes the nearest table entry.
inline void quantize_block_iq4_nl(const float* x, BlockIQ4_NL& b) {
    float amax = 0.f, vmax = 0.f;
    for (int e = 0; e < 32; ++e)
        if (std::fabs(x[e]) > amax) { amax = std::fabs(x[e]); vmax = x[e]; }
    b.d = f32_to_f16(vmax / float(kIQ4NLValues[0]));
    const float d = f16_to_f32(b.d), id = d != 0.f ? 1.f / d : 0.f;
    int q[32];
    for (int e = 0; e < 32; ++e) {
        const float v = x[e] * id;
        int best = 0;
        for (int i = 1; i < 16; ++i)
            if (std::fabs(v - float(kIQ4NLValues[i])) < std::fabs(v - float(kIQ4NLValues[best]))) best = i;
        q[e] = best;
    }
    detail::pack_nibbles(q, b.qs, nullptr);
}

}  // namespace hetero::sdk
