// E0M4 (ABI 1.3): FP4 with no exponent bits, after Transformer-Lite §2.3.
// Included by quant.hpp after its f16 helpers; not a header of its own.
//
// A block's 32 values are mapped by a scale and a bias into floats of
// [2, 4). Those share their sign and exponent, so a value is kept as the top
// four bits of its fraction (the fifth rounds), and dequantization rebuilds
// the float by two bit operations, `bits | q << shift`, with no integer to
// float conversion. Stored: f16 d, f16 b, 16 bytes of codes laid out as in
// Q4_1; value = d * (w - b), w = 2 + q / 8.
//
// The codes are an affine 4-bit grid, v = (d / 8) (q - z) with z = 8 (b - 2):
// where a block holds both signs the quantizer picks an integer z, so b has
// no fraction bits below the code's and a zero weight stays exactly zero.
#pragma once

#include <hetero/sdk/block_layout.h>

#include <limits>

namespace hetero::sdk {

struct BlockE0M4 {
    uint16_t d;  // f16 scale
    uint16_t b;  // f16 bias, in the [2, 4) domain of the codes
    uint8_t qs[16];
};
static_assert(sizeof(BlockE0M4) == HETERO_E0M4_BYTES, "E0M4 block must be 20 bytes");

// The float in [2, 4) whose top fraction bits are q (0..15): 2 + q / 8.
inline float e0m4_fraction(int q) { return bits_to_float(HETERO_E0M4_F32_BITS | uint32_t(q) << HETERO_E0M4_F32_SHIFT); }

// The code of w (a value mapped into [2, 4); clamped there): its top four
// fraction bits plus the next bit, at most 15 (round half up).
inline int e0m4_code(float w) {
    w = std::fmin(std::fmax(w, 2.f), std::nextafter(4.f, 0.f));  // NaN -> 2
    const uint32_t bits = float_to_bits(w);
    const int top = int(bits >> HETERO_E0M4_F32_SHIFT & 15u), round = int(bits >> (HETERO_E0M4_F32_SHIFT - 1) & 1u);
    return std::min(top + round, 15);
}

inline void dequantize_block_e0m4(const BlockE0M4& blk, float* y) {
    const float d = f16_to_f32(blk.d), b = f16_to_f32(blk.b);
    for (int j = 0; j < 16; ++j) {
        y[j] = d * (e0m4_fraction(blk.qs[j] & 0x0f) - b);
        y[j + 16] = d * (e0m4_fraction(blk.qs[j] >> 4) - b);
    }
}

namespace detail {

// Stores the grid of step s and zero point z (v = s (q - z)) as d and b, and
// codes x against the stored (rounded) fields; returns the squared error.
inline float e0m4_encode(const float* x, float s, float z, BlockE0M4& blk) {
    blk.d = f32_to_f16(std::fmin(8.f * s, 65504.f));
    blk.b = f32_to_f16(std::fmin(std::fmax(2.f + z / 8.f, -65504.f), 65504.f));
    const float d = f16_to_f32(blk.d), b = f16_to_f32(blk.b), id = d > 0.f ? 1.f / d : 0.f;
    int q[32];
    float err = 0.f;
    for (int e = 0; e < 32; ++e) {
        q[e] = e0m4_code(x[e] * id + b);
        const float r = x[e] - d * (e0m4_fraction(q[e]) - b);
        err += r * r;
    }
    for (int j = 0; j < 16; ++j) blk.qs[j] = uint8_t(q[j] | q[j + 16] << 4);
    return err;
}

}  // namespace detail

// The grid with the least squared error among a few near the block's
// min/max fit. Blocks of both signs get an integer zero point (zero exact);
// one-sided blocks start the grid at their minimum.
inline void quantize_block_e0m4(const float* x, BlockE0M4& blk) {
    float lo = x[0], hi = x[0];
    for (int e = 1; e < 32; ++e) { lo = std::fmin(lo, x[e]); hi = std::fmax(hi, x[e]); }
    if (!(hi > lo)) {  // one value (or none): d (2 - 1) with code 0
        blk.d = f32_to_f16(std::isfinite(lo) ? lo : 0.f);
        blk.b = f32_to_f16(1.f);
        std::memset(blk.qs, 0, sizeof(blk.qs));
        return;
    }
    const float fit = (hi - lo) / 15.f;
    if (lo > 0.f || hi < 0.f) {
        // No zero to keep: the bias may have fraction bits; |z| is bounded so
        // that b stays finite in f16.
        const float s = std::fmax(fit, std::fabs(lo) / (8.f * 60000.f));
        detail::e0m4_encode(x, s, -lo / s, blk);
        return;
    }
    BlockE0M4 trial;
    float best = std::numeric_limits<float>::infinity();
    const int z0 = int(std::lround(-lo / fit));
    for (int z = std::max(z0 - 1, 0); z <= std::min(z0 + 1, 15); ++z) {
        // The least step that keeps both ends on the grid at this zero point.
        const float s_hi = z < 15 ? hi / float(15 - z) : (hi > 0.f ? std::numeric_limits<float>::infinity() : 0.f);
        const float s_lo = z > 0 ? -lo / float(z) : (lo < 0.f ? std::numeric_limits<float>::infinity() : 0.f);
        const float s = std::fmax(s_hi, s_lo);
        if (!(s > 0.f) || !std::isfinite(s)) continue;
        for (const float shrink : {1.f, 0.95f, 0.9f}) {  // clipping an end can pay for a finer grid
            const float err = detail::e0m4_encode(x, s * shrink, float(z), trial);
            if (err < best) { best = err; blk = trial; }
        }
    }
    if (!std::isfinite(best)) detail::e0m4_encode(x, fit, -lo / fit, blk);
}

}  // namespace hetero::sdk
