#include "quant_search.hpp"

#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hetero::model_detail {

namespace {

using namespace hetero::sdk;

int nearest(float v) { return int(std::lround(v)); }

// value ~ scale * q - min, q in 0..levels, min >= 0 (the formats store the
// offset as a non-negative min): the pair of least squared error over grids
// that stretch the sub-block's range to levels + t (t in -1 .. 1), each
// refined by least squares on the levels it chose.
struct Affine {
    float scale = 0.f, min = 0.f;
};

Affine fit_affine(const float* x, int n, int levels) {
    float lo = x[0], hi = x[0];
    for (int i = 1; i < n; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
    }
    lo = std::min(lo, 0.f);
    if (hi <= lo) return {0.f, -lo};
    Affine best{(hi - lo) / float(levels), -lo};
    auto error = [&](const Affine& a) {
        double e = 0;
        const float inv = a.scale > 0 ? 1.f / a.scale : 0.f;
        for (int i = 0; i < n; ++i) {
            const int q = std::clamp(nearest((x[i] + a.min) * inv), 0, levels);
            const double d = double(a.scale) * q - a.min - x[i];
            e += d * d;
        }
        return e;
    };
    double best_err = error(best);
    for (int t = -10; t <= 10; ++t) {
        const float inv = (float(levels) + 0.1f * float(t)) / (hi - lo);
        double sq = 0, sq2 = 0, sx = 0, sxq = 0;
        for (int i = 0; i < n; ++i) {
            const int q = std::clamp(nearest((x[i] - lo) * inv), 0, levels);
            sq += q;
            sq2 += double(q) * q;
            sx += x[i];
            sxq += double(x[i]) * q;
        }
        // Least squares x ~ s q + b, then min = -b; a positive b is not storable.
        const double det = n * sq2 - sq * sq;
        if (det <= 0) continue;
        double s = (n * sxq - sq * sx) / det, b = (sq2 * sx - sq * sxq) / det;
        if (b > 0) {
            b = 0;
            s = sq2 > 0 ? sxq / sq2 : 0;
        }
        if (!(s > 0)) continue;
        const Affine a{float(s), float(-b)};
        const double e = error(a);
        if (e < best_err) {
            best_err = e;
            best = a;
        }
    }
    return best;
}

// value ~ scale * q, q in -half .. half - 1: the scale of least squared error
// among grids that map the value of largest magnitude to -(half + t).
float fit_symmetric(const float* x, int n, int half) {
    float amax = 0.f, vmax = 0.f;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            vmax = x[i];
        }
    if (amax == 0.f) return 0.f;
    float best = vmax / -float(half);
    double best_err = -1;
    for (int t = -9; t <= 9; ++t) {
        const float inv = -(float(half) + 0.1f * float(t)) / vmax;
        double sxq = 0, sq2 = 0;
        for (int i = 0; i < n; ++i) {
            const int q = std::clamp(nearest(x[i] * inv), -half, half - 1);
            sxq += double(x[i]) * q;
            sq2 += double(q) * q;
        }
        if (sq2 <= 0) continue;
        const double s = sxq / sq2;
        double e = 0;
        for (int i = 0; i < n; ++i) {
            const int q = std::clamp(nearest(x[i] * inv), -half, half - 1);
            e += (s * q - x[i]) * (s * q - x[i]);
        }
        if (best_err < 0 || e < best_err) {
            best_err = e;
            best = float(s);
        }
    }
    return best;
}

// The super-block scale of `n` sub-block values quantized to 0..max_code
// (f16, as stored), and each value's code; `at_least_one`: a positive value
// keeps a code of 1 or more (a sub-block scale of 0 would flatten it).
float quantize_scales(const float* v, int n, int max_code, bool at_least_one, int* code) {
    float vmax = 0.f;
    for (int i = 0; i < n; ++i) vmax = std::max(vmax, v[i]);
    const float d = f16_to_f32(f32_to_f16(vmax / float(max_code)));
    for (int i = 0; i < n; ++i) code[i] = d > 0 ? std::clamp(nearest(v[i] / d), at_least_one && v[i] > 0 ? 1 : 0, max_code) : 0;
    return d;
}

// Each value's level for the sub-block's stored scale and min.
void affine_codes(const float* x, int n, float scale, float min, int levels, int* q) {
    const float inv = scale > 0 ? 1.f / scale : 0.f;
    for (int i = 0; i < n; ++i) q[i] = std::clamp(nearest((x[i] + min) * inv), 0, levels);
}

// Q4_K (levels 15) and Q5_K (31): 8 sub-blocks of 32, 6-bit scales and mins.
void encode_k_affine(const float* x, int levels, uint16_t& d_out, uint16_t& dmin_out, uint8_t* scales, int* q) {
    float s[8], m[8];
    for (int j = 0; j < 8; ++j) {
        const Affine a = fit_affine(x + 32 * j, 32, levels);
        s[j] = a.scale;
        m[j] = a.min;
    }
    int sc[8], mc[8];
    const float d = quantize_scales(s, 8, 63, true, sc), dmin = quantize_scales(m, 8, 63, false, mc);
    d_out = f32_to_f16(d);
    dmin_out = f32_to_f16(dmin);
    k_pack_scale_min(sc, mc, scales);
    for (int j = 0; j < 8; ++j) affine_codes(x + 32 * j, 32, d * float(sc[j]), dmin * float(mc[j]), levels, q + 32 * j);
}

void encode_q4_k(const float* x, BlockQ4K& b) {
    int q[kKBlock];
    encode_k_affine(x, 15, b.d, b.dmin, b.scales, q);
    pack_q4_k_codes(q, b);
}

void encode_q5_k(const float* x, BlockQ5K& b) {
    int q[kKBlock];
    encode_k_affine(x, 31, b.d, b.dmin, b.scales, q);
    pack_q5_k_codes(q, b);
}

// Q2_K: 16 sub-blocks of 16, levels 0..3, 4-bit scales and mins.
void encode_q2_k(const float* x, BlockQ2K& b) {
    float s[16], m[16];
    for (int j = 0; j < 16; ++j) {
        const Affine a = fit_affine(x + 16 * j, 16, 3);
        s[j] = a.scale;
        m[j] = a.min;
    }
    int sc[16], mc[16], q[kKBlock];
    const float d = quantize_scales(s, 16, 15, true, sc), dmin = quantize_scales(m, 16, 15, false, mc);
    b.d = f32_to_f16(d);
    b.dmin = f32_to_f16(dmin);
    for (int j = 0; j < 16; ++j) {
        b.scales[j] = uint8_t(sc[j] | mc[j] << 4);
        affine_codes(x + 16 * j, 16, d * float(sc[j]), dmin * float(mc[j]), 3, q + 16 * j);
    }
    sdk::detail::k_store_low_bits(q, b.qs);
}

// Signed sub-block scales (16 of 16 values) as codes -max_code .. max_code
// of one f16 super-block scale.
float quantize_signed_scales(const float* s, int max_code, int* code) {
    float amax = 0.f;
    for (int j = 0; j < 16; ++j) amax = std::max(amax, std::fabs(s[j]));
    const float d = f16_to_f32(f32_to_f16(amax / float(max_code)));
    for (int j = 0; j < 16; ++j) code[j] = d > 0 ? std::clamp(nearest(s[j] / d), -max_code, max_code) : 0;
    return d;
}

void symmetric_codes(const float* x, float scale, int half, int* q) {
    const float inv = scale != 0.f ? 1.f / scale : 0.f;
    for (int i = 0; i < 16; ++i) q[i] = std::clamp(nearest(x[i] * inv), -half, half - 1) + half;
}

// The signed sub-block scales of a Q6_K or Q3_K block: each sub-block's
// symmetric fit over `half` levels either side, as integers of at most
// `scale_max` (into sc) under the block scale returned.
float signed_subblock_scales(const float* x, int half, int scale_max, int* sc) {
    float s[16];
    for (int j = 0; j < 16; ++j) s[j] = fit_symmetric(x + 16 * j, 16, half);
    return quantize_signed_scales(s, scale_max, sc);
}

// Q6_K: levels -32 .. 31, int8 sub-block scales.
void encode_q6_k(const float* x, BlockQ6K& b) {
    int sc[16], q[kKBlock];
    const float d = signed_subblock_scales(x, 32, 127, sc);
    b.d = f32_to_f16(d);
    for (int j = 0; j < 16; ++j) {
        b.scales[j] = int8_t(sc[j]);
        symmetric_codes(x + 16 * j, d * float(sc[j]), 32, q + 16 * j);
    }
    pack_q6_k_codes(q, b);
}

// Q3_K: levels -4 .. 3, 6-bit signed sub-block scales.
void encode_q3_k(const float* x, BlockQ3K& b) {
    int sc[16], q[kKBlock];
    const float d = signed_subblock_scales(x, 4, 31, sc);
    b.d = f32_to_f16(d);
    std::memset(b.scales, 0, sizeof b.scales);
    std::memset(b.hmask, 0, sizeof b.hmask);
    for (int j = 0; j < 16; ++j) {
        const int u = sc[j] + 32;  // stored 6-bit
        b.scales[j % 8] |= uint8_t((u & 0x0f) << (j < 8 ? 0 : 4));
        b.scales[8 + j % 4] |= uint8_t((u >> 4) << (2 * (j / 4)));
        symmetric_codes(x + 16 * j, d * float(sc[j]), 4, q + 16 * j);
    }
    sdk::detail::k_store_low_bits(q, b.qs);
    for (int e = 0; e < kKBlock; ++e) b.hmask[e % 32] |= uint8_t((q[e] >> 2) << (4 * (e / 128) + e % 128 / 32));
}

// IQ4_NL: the nearest of its 16 levels for each value; the block scale of
// least squared error among those that map the extreme near the end level.
int nearest_level(float v) {
    const int8_t* k = kIQ4NLValues;
    int i = int(std::upper_bound(k, k + 16, v, [](float a, int8_t b) { return a < float(b); }) - k);
    if (i == 0) return 0;
    if (i == 16) return 15;
    return v - float(k[i - 1]) <= float(k[i]) - v ? i - 1 : i;
}

void encode_iq4_nl(const float* x, BlockIQ4_NL& b) {
    float amax = 0.f, vmax = 0.f;
    for (int e = 0; e < 32; ++e)
        if (std::fabs(x[e]) > amax) {
            amax = std::fabs(x[e]);
            vmax = x[e];
        }
    int q[32] = {};
    float best = 0.f;
    if (amax > 0.f) {
        double best_err = -1;
        for (int t = -7; t <= 7; ++t) {
            const float inv = (float(kIQ4NLValues[0]) + float(t)) / vmax;
            double sxv = 0, sv2 = 0;
            int cand[32];
            for (int e = 0; e < 32; ++e) {
                cand[e] = nearest_level(x[e] * inv);
                const double v = kIQ4NLValues[cand[e]];
                sxv += x[e] * v;
                sv2 += v * v;
            }
            if (sv2 <= 0) continue;
            const double d = sxv / sv2;
            double err = 0;
            for (int e = 0; e < 32; ++e) err += (d * kIQ4NLValues[cand[e]] - x[e]) * (d * kIQ4NLValues[cand[e]] - x[e]);
            if (best_err < 0 || err < best_err) {
                best_err = err;
                best = float(d);
                std::copy(cand, cand + 32, q);
            }
        }
    }
    b.d = f32_to_f16(best);
    // The codes again for the scale as stored.
    const float d = f16_to_f32(b.d), inv = d != 0.f ? 1.f / d : 0.f;
    for (int e = 0; e < 32; ++e) q[e] = nearest_level(x[e] * inv);
    for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(q[j] | (q[j + 16] << 4));
}

template <int64_t kBlock, class Block, class Fn>
void each(const float* x, void* dst, int64_t n, Fn fn) {
    auto* blocks = static_cast<Block*>(dst);
    for (int64_t i = 0; i < n / kBlock; ++i) fn(x + i * kBlock, blocks[i]);
}

}  // namespace

void encode_row_best(uint32_t dtype, const float* x, void* dst, int64_t n) {
    switch (dtype) {
        case HETERO_DTYPE_Q2_K: each<kKBlock, BlockQ2K>(x, dst, n, encode_q2_k); break;
        case HETERO_DTYPE_Q3_K: each<kKBlock, BlockQ3K>(x, dst, n, encode_q3_k); break;
        case HETERO_DTYPE_Q4_K: each<kKBlock, BlockQ4K>(x, dst, n, encode_q4_k); break;
        case HETERO_DTYPE_Q5_K: each<kKBlock, BlockQ5K>(x, dst, n, encode_q5_k); break;
        case HETERO_DTYPE_Q6_K: each<kKBlock, BlockQ6K>(x, dst, n, encode_q6_k); break;
        case HETERO_DTYPE_IQ4_NL: each<kQBlock, BlockIQ4_NL>(x, dst, n, encode_iq4_nl); break;
        default: row_from_f32(dtype, x, dst, n); break;
    }
}

}  // namespace hetero::model_detail
