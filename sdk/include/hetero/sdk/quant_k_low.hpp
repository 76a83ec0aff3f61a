// GGUF's 2- and 3-bit K-quants (ABI 1.2): Q2_K and Q3_K, super-blocks of 256
// in 16 sub-blocks of 16. Included by quant.hpp after its f16 helpers and
// kKBlock; not a header of its own.
//
// Both store their 2-bit quants alike: element e = 128 h + 32 j + l (h 0..1,
// j 0..3, l 0..31) keeps bits 2j..2j+1 of qs[32 h + l].
#pragma once

#include <hetero/sdk/block_layout.h>

namespace hetero::sdk {

// Q2_K: value = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4), q in 0..3,
// s = e / 16.
struct BlockQ2K {
    uint8_t scales[16];
    uint8_t qs[64];
    uint16_t d;
    uint16_t dmin;
};
static_assert(sizeof(BlockQ2K) == HETERO_Q2_K_BYTES, "Q2_K block must match GGUF");

// Q3_K: value = d * (sc[s] - 32) * (q - 4), q in 0..7: the low 2 bits in qs,
// the third in bit 4h + j of hmask[l]. The sixteen 6-bit sc: low 4 bits in
// the low (s < 8) or high (s >= 8) nibble of scales[s % 8], high 2 bits at
// bits 2 (s / 4) of scales[8 + s % 4].
struct BlockQ3K {
    uint8_t hmask[32];
    uint8_t qs[64];
    uint8_t scales[12];
    uint16_t d;
};
static_assert(sizeof(BlockQ3K) == HETERO_Q3_K_BYTES, "Q3_K block must match GGUF");

inline int q3k_scale(const uint8_t* s, int i) {
    const int low = i < 8 ? s[i] & 0x0f : s[i - 8] >> 4;
    return low | ((s[8 + i % 4] >> (2 * (i / 4))) & 3) << 4;
}

inline int k_low_bits(const uint8_t* qs, int e) { return (qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3; }

inline void dequantize_block_q2_k(const BlockQ2K& b, float* y) {
    const float d = f16_to_f32(b.d), dmin = f16_to_f32(b.dmin);
    for (int s = 0; s < 16; ++s) {
        const float dl = d * float(b.scales[s] & 0x0f), ml = dmin * float(b.scales[s] >> 4);
        for (int e = 16 * s; e < 16 * s + 16; ++e) y[e] = dl * float(k_low_bits(b.qs, e)) - ml;
    }
}

inline void dequantize_block_q3_k(const BlockQ3K& b, float* y) {
    const float d = f16_to_f32(b.d);
    for (int s = 0; s < 16; ++s) {
        const float dl = d * float(q3k_scale(b.scales, s) - 32);
        for (int e = 16 * s; e < 16 * s + 16; ++e) {
            const int high = (b.hmask[e % 32] >> (4 * (e / 128) + e % 128 / 32)) & 1;
            y[e] = dl * float(k_low_bits(b.qs, e) - (high ? 0 : 4));
        }
    }
}

namespace detail {
inline void k_store_low_bits(const int* q, uint8_t* qs) {
    std::memset(qs, 0, 64);
    for (int e = 0; e < kKBlock; ++e) qs[32 * (e / 128) + e % 32] |= uint8_t((q[e] & 3) << (2 * (e % 128 / 32)));
}
}  // namespace detail

// Reference quantizers: GGUF's layouts; per sub-block min/max (Q2_K) or
// largest magnitude (Q3_K), rounded to nearest.
inline void quantize_block_q2_k(const float* x, BlockQ2K& b) {
    float step[16], mn[16], max_step = 0.f, max_mn = 0.f;
    for (int s = 0; s < 16; ++s) {
        float lo = 0.f, hi = 0.f;
        for (int l = 0; l < 16; ++l) { lo = std::fmin(lo, x[16 * s + l]); hi = std::fmax(hi, x[16 * s + l]); }
        step[s] = (hi - lo) / 3.f;
        mn[s] = -lo;
        max_step = std::fmax(max_step, step[s]);
        max_mn = std::fmax(max_mn, mn[s]);
    }
    b.d = f32_to_f16(max_step / 15.f);
    b.dmin = f32_to_f16(max_mn / 15.f);
    const float d = f16_to_f32(b.d), dmin = f16_to_f32(b.dmin);
    int q[kKBlock];
    for (int s = 0; s < 16; ++s) {
        const int sc = d > 0.f ? std::clamp(int(std::lround(step[s] / d)), step[s] > 0.f ? 1 : 0, 15) : 0;
        // Round the min up so the sub-block's lowest value stays reachable.
        const int m = dmin > 0.f ? std::clamp(int(std::ceil(mn[s] / dmin - 1e-4f)), 0, 15) : 0;
        b.scales[s] = uint8_t(sc | m << 4);
        const float dl = d * float(sc), ml = dmin * float(m), il = dl > 0.f ? 1.f / dl : 0.f;
        for (int l = 0; l < 16; ++l) q[16 * s + l] = std::clamp(int(std::lround((x[16 * s + l] + ml) * il)), 0, 3);
    }
    detail::k_store_low_bits(q, b.qs);
}

inline void quantize_block_q3_k(const float* x, BlockQ3K& b) {
    float scale[16], max_abs = 0.f;
    for (int s = 0; s < 16; ++s) {
        float amax = 0.f, vmax = 0.f;
        for (int l = 0; l < 16; ++l)
            if (std::fabs(x[16 * s + l]) > amax) { amax = std::fabs(x[16 * s + l]); vmax = x[16 * s + l]; }
        scale[s] = vmax / -4.f;  // the largest magnitude maps to -4, the end with room
        max_abs = std::fmax(max_abs, std::fabs(scale[s]));
    }
    b.d = f32_to_f16(max_abs / 31.f);
    const float d = f16_to_f32(b.d);
    int q[kKBlock];
    std::memset(b.scales, 0, sizeof b.scales);
    std::memset(b.hmask, 0, sizeof b.hmask);
    for (int s = 0; s < 16; ++s) {
        const int sc = d > 0.f ? std::clamp(int(std::lround(scale[s] / d)), -32, 31) : 0;
        const int u = sc + 32;  // stored 6-bit
        b.scales[s % 8] |= uint8_t((u & 0x0f) << (s < 8 ? 0 : 4));
        b.scales[8 + s % 4] |= uint8_t((u >> 4) << (2 * (s / 4)));
        const float dl = d * float(sc), il = dl != 0.f ? 1.f / dl : 0.f;
        for (int l = 0; l < 16; ++l) q[16 * s + l] = std::clamp(int(std::lround(x[16 * s + l] * il)), -4, 3) + 4;
    }
    detail::k_store_low_bits(q, b.qs);
    for (int e = 0; e < kKBlock; ++e) b.hmask[e % 32] |= uint8_t((q[e] >> 2) << (4 * (e / 128) + e % 128 / 32));
}

}  // namespace hetero::sdk
