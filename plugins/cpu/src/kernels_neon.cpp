// NEON kernels for aarch64 (armv8-a baseline: no dotprod, no fp16
// arithmetic; only the f16 <-> f32 conversions every armv8-a core has).
#include "kernels.hpp"

#include <hetero/ep_api.h>

#include <arm_neon.h>

namespace hetero::cpu {
namespace {

inline uint16_t load_u16(const uint8_t* p) {
    uint16_t v;
    __builtin_memcpy(&v, p, sizeof(v));
    return v;
}
inline float f16_scalar(uint16_t h) { return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0); }
inline uint16_t f16_from_scalar(float f) { return vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(vdupq_n_f32(f))), 0); }
inline float bf16_scalar(uint16_t h) {
    const uint32_t u = uint32_t(h) << 16;
    float f;
    __builtin_memcpy(&f, &u, sizeof(f));
    return f;
}
inline float32x4_t load_f16x4(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
inline float32x4_t load_bf16x4(const uint16_t* p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }

void quantize_act(const float* x, ActBlock* out, int64_t k) {
    for (int64_t b = 0; b < k / 32; ++b) {
        const float* p = x + b * 32;
        float32x4_t v[8];
        float32x4_t m = vdupq_n_f32(0.f);
        for (int i = 0; i < 8; ++i) {
            v[i] = vld1q_f32(p + 4 * i);
            m = vmaxq_f32(m, vabsq_f32(v[i]));
        }
        const float d = vmaxvq_f32(m) / 127.f;
        const float id = d != 0.f ? 1.f / d : 0.f;
        int32x4_t total = vdupq_n_s32(0);
        for (int i = 0; i < 8; i += 2) {
            const int32x4_t a = vcvtnq_s32_f32(vmulq_n_f32(v[i], id));  // round to nearest
            const int32x4_t c = vcvtnq_s32_f32(vmulq_n_f32(v[i + 1], id));
            total = vaddq_s32(total, vaddq_s32(a, c));
            const int16x8_t h = vcombine_s16(vqmovn_s32(a), vqmovn_s32(c));
            vst1_s8(out[b].qs + 4 * i, vqmovn_s16(h));
        }
        out[b].d = d;
        out[b].neg_sum = -vaddvq_s32(total);
    }
}

// Sum of 32 products of s8 x s8 as four 32-bit lanes.
inline int32x4_t dot32(int8x16_t w0, int8x16_t w1, int8x16_t x0, int8x16_t x1) {
    int16x8_t p = vmull_s8(vget_low_s8(w0), vget_low_s8(x0));
    p = vmlal_s8(p, vget_high_s8(w0), vget_high_s8(x0));
    int16x8_t q = vmull_s8(vget_low_s8(w1), vget_low_s8(x1));
    q = vmlal_s8(q, vget_high_s8(w1), vget_high_s8(x1));
    return vpadalq_s16(vpaddlq_s16(p), q);
}

struct WeightsQ8 {
    static constexpr uint64_t kBlockBytes = 34;
    struct Block { int8x16_t lo, hi; };
    static Block load(const uint8_t* p) {
        return {vld1q_s8(reinterpret_cast<const int8_t*>(p + 2)), vld1q_s8(reinterpret_cast<const int8_t*>(p + 18))};
    }
};
// Q4_0 nibbles are shifted to -8..7 so both operands are signed bytes.
struct WeightsQ4 {
    static constexpr uint64_t kBlockBytes = 18;
    struct Block { int8x16_t lo, hi; };
    static Block load(const uint8_t* p) {
        const uint8x16_t q = vld1q_u8(p + 2);
        const int8x16_t eight = vdupq_n_s8(8);
        return {vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0f))), eight),
                vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight)};
    }
};

template <class Q, int RM, int RN>
void quant_tile(const MatmulArgs& a, int64_t m, int64_t n) {
    const int64_t nb = a.k / 32;
    float32x4_t acc[RM][RN];
    const uint8_t* w[RM];
    const ActBlock* x[RN];
    for (int r = 0; r < RM; ++r) {
        w[r] = a.w + uint64_t(m + r) * a.w_row_bytes;
        for (int c = 0; c < RN; ++c) acc[r][c] = vdupq_n_f32(0.f);
    }
    for (int c = 0; c < RN; ++c) x[c] = a.xq + (n + c) * nb;
    for (int64_t b = 0; b < nb; ++b) {
        const uint64_t off = uint64_t(b) * Q::kBlockBytes;
        typename Q::Block wb[RM];
        float dw[RM];
        for (int r = 0; r < RM; ++r) {
            wb[r] = Q::load(w[r] + off);
            dw[r] = f16_scalar(load_u16(w[r] + off));
        }
        for (int c = 0; c < RN; ++c) {
            const ActBlock& xb = x[c][b];
            const int8x16_t x0 = vld1q_s8(xb.qs), x1 = vld1q_s8(xb.qs + 16);
            for (int r = 0; r < RM; ++r)
                acc[r][c] = vmlaq_n_f32(acc[r][c], vcvtq_f32_s32(dot32(wb[r].lo, wb[r].hi, x0, x1)), dw[r] * xb.d);
        }
    }
    for (int r = 0; r < RM; ++r)
        for (int c = 0; c < RN; ++c) a.y[(n + c) * a.m + m + r] = vaddvq_f32(acc[r][c]) + (a.bias ? a.bias[m + r] : 0.f);
}

struct WeightsF32 {
    static float32x4_t load(const uint8_t* row, int64_t i) { return vld1q_f32(reinterpret_cast<const float*>(row) + i); }
    static float scalar(const uint8_t* row, int64_t i) { return reinterpret_cast<const float*>(row)[i]; }
};
struct WeightsF16 {
    static float32x4_t load(const uint8_t* row, int64_t i) { return load_f16x4(reinterpret_cast<const uint16_t*>(row) + i); }
    static float scalar(const uint8_t* row, int64_t i) { return f16_scalar(reinterpret_cast<const uint16_t*>(row)[i]); }
};
struct WeightsBF16 {
    static float32x4_t load(const uint8_t* row, int64_t i) { return load_bf16x4(reinterpret_cast<const uint16_t*>(row) + i); }
    static float scalar(const uint8_t* row, int64_t i) { return bf16_scalar(reinterpret_cast<const uint16_t*>(row)[i]); }
};

template <class W, int RM, int RN>
void float_tile(const MatmulArgs& a, int64_t m, int64_t n) {
    float32x4_t acc[RM][RN];
    const uint8_t* w[RM];
    const float* x[RN];
    for (int r = 0; r < RM; ++r) {
        w[r] = a.w + uint64_t(m + r) * a.w_row_bytes;
        for (int c = 0; c < RN; ++c) acc[r][c] = vdupq_n_f32(0.f);
    }
    for (int c = 0; c < RN; ++c) x[c] = a.x + (n + c) * a.k;
    int64_t i = 0;
    for (; i + 4 <= a.k; i += 4) {
        float32x4_t xv[RN];
        for (int c = 0; c < RN; ++c) xv[c] = vld1q_f32(x[c] + i);
        for (int r = 0; r < RM; ++r) {
            const float32x4_t wv = W::load(w[r], i);
            for (int c = 0; c < RN; ++c) acc[r][c] = vfmaq_f32(acc[r][c], wv, xv[c]);
        }
    }
    for (int r = 0; r < RM; ++r)
        for (int c = 0; c < RN; ++c) {
            float v = vaddvq_f32(acc[r][c]);
            for (int64_t j = i; j < a.k; ++j) v += W::scalar(w[r], j) * x[c][j];
            if (a.bias) v += a.bias[m + r];
            a.y[(n + c) * a.m + m + r] = v;
        }
}

template <void (*Batch)(const MatmulArgs&, int64_t, int64_t), void (*BatchEdge)(const MatmulArgs&, int64_t, int64_t),
          void (*Single)(const MatmulArgs&, int64_t, int64_t), void (*SingleEdge)(const MatmulArgs&, int64_t, int64_t)>
void tile_walk(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    int64_t n = n0;
    for (; n + 4 <= n1; n += 4) {
        int64_t m = m0;
        for (; m + 2 <= m1; m += 2) Batch(a, m, n);
        for (; m < m1; ++m) BatchEdge(a, m, n);
    }
    for (; n < n1; ++n) {
        int64_t m = m0;
        for (; m + 4 <= m1; m += 4) Single(a, m, n);
        for (; m < m1; ++m) SingleEdge(a, m, n);
    }
}

template <class Q>
void matmul_quant(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    tile_walk<&quant_tile<Q, 2, 4>, &quant_tile<Q, 1, 4>, &quant_tile<Q, 4, 1>, &quant_tile<Q, 1, 1>>(a, m0, m1, n0, n1);
}
template <class W>
void matmul_float(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    tile_walk<&float_tile<W, 2, 4>, &float_tile<W, 1, 4>, &float_tile<W, 4, 1>, &float_tile<W, 1, 1>>(a, m0, m1, n0, n1);
}

#include "kernels_neon_quants.inc"

float dot_f32(const float* a, const float* b, int64_t n) {
    float32x4_t acc = vdupq_n_f32(0.f);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) acc = vfmaq_f32(acc, vld1q_f32(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(acc);
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}
float dot_f16(const uint16_t* a, const float* b, int64_t n) {
    float32x4_t acc = vdupq_n_f32(0.f);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) acc = vfmaq_f32(acc, load_f16x4(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(acc);
    for (; i < n; ++i) s += f16_scalar(a[i]) * b[i];
    return s;
}
void axpy_f32(float* y, float alpha, const float* x, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), vld1q_f32(x + i), alpha));
    for (; i < n; ++i) y[i] += alpha * x[i];
}
void axpy_f16(float* y, float alpha, const uint16_t* x, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), load_f16x4(x + i), alpha));
    for (; i < n; ++i) y[i] += alpha * f16_scalar(x[i]);
}
void f32_to_f16_row(const float* x, uint16_t* y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(y + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    for (; i < n; ++i) y[i] = f16_from_scalar(x[i]);
}
void f16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, load_f16x4(x + i));
    for (; i < n; ++i) y[i] = f16_scalar(x[i]);
}

constexpr Kernels make_table() {
    Kernels k{.name = "neon",
              .quantize_act = &quantize_act,
              .dot_f32 = &dot_f32,
              .dot_f16 = &dot_f16,
              .axpy_f32 = &axpy_f32,
              .axpy_f16 = &axpy_f16,
              .f32_to_f16_row = &f32_to_f16_row,
              .f16_to_f32_row = &f16_to_f32_row};
    // Matmuls by weight dtype; nothing packed.
    auto& mm = k.matmul;
    mm[HETERO_DTYPE_F32] = {.tile = &matmul_float<WeightsF32>};
    mm[HETERO_DTYPE_F16] = {.tile = &matmul_float<WeightsF16>};
    mm[HETERO_DTYPE_BF16] = {.tile = &matmul_float<WeightsBF16>};
    mm[HETERO_DTYPE_Q8_0] = {.tile = &matmul_quant<WeightsQ8>, .int8_act = true};
    mm[HETERO_DTYPE_Q4_0] = {.tile = &matmul_quant<WeightsQ4>, .int8_act = true};
    // K-quants: the portable tiles (dequantise, then f32 dot products).
    mm[HETERO_DTYPE_Q4_K] = {.tile = &matmul_q4_k_portable};
    mm[HETERO_DTYPE_Q5_K] = {.tile = &matmul_q5_k_portable};
    mm[HETERO_DTYPE_Q6_K] = {.tile = &matmul_q6_k_portable};
    // The types of ABI 1.2: int8 activations (kernels_neon_quants.inc).
    mm[HETERO_DTYPE_Q4_1] = {.tile = &matmul_block32<NeonMin32<false>>, .int8_act = true};
    mm[HETERO_DTYPE_Q5_0] = {.tile = &matmul_block32<NeonQ5_0>, .int8_act = true};
    mm[HETERO_DTYPE_Q5_1] = {.tile = &matmul_block32<NeonMin32<true>>, .int8_act = true};
    mm[HETERO_DTYPE_IQ4_NL] = {.tile = &matmul_block32<NeonIQ4NL>, .int8_act = true};
    mm[HETERO_DTYPE_Q2_K] = {.tile = &matmul_k16<&unpack_q2_k, 84, true>, .int8_act = true};
    mm[HETERO_DTYPE_Q3_K] = {.tile = &matmul_k16<&unpack_q3_k, 110, false>, .int8_act = true};
    mm[HETERO_DTYPE_E0M4] = {.tile = &matmul_block32<NeonE0M4>, .int8_act = true};
    return k;
}

}  // namespace

const Kernels& kernels_neon() {
    static constexpr Kernels k = make_table();  // constant-initialised: no code runs at load
    return k;
}

}  // namespace hetero::cpu
