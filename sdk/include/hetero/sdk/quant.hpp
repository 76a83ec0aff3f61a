// Block formats and scalar conversions shared by the core, the providers and
// the reference ops. Bit layouts are GGUF's, so weights map straight from files.
#pragma once

#include <hetero/ep_api.h>

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
static_assert(sizeof(BlockQ8_0) == 34, "Q8_0 block must match GGUF");

struct BlockQ4_0 {
    uint16_t d;        // f16 scale
    uint8_t qs[16];    // element j in low nibble of qs[j], element j+16 in high nibble; value = d * (q - 8)
};
static_assert(sizeof(BlockQ4_0) == 18, "Q4_0 block must match GGUF");

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

// Bytes used by `n` elements of `dtype` along the innermost dimension (n must
// be a multiple of 32 for block types). Returns 0 for an unknown dtype.
inline uint64_t row_bytes(uint32_t dtype, int64_t n) {
    switch (dtype) {
        case HETERO_DTYPE_F32: case HETERO_DTYPE_I32: return uint64_t(n) * 4;
        case HETERO_DTYPE_F16: case HETERO_DTYPE_BF16: return uint64_t(n) * 2;
        case HETERO_DTYPE_I8: return uint64_t(n);
        case HETERO_DTYPE_Q8_0: return uint64_t(n / kQBlock) * sizeof(BlockQ8_0);
        case HETERO_DTYPE_Q4_0: return uint64_t(n / kQBlock) * sizeof(BlockQ4_0);
        default: return 0;
    }
}

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

// Converts n elements of a row of `dtype` to f32 (n multiple of 32 for blocks).
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
        case HETERO_DTYPE_Q8_0: {
            const auto* b = static_cast<const BlockQ8_0*>(src);
            for (int64_t i = 0; i < n / kQBlock; ++i) dequantize_block_q8_0(b[i], dst + i * kQBlock);
            break;
        }
        case HETERO_DTYPE_Q4_0: {
            const auto* b = static_cast<const BlockQ4_0*>(src);
            for (int64_t i = 0; i < n / kQBlock; ++i) dequantize_block_q4_0(b[i], dst + i * kQBlock);
            break;
        }
        default: break;
    }
}

// Converts n f32 values to a row of `dtype` (n multiple of 32 for blocks).
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
        case HETERO_DTYPE_Q8_0: {
            auto* b = static_cast<BlockQ8_0*>(dst);
            for (int64_t i = 0; i < n / kQBlock; ++i) quantize_block_q8_0(src + i * kQBlock, b[i]);
            break;
        }
        case HETERO_DTYPE_Q4_0: {
            auto* b = static_cast<BlockQ4_0*>(dst);
            for (int64_t i = 0; i < n / kQBlock; ++i) quantize_block_q4_0(src + i * kQBlock, b[i]);
            break;
        }
        default: break;
    }
}

}  // namespace hetero::sdk
