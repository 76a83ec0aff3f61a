// Portable kernels: the reference-like path for CPUs without a vector ISA the
// provider knows, and the fallback every other table is tested against.
#include "kernels.hpp"

#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>

namespace hetero::cpu {
namespace {

using sdk::BlockQ4_0;
using sdk::BlockQ8_0;

void quantize_act(const float* x, ActBlock* out, int64_t k) {
    for (int64_t b = 0; b < k / 32; ++b) {
        const float* v = x + b * 32;
        float amax = 0.f;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(v[i]));
        const float d = amax / 127.f;
        const float id = d != 0.f ? 1.f / d : 0.f;
        int32_t sum = 0;
        for (int i = 0; i < 32; ++i) {
            const int q = int(std::lround(v[i] * id));
            out[b].qs[i] = int8_t(q);
            sum += q;
        }
        out[b].d = d;
        out[b].neg_sum = -sum;
    }
}

// Float weights are widened in chunks so each chunk is reused by every
// activation row of the tile.
template <class Widen>
void matmul_float(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1, Widen widen) {
    constexpr int64_t kChunk = 256;
    float wf[kChunk];
    for (int64_t m = m0; m < m1; ++m) {
        const uint8_t* wrow = a.w + uint64_t(m) * a.w_row_bytes;
        for (int64_t n = n0; n < n1; ++n) a.y[n * a.m + m] = a.bias ? a.bias[m] : 0.f;
        for (int64_t c = 0; c < a.k; c += kChunk) {
            const int64_t len = std::min(kChunk, a.k - c);
            widen(wrow, c, len, wf);
            for (int64_t n = n0; n < n1; ++n) {
                const float* x = a.x + n * a.k + c;
                float s = 0.f;
                for (int64_t i = 0; i < len; ++i) s += wf[i] * x[i];
                a.y[n * a.m + m] += s;
            }
        }
    }
}

void matmul_f32(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    matmul_float(a, m0, m1, n0, n1, [](const uint8_t* w, int64_t c, int64_t len, float* out) {
        std::copy_n(reinterpret_cast<const float*>(w) + c, len, out);
    });
}
void matmul_f16(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    matmul_float(a, m0, m1, n0, n1, [](const uint8_t* w, int64_t c, int64_t len, float* out) {
        const auto* h = reinterpret_cast<const uint16_t*>(w) + c;
        for (int64_t i = 0; i < len; ++i) out[i] = sdk::f16_to_f32(h[i]);
    });
}
void matmul_bf16(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    matmul_float(a, m0, m1, n0, n1, [](const uint8_t* w, int64_t c, int64_t len, float* out) {
        const auto* h = reinterpret_cast<const uint16_t*>(w) + c;
        for (int64_t i = 0; i < len; ++i) out[i] = sdk::bf16_to_f32(h[i]);
    });
}

void matmul_q8_0(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const int64_t nb = a.k / 32;
    for (int64_t m = m0; m < m1; ++m) {
        const auto* w = reinterpret_cast<const BlockQ8_0*>(a.w + uint64_t(m) * a.w_row_bytes);
        for (int64_t n = n0; n < n1; ++n) {
            const ActBlock* x = a.xq + n * nb;
            float s = 0.f;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t isum = 0;
                for (int i = 0; i < 32; ++i) isum += int32_t(w[b].qs[i]) * int32_t(x[b].qs[i]);
                s += sdk::f16_to_f32(w[b].d) * x[b].d * float(isum);
            }
            a.y[n * a.m + m] = s + (a.bias ? a.bias[m] : 0.f);
        }
    }
}

void matmul_q4_0(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const int64_t nb = a.k / 32;
    for (int64_t m = m0; m < m1; ++m) {
        const auto* w = reinterpret_cast<const BlockQ4_0*>(a.w + uint64_t(m) * a.w_row_bytes);
        for (int64_t n = n0; n < n1; ++n) {
            const ActBlock* x = a.xq + n * nb;
            float s = 0.f;
            for (int64_t b = 0; b < nb; ++b) {
                // The stored nibbles carry an offset of 8: sum((q - 8) x) = sum(q x) - 8 sum(x).
                int32_t isum = 8 * x[b].neg_sum;
                for (int j = 0; j < 16; ++j) {
                    isum += int32_t(w[b].qs[j] & 0x0f) * x[b].qs[j];
                    isum += int32_t(w[b].qs[j] >> 4) * x[b].qs[j + 16];
                }
                s += sdk::f16_to_f32(w[b].d) * x[b].d * float(isum);
            }
            a.y[n * a.m + m] = s + (a.bias ? a.bias[m] : 0.f);
        }
    }
}

float dot_f32(const float* a, const float* b, int64_t n) {
    float s = 0.f;
    for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}
float dot_f16(const uint16_t* a, const float* b, int64_t n) {
    float s = 0.f;
    for (int64_t i = 0; i < n; ++i) s += sdk::f16_to_f32(a[i]) * b[i];
    return s;
}
void axpy_f32(float* y, float alpha, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
void axpy_f16(float* y, float alpha, const uint16_t* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * sdk::f16_to_f32(x[i]);
}
void f32_to_f16_row(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = sdk::f32_to_f16(x[i]);
}
void f16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = sdk::f16_to_f32(x[i]);
}

// Quant types without an int8 tile here: kChunk elements of a weight row
// are dequantised with the SDK's reference decoders, then dotted with every
// activation row of the tile.
constexpr int64_t kChunk = 2048;

template <class Block, int64_t kElems, void (*Decode)(const Block&, float*)>
void matmul_dequant(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    float wf[kChunk];
    for (int64_t m = m0; m < m1; ++m) {
        const auto* w = reinterpret_cast<const Block*>(a.w + uint64_t(m) * a.w_row_bytes);
        for (int64_t n = n0; n < n1; ++n) a.y[n * a.m + m] = a.bias ? a.bias[m] : 0.f;
        for (int64_t c = 0; c < a.k; c += kChunk) {
            const int64_t len = std::min(kChunk, a.k - c);
            for (int64_t b = 0; b < len / kElems; ++b) Decode(w[c / kElems + b], wf + b * kElems);
            for (int64_t n = n0; n < n1; ++n) a.y[n * a.m + m] += dot_f32(wf, a.x + n * a.k + c, len);
        }
    }
}

}  // namespace

#define HETERO_PORTABLE_TILE(name, Block, elems)                                                      \
    void matmul_##name##_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1) { \
        matmul_dequant<sdk::Block, elems, &sdk::dequantize_block_##name>(a, m0, m1, n0, n1);          \
    }
HETERO_PORTABLE_TILE(q4_k, BlockQ4K, sdk::kKBlock)
HETERO_PORTABLE_TILE(q5_k, BlockQ5K, sdk::kKBlock)
HETERO_PORTABLE_TILE(q6_k, BlockQ6K, sdk::kKBlock)
HETERO_PORTABLE_TILE(q2_k, BlockQ2K, sdk::kKBlock)
HETERO_PORTABLE_TILE(q3_k, BlockQ3K, sdk::kKBlock)
HETERO_PORTABLE_TILE(q4_1, BlockQ4_1, sdk::kQBlock)
HETERO_PORTABLE_TILE(q5_0, BlockQ5_0, sdk::kQBlock)
HETERO_PORTABLE_TILE(q5_1, BlockQ5_1, sdk::kQBlock)
HETERO_PORTABLE_TILE(iq4_nl, BlockIQ4_NL, sdk::kQBlock)
HETERO_PORTABLE_TILE(e0m4, BlockE0M4, sdk::kQBlock)
#undef HETERO_PORTABLE_TILE

namespace {

constexpr Kernels make_table() {
    Kernels k{.name = "scalar",
              .quantize_act = &quantize_act,
              .dot_f32 = &dot_f32,
              .dot_f16 = &dot_f16,
              .axpy_f32 = &axpy_f32,
              .axpy_f16 = &axpy_f16,
              .f32_to_f16_row = &f32_to_f16_row,
              .f16_to_f32_row = &f16_to_f32_row};
    // Matmuls by weight dtype: int8 activations for Q8_0 and Q4_0, the
    // portable f32 tiles for the other block types; nothing packed.
    auto& mm = k.matmul;
    mm[HETERO_DTYPE_F32] = {.tile = &matmul_f32};
    mm[HETERO_DTYPE_F16] = {.tile = &matmul_f16};
    mm[HETERO_DTYPE_BF16] = {.tile = &matmul_bf16};
    mm[HETERO_DTYPE_Q8_0] = {.tile = &matmul_q8_0, .int8_act = true};
    mm[HETERO_DTYPE_Q4_0] = {.tile = &matmul_q4_0, .int8_act = true};
    mm[HETERO_DTYPE_Q4_K] = {.tile = &matmul_q4_k_portable};
    mm[HETERO_DTYPE_Q5_K] = {.tile = &matmul_q5_k_portable};
    mm[HETERO_DTYPE_Q6_K] = {.tile = &matmul_q6_k_portable};
    mm[HETERO_DTYPE_Q4_1] = {.tile = &matmul_q4_1_portable};
    mm[HETERO_DTYPE_Q5_0] = {.tile = &matmul_q5_0_portable};
    mm[HETERO_DTYPE_Q5_1] = {.tile = &matmul_q5_1_portable};
    mm[HETERO_DTYPE_IQ4_NL] = {.tile = &matmul_iq4_nl_portable};
    mm[HETERO_DTYPE_Q2_K] = {.tile = &matmul_q2_k_portable};
    mm[HETERO_DTYPE_Q3_K] = {.tile = &matmul_q3_k_portable};
    mm[HETERO_DTYPE_E0M4] = {.tile = &matmul_e0m4_portable};
    return k;
}

}  // namespace

const Kernels& kernels_scalar() {
    static constexpr Kernels k = make_table();  // constant-initialised: no code runs at load
    return k;
}

}  // namespace hetero::cpu
