// Block formats and scalar conversions shared by the core, the providers and
// the reference ops. Bit layouts are GGUF's, so weights map straight from files.
#pragma once

#include <hetero/sdk/block_layout.h>

#include <hetero/ep_api.h>
#include <hetero/sdk/quant_k_scales.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hetero::sdk {

inline constexpr int kQBlock = 32;  // elements per Q8_0 / Q4_0 block

struct BlockQ8_0 {
    uint16_t d;       // f16 scale
    int8_t qs[32];    // value = d * qs[i]
};
static_assert(sizeof(BlockQ8_0) == HETERO_Q8_0_BYTES, "Q8_0 block must match GGUF");

struct BlockQ4_0 {
    uint16_t d;        // f16 scale
    uint8_t qs[16];    // element j in low nibble of qs[j], element j+16 in high nibble; value = d * (q - 8)
};
static_assert(sizeof(BlockQ4_0) == HETERO_Q4_0_BYTES, "Q4_0 block must match GGUF");

inline float bits_to_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t float_to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float f16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        if (mant == 0) return bits_to_float(sign);
        // subnormal: normalise
        exp = 127 - 15 + 1;
        while ((mant & 0x400u) == 0) { mant <<= 1; --exp; }
        mant &= 0x3ffu;
        return bits_to_float(sign | (exp << 23) | (mant << 13));
    }
    if (exp == 31) return bits_to_float(sign | 0x7f800000u | (mant << 13));
    return bits_to_float(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

// Round-to-nearest-even, as the hardware conversions do.
inline uint16_t f32_to_f16(float f) {
    const uint32_t x = float_to_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // overflow to inf
    if (abs < 0x38800000u) {                                  // subnormal or zero in f16
        if (abs < 0x33000000u) return uint16_t(sign);
        const uint32_t e = abs >> 23;
        const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - e;  // 14 - (e - 112)
        uint32_t half = m >> (shift);
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) ++half;
        return uint16_t(sign | half);
    }
    uint32_t h = ((abs >> 13) - (112u << 10));
    const uint32_t rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return uint16_t(sign | h);
}

inline float bf16_to_f32(uint16_t b) { return bits_to_float(uint32_t(b) << 16); }
inline uint16_t f32_to_bf16(float f) {
    uint32_t x = float_to_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return uint16_t(x >> 16);
}

// ---------------------------------------------------------------- K-quants
// GGUF's K-quants: super-blocks of kKBlock elements; rows are a multiple of it.
inline constexpr int kKBlock = 256;

// Q4_K: 8 sub-blocks of 32, each with a 6-bit scale and a 6-bit min:
// value = d * sc[j] * q - dmin * m[j], q in 0..15. Sub-blocks 2p and 2p+1
// share the 32 bytes qs[32p..32p+32): low nibbles for 2p, high for 2p+1.
struct BlockQ4K {
    uint16_t d;           // f16 super-block scale of the sub-block scales
    uint16_t dmin;        // f16 super-block scale of the sub-block mins
    uint8_t scales[12];   // 8 scales + 8 mins, 6 bits each (see k_scale_min)
    uint8_t qs[128];
};
static_assert(sizeof(BlockQ4K) == HETERO_Q4_K_BYTES, "Q4_K block must match GGUF");

// Q5_K: Q4_K with a fifth bit per value: bit 2p of qh[l] for element l of
// sub-block 2p, bit 2p+1 for sub-block 2p+1; q in 0..31.
struct BlockQ5K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qh[32];
    uint8_t qs[128];
};
static_assert(sizeof(BlockQ5K) == HETERO_Q5_K_BYTES, "Q5_K block must match GGUF");

// Q6_K: 16 sub-blocks of 16 with int8 scales: value = d * scales[e / 16] * (q - 32),
// q in 0..63. Per half h (128 elements) and l in 0..31, the elements
// 128h + l + {0, 32, 64, 96} keep their low 4 bits in ql[64h + l] (low, high
// nibble for +0, +64) and ql[64h + 32 + l] (+32, +96), their high 2 bits in
// qh[32h + l] at bits 0, 2, 4, 6 for +0, +32, +64, +96.
struct BlockQ6K {
    uint8_t ql[128];
    uint8_t qh[64];
    int8_t scales[16];
    uint16_t d;
};
static_assert(sizeof(BlockQ6K) == HETERO_Q6_K_BYTES, "Q6_K block must match GGUF");

// k_scale_min (quant_k_scales.hpp) unpacks what this packs.
inline void k_pack_scale_min(const int* sc, const int* m, uint8_t* s) {
    for (int j = 0; j < 4; ++j) {
        s[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        s[j + 8] = uint8_t((sc[j + 4] & 0x0f) | ((m[j + 4] & 0x0f) << 4));
    }
}

inline void dequantize_block_q4_k(const BlockQ4K& b, float* y) {
    const float d = f16_to_f32(b.d), dmin = f16_to_f32(b.dmin);
    for (int p = 0; p < 4; ++p) {
        int sc0, m0, sc1, m1;
        k_scale_min(b.scales, 2 * p, sc0, m0);
        k_scale_min(b.scales, 2 * p + 1, sc1, m1);
        const float d0 = d * float(sc0), o0 = dmin * float(m0), d1 = d * float(sc1), o1 = dmin * float(m1);
        const uint8_t* q = b.qs + 32 * p;
        for (int l = 0; l < 32; ++l) {
            y[64 * p + l] = d0 * float(q[l] & 0x0f) - o0;
            y[64 * p + 32 + l] = d1 * float(q[l] >> 4) - o1;
        }
    }
}

inline void dequantize_block_q5_k(const BlockQ5K& b, float* y) {
    const float d = f16_to_f32(b.d), dmin = f16_to_f32(b.dmin);
    for (int p = 0; p < 4; ++p) {
        int sc0, m0, sc1, m1;
        k_scale_min(b.scales, 2 * p, sc0, m0);
        k_scale_min(b.scales, 2 * p + 1, sc1, m1);
        const float d0 = d * float(sc0), o0 = dmin * float(m0), d1 = d * float(sc1), o1 = dmin * float(m1);
        const uint8_t* q = b.qs + 32 * p;
        for (int l = 0; l < 32; ++l) {
            const int h0 = (b.qh[l] >> (2 * p)) & 1, h1 = (b.qh[l] >> (2 * p + 1)) & 1;
            y[64 * p + l] = d0 * float((q[l] & 0x0f) | (h0 << 4)) - o0;
            y[64 * p + 32 + l] = d1 * float((q[l] >> 4) | (h1 << 4)) - o1;
        }
    }
}

// The 256 quants of a Q6_K block (0..63, stored + 32) in element order.
inline void q6_k_quants(const BlockQ6K& b, uint8_t* q) {
    for (int h = 0; h < 2; ++h) {
        const uint8_t* ql = b.ql + 64 * h;
        const uint8_t* qh = b.qh + 32 * h;
        uint8_t* o = q + 128 * h;
        for (int l = 0; l < 32; ++l) {
            o[l] = uint8_t((ql[l] & 0x0f) | ((qh[l] & 3) << 4));
            o[l + 32] = uint8_t((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4));
            o[l + 64] = uint8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
            o[l + 96] = uint8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
        }
    }
}

inline void dequantize_block_q6_k(const BlockQ6K& b, float* y) {
    const float d = f16_to_f32(b.d);
    uint8_t q[kKBlock];
    q6_k_quants(b, q);
    for (int e = 0; e < kKBlock; ++e) y[e] = d * float(b.scales[e / 16]) * float(int(q[e]) - 32);
}

namespace detail {
// Asymmetric sub-block quantization shared by Q4_K (levels 15) and Q5_K (31):
// per sub-block of 32 the range [min(0, lo), hi] is split in `levels` steps;
// the steps and the mins are then quantized to 6 bits against the largest of
// each. Returns the q of every element (0..levels).
inline void quantize_k_asym(const float* x, int levels, uint16_t& d_out, uint16_t& dmin_out, uint8_t* scales, uint8_t* q) {
    float step[8], mn[8], max_step = 0.f, max_mn = 0.f;
    for (int j = 0; j < 8; ++j) {
        float lo = 0.f, hi = 0.f;
        for (int l = 0; l < 32; ++l) { lo = std::fmin(lo, x[32 * j + l]); hi = std::fmax(hi, x[32 * j + l]); }
        step[j] = (hi - lo) / float(levels);
        mn[j] = -lo;
        max_step = std::fmax(max_step, step[j]);
        max_mn = std::fmax(max_mn, mn[j]);
    }
    d_out = f32_to_f16(max_step / 63.f);
    dmin_out = f32_to_f16(max_mn / 63.f);
    const float d = f16_to_f32(d_out), dmin = f16_to_f32(dmin_out);
    int sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
        sc[j] = d > 0.f ? std::clamp(int(std::lround(step[j] / d)), step[j] > 0.f ? 1 : 0, 63) : 0;
        // Round the min up so the sub-block's lowest value stays reachable.
        m[j] = dmin > 0.f ? std::clamp(int(std::ceil(mn[j] / dmin - 1e-4f)), 0, 63) : 0;
    }
    k_pack_scale_min(sc, m, scales);
    for (int j = 0; j < 8; ++j) {
        const float s = d * float(sc[j]), o = dmin * float(m[j]);
        const float is = s > 0.f ? 1.f / s : 0.f;
        for (int l = 0; l < 32; ++l) q[32 * j + l] = uint8_t(std::clamp(int(std::lround((x[32 * j + l] + o) * is)), 0, levels));
    }
}
}  // namespace detail

// Reference quantizers: GGUF's layouts; the choice of scales is this
// library's own (simple min/max per sub-block), any valid block decodes alike.
// A K-quant block's codes (one per value: 0..15, 0..31, 0..63), in block
// order, into its bit layout; every quantizer of these types packs this way.
template <class Code>
inline void pack_q4_k_codes(const Code* q, BlockQ4K& b) {
    for (int p = 0; p < 4; ++p)
        for (int l = 0; l < 32; ++l) b.qs[32 * p + l] = uint8_t(q[64 * p + l] | (q[64 * p + 32 + l] << 4));
}

template <class Code>
inline void pack_q5_k_codes(const Code* q, BlockQ5K& b) {
    std::memset(b.qh, 0, sizeof b.qh);
    for (int p = 0; p < 4; ++p)
        for (int l = 0; l < 32; ++l) {
            const int a = q[64 * p + l], c = q[64 * p + 32 + l];
            b.qs[32 * p + l] = uint8_t((a & 0x0f) | ((c & 0x0f) << 4));
            b.qh[l] = uint8_t(b.qh[l] | ((a >> 4) << (2 * p)) | ((c >> 4) << (2 * p + 1)));
        }
}

template <class Code>
inline void pack_q6_k_codes(const Code* q, BlockQ6K& b) {
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
            const int q0 = q[128 * h + l], q1 = q[128 * h + 32 + l], q2 = q[128 * h + 64 + l], q3 = q[128 * h + 96 + l];
            b.ql[64 * h + l] = uint8_t((q0 & 0x0f) | ((q2 & 0x0f) << 4));
            b.ql[64 * h + 32 + l] = uint8_t((q1 & 0x0f) | ((q3 & 0x0f) << 4));
            b.qh[32 * h + l] = uint8_t((q0 >> 4) | ((q1 >> 4) << 2) | ((q2 >> 4) << 4) | ((q3 >> 4) << 6));
        }
}

inline void quantize_block_q4_k(const float* x, BlockQ4K& b) {
    uint8_t q[kKBlock];
    detail::quantize_k_asym(x, 15, b.d, b.dmin, b.scales, q);
    pack_q4_k_codes(q, b);
}

inline void quantize_block_q5_k(const float* x, BlockQ5K& b) {
    uint8_t q[kKBlock];
    detail::quantize_k_asym(x, 31, b.d, b.dmin, b.scales, q);
    pack_q5_k_codes(q, b);
}

inline void quantize_block_q6_k(const float* x, BlockQ6K& b) {
    float scale[16], max_abs_scale = 0.f;
    for (int i = 0; i < 16; ++i) {
        float amax = 0.f, vmax = 0.f;
        for (int l = 0; l < 16; ++l)
            if (std::fabs(x[16 * i + l]) > amax) { amax = std::fabs(x[16 * i + l]); vmax = x[16 * i + l]; }
        scale[i] = vmax / -32.f;  // the largest magnitude maps to -32, the end with room
        max_abs_scale = std::fmax(max_abs_scale, std::fabs(scale[i]));
    }
    b.d = f32_to_f16(max_abs_scale / 127.f);
    const float d = f16_to_f32(b.d);
    uint8_t q[kKBlock];
    for (int i = 0; i < 16; ++i) {
        const int sc = d > 0.f ? std::clamp(int(std::lround(scale[i] / d)), -128, 127) : 0;
        b.scales[i] = int8_t(sc);
        const float s = d * float(sc), is = s != 0.f ? 1.f / s : 0.f;
        for (int l = 0; l < 16; ++l) q[16 * i + l] = uint8_t(std::clamp(int(std::lround(x[16 * i + l] * is)), -32, 31) + 32);
    }
    pack_q6_k_codes(q, b);
}

}  // namespace hetero::sdk

// The block types added in ABI 1.2; they use the helpers above.
#include <hetero/sdk/quant_k_low.hpp>
#include <hetero/sdk/quant_q32.hpp>
// hetero's own block types (ABI 1.3).
#include <hetero/sdk/quant_e0m4.hpp>

namespace hetero::sdk {

// GGUF's K-quants: 256-element super-blocks (Q2_K .. Q6_K).
inline bool is_kquant_dtype(uint32_t dtype) {
    return dtype == HETERO_DTYPE_Q4_K || dtype == HETERO_DTYPE_Q5_K || dtype == HETERO_DTYPE_Q6_K || dtype == HETERO_DTYPE_Q2_K ||
           dtype == HETERO_DTYPE_Q3_K;
}

// Every 32-element block type: Q8_0, Q4_0, those since ABI 1.2 (Q4_1,
// Q5_0, Q5_1, IQ4_NL) and E0M4 (1.3). is_block_dtype below is Q8_0 and Q4_0 only.
inline bool is_block32_dtype(uint32_t dtype) {
    return dtype == HETERO_DTYPE_Q8_0 || dtype == HETERO_DTYPE_Q4_0 || dtype == HETERO_DTYPE_Q4_1 || dtype == HETERO_DTYPE_Q5_0 ||
           dtype == HETERO_DTYPE_Q5_1 || dtype == HETERO_DTYPE_IQ4_NL || dtype == HETERO_DTYPE_E0M4;
}

// Any block-quantized dtype.
inline bool is_quant_dtype(uint32_t dtype) { return is_block32_dtype(dtype) || is_kquant_dtype(dtype); }

// Elements per block of `dtype` along the innermost dimension (1 for scalars).
inline int64_t block_elems(uint32_t dtype) {
    if (is_block32_dtype(dtype)) return kQBlock;
    return is_kquant_dtype(dtype) ? kKBlock : 1;
}

// Bytes used by `n` elements of `dtype` along the innermost dimension (n must
// be a multiple of block_elems(dtype)). Returns 0 for an unknown dtype.
inline uint64_t row_bytes(uint32_t dtype, int64_t n) {
    switch (dtype) {
        case HETERO_DTYPE_F32: case HETERO_DTYPE_I32: return uint64_t(n) * 4;
        case HETERO_DTYPE_F16: case HETERO_DTYPE_BF16: return uint64_t(n) * 2;
        case HETERO_DTYPE_I8: return uint64_t(n);
        case HETERO_DTYPE_Q8_0: return uint64_t(n / kQBlock) * sizeof(BlockQ8_0);
        case HETERO_DTYPE_Q4_0: return uint64_t(n / kQBlock) * sizeof(BlockQ4_0);
        case HETERO_DTYPE_Q4_K: return uint64_t(n / kKBlock) * sizeof(BlockQ4K);
        case HETERO_DTYPE_Q5_K: return uint64_t(n / kKBlock) * sizeof(BlockQ5K);
        case HETERO_DTYPE_Q6_K: return uint64_t(n / kKBlock) * sizeof(BlockQ6K);
        case HETERO_DTYPE_Q4_1: return uint64_t(n / kQBlock) * sizeof(BlockQ4_1);
        case HETERO_DTYPE_Q5_0: return uint64_t(n / kQBlock) * sizeof(BlockQ5_0);
        case HETERO_DTYPE_Q5_1: return uint64_t(n / kQBlock) * sizeof(BlockQ5_1);
        case HETERO_DTYPE_IQ4_NL: return uint64_t(n / kQBlock) * sizeof(BlockIQ4_NL);
        case HETERO_DTYPE_Q2_K: return uint64_t(n / kKBlock) * sizeof(BlockQ2K);
        case HETERO_DTYPE_Q3_K: return uint64_t(n / kKBlock) * sizeof(BlockQ3K);
        case HETERO_DTYPE_E0M4: return uint64_t(n / kQBlock) * sizeof(BlockE0M4);
        default: return 0;
    }
}

// The 32-element block types (Q8_0, Q4_0); K-quants are is_kquant_dtype.
inline bool is_block_dtype(uint32_t dtype) { return dtype == HETERO_DTYPE_Q8_0 || dtype == HETERO_DTYPE_Q4_0; }

inline const char* dtype_name(uint32_t dtype) {
    switch (dtype) {
        case HETERO_DTYPE_F32: return "f32";
        case HETERO_DTYPE_F16: return "f16";
        case HETERO_DTYPE_BF16: return "bf16";
        case HETERO_DTYPE_Q8_0: return "q8_0";
        case HETERO_DTYPE_Q4_0: return "q4_0";
        case HETERO_DTYPE_I32: return "i32";
        case HETERO_DTYPE_I8: return "i8";
        case HETERO_DTYPE_Q4_K: return "q4_K";
        case HETERO_DTYPE_Q5_K: return "q5_K";
        case HETERO_DTYPE_Q6_K: return "q6_K";
        case HETERO_DTYPE_Q4_1: return "q4_1";
        case HETERO_DTYPE_Q5_0: return "q5_0";
        case HETERO_DTYPE_Q5_1: return "q5_1";
        case HETERO_DTYPE_IQ4_NL: return "iq4_nl";
        case HETERO_DTYPE_Q2_K: return "q2_K";
        case HETERO_DTYPE_Q3_K: return "q3_K";
        case HETERO_DTYPE_E0M4: return "e0m4";
        default: return "unknown";
    }
}

// Reference quantizers (GGUF's rounding): one block of 32 floats.
inline void quantize_block_q8_0(const float* x, BlockQ8_0& b) {
    float amax = 0.f;
    for (int i = 0; i < kQBlock; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 127.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    b.d = f32_to_f16(d);
    for (int i = 0; i < kQBlock; ++i) b.qs[i] = int8_t(std::lround(x[i] * id));
}

inline void quantize_block_q4_0(const float* x, BlockQ4_0& b) {
    float amax = 0.f, max = 0.f;
    for (int i = 0; i < kQBlock; ++i) {
        if (std::fabs(x[i]) > amax) { amax = std::fabs(x[i]); max = x[i]; }
    }
    const float d = max / -8.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    b.d = f32_to_f16(d);
    for (int j = 0; j < kQBlock / 2; ++j) {
        const float x0 = x[j] * id, x1 = x[j + kQBlock / 2] * id;
        const int q0 = std::min(15, int(x0 + 8.5f));
        const int q1 = std::min(15, int(x1 + 8.5f));
        b.qs[j] = uint8_t(q0 | (q1 << 4));
    }
}

inline void dequantize_block_q8_0(const BlockQ8_0& b, float* y) {
    const float d = f16_to_f32(b.d);
    for (int i = 0; i < kQBlock; ++i) y[i] = d * float(b.qs[i]);
}

inline void dequantize_block_q4_0(const BlockQ4_0& b, float* y) {
    const float d = f16_to_f32(b.d);
    for (int j = 0; j < kQBlock / 2; ++j) {
        y[j] = d * float(int(b.qs[j] & 0x0f) - 8);
        y[j + kQBlock / 2] = d * float(int(b.qs[j] >> 4) - 8);
    }
}

namespace detail {
// fn(block i, its kBlock floats) for the n / kBlock blocks of a row, either
// way round: (const Block*, float*) decodes, (const float*, Block*) encodes.
template <int64_t kBlock, class Block, class Fn>
void each_block(const Block* blocks, float* f32, int64_t n, Fn fn) {
    for (int64_t i = 0; i < n / kBlock; ++i) fn(blocks[i], f32 + i * kBlock);
}
template <int64_t kBlock, class Block, class Fn>
void each_block(const float* f32, Block* blocks, int64_t n, Fn fn) {
    for (int64_t i = 0; i < n / kBlock; ++i) fn(f32 + i * kBlock, blocks[i]);
}
}  // namespace detail

// Converts n elements of a row of `dtype` to f32 (n a multiple of block_elems(dtype)).
inline void row_to_f32(uint32_t dtype, const void* src, float* dst, int64_t n) {
    switch (dtype) {
        case HETERO_DTYPE_F32: std::memcpy(dst, src, size_t(n) * 4); break;
        case HETERO_DTYPE_F16: {
            const auto* s = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(s[i]);
            break;
        }
        case HETERO_DTYPE_BF16: {
            const auto* s = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
            break;
        }
        case HETERO_DTYPE_Q8_0: detail::each_block<kQBlock>(static_cast<const BlockQ8_0*>(src), dst, n, dequantize_block_q8_0); break;
        case HETERO_DTYPE_Q4_0: detail::each_block<kQBlock>(static_cast<const BlockQ4_0*>(src), dst, n, dequantize_block_q4_0); break;
        case HETERO_DTYPE_Q4_K: detail::each_block<kKBlock>(static_cast<const BlockQ4K*>(src), dst, n, dequantize_block_q4_k); break;
        case HETERO_DTYPE_Q5_K: detail::each_block<kKBlock>(static_cast<const BlockQ5K*>(src), dst, n, dequantize_block_q5_k); break;
        case HETERO_DTYPE_Q6_K: detail::each_block<kKBlock>(static_cast<const BlockQ6K*>(src), dst, n, dequantize_block_q6_k); break;
        case HETERO_DTYPE_Q4_1: detail::each_block<kQBlock>(static_cast<const BlockQ4_1*>(src), dst, n, dequantize_block_q4_1); break;
        case HETERO_DTYPE_Q5_0: detail::each_block<kQBlock>(static_cast<const BlockQ5_0*>(src), dst, n, dequantize_block_q5_0); break;
        case HETERO_DTYPE_Q5_1: detail::each_block<kQBlock>(static_cast<const BlockQ5_1*>(src), dst, n, dequantize_block_q5_1); break;
        case HETERO_DTYPE_IQ4_NL: detail::each_block<kQBlock>(static_cast<const BlockIQ4_NL*>(src), dst, n, dequantize_block_iq4_nl); break;
        case HETERO_DTYPE_Q2_K: detail::each_block<kKBlock>(static_cast<const BlockQ2K*>(src), dst, n, dequantize_block_q2_k); break;
        case HETERO_DTYPE_Q3_K: detail::each_block<kKBlock>(static_cast<const BlockQ3K*>(src), dst, n, dequantize_block_q3_k); break;
        case HETERO_DTYPE_E0M4: detail::each_block<kQBlock>(static_cast<const BlockE0M4*>(src), dst, n, dequantize_block_e0m4); break;
        default: break;
    }
}

// Converts n f32 values to a row of `dtype` (n a multiple of block_elems(dtype)).
inline void row_from_f32(uint32_t dtype, const float* src, void* dst, int64_t n) {
    switch (dtype) {
        case HETERO_DTYPE_F32: std::memcpy(dst, src, size_t(n) * 4); break;
        case HETERO_DTYPE_F16: {
            auto* d = static_cast<uint16_t*>(dst);
            for (int64_t i = 0; i < n; ++i) d[i] = f32_to_f16(src[i]);
            break;
        }
        case HETERO_DTYPE_BF16: {
            auto* d = static_cast<uint16_t*>(dst);
            for (int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
            break;
        }
        case HETERO_DTYPE_Q8_0: detail::each_block<kQBlock>(src, static_cast<BlockQ8_0*>(dst), n, quantize_block_q8_0); break;
        case HETERO_DTYPE_Q4_0: detail::each_block<kQBlock>(src, static_cast<BlockQ4_0*>(dst), n, quantize_block_q4_0); break;
        case HETERO_DTYPE_Q4_K: detail::each_block<kKBlock>(src, static_cast<BlockQ4K*>(dst), n, quantize_block_q4_k); break;
        case HETERO_DTYPE_Q5_K: detail::each_block<kKBlock>(src, static_cast<BlockQ5K*>(dst), n, quantize_block_q5_k); break;
        case HETERO_DTYPE_Q6_K: detail::each_block<kKBlock>(src, static_cast<BlockQ6K*>(dst), n, quantize_block_q6_k); break;
        case HETERO_DTYPE_Q4_1: detail::each_block<kQBlock>(src, static_cast<BlockQ4_1*>(dst), n, quantize_block_q4_1); break;
        case HETERO_DTYPE_Q5_0: detail::each_block<kQBlock>(src, static_cast<BlockQ5_0*>(dst), n, quantize_block_q5_0); break;
        case HETERO_DTYPE_Q5_1: detail::each_block<kQBlock>(src, static_cast<BlockQ5_1*>(dst), n, quantize_block_q5_1); break;
        case HETERO_DTYPE_IQ4_NL: detail::each_block<kQBlock>(src, static_cast<BlockIQ4_NL*>(dst), n, quantize_block_iq4_nl); break;
        case HETERO_DTYPE_Q2_K: detail::each_block<kKBlock>(src, static_cast<BlockQ2K*>(dst), n, quantize_block_q2_k); break;
        case HETERO_DTYPE_Q3_K: detail::each_block<kKBlock>(src, static_cast<BlockQ3K*>(dst), n, quantize_block_q3_k); break;
        case HETERO_DTYPE_E0M4: detail::each_block<kQBlock>(src, static_cast<BlockE0M4*>(dst), n, quantize_block_e0m4); break;
        default: break;
    }
}

}  // namespace hetero::sdk
