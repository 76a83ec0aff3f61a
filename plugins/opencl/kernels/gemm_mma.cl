// Prefill GEMM over Q4_0/Q8_0 weights on NVIDIA tensor cores.
//
// Y[N,M] = X[N,K] W[M,K]^T (+ bias), like gemm.cl, but the multiply-adds are
// PTX mma.sync m16n8k16 instructions (f16 inputs, f32 accumulation) issued
// through inline assembly, which NVIDIA's OpenCL compiler accepts on devices
// of compute capability 8.0 and later (the host defines NV_PTX there). Each
// K step of 32 (one quantization block) stages the tile into local memory as
// f16: x rounded to f16, weights dequantized to f16 (d * q, so f16 range is
// never exceeded). Both are rounded once, within the matmul error bound of
// the conformance suite (2^-10 of sum |x w|).
//
// Elsewhere NV_PTX is undefined and each mma becomes the same arithmetic on
// the local tiles in plain OpenCL C: too slow to use, but it runs this
// kernel's staging and output mapping on any device, so the CI machine tests
// them (HETERO_CL_MMA=emulate).
//
// The host compiles this file's kernels (MMA_KERNELS) only where they run:
// with NV_PTX, or in emulation.
#ifdef MMA_KERNELS

// A work-group of MMA_WARPS_N x MMA_WARPS_M warps (set by the host) computes
// a tile of 32 MMA_WARPS_N activation rows x 32 MMA_WARPS_M weight rows; each
// warp owns 32 x 32 of it: 2 x 4 mma tiles of 16 x 8.
#ifndef MMA_WARPS_N
#define MMA_WARPS_N 2
#endif
#ifndef MMA_WARPS_M
#define MMA_WARPS_M 2
#endif
#define MMA_WG (32 * MMA_WARPS_N * MMA_WARPS_M)
#define MMA_BN (32 * MMA_WARPS_N)
#define MMA_BM (32 * MMA_WARPS_M)
// Local rows hold 32 halves plus 8 of padding: 20 words, so the 32 lanes'
// fragment loads (rows g*20 + t, g < 8, t < 4) hit 32 different banks.
#define MMA_ROW_WORDS 20

// Registers of one K step per work-item: MMA_XR float4 of x; MMA_PR quarter
// block rows of weights (scale + 4 or 8 quant bytes).
#define MMA_XR (MMA_BN * 8 / MMA_WG)
#define MMA_PR (MMA_BM * 4 / MMA_WG)

inline void mma_fetch_x(global const float* x, int N, int K, int n0, int k0, bool aligned, float4* r) {
    for (int i = 0; i < MMA_XR; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        const int n = n0 + t / 8, k = k0 + 4 * (t % 8);
        r[i] = (float4)(0.f);
        if (n < N) {
            global const float* p = x + (ulong)n * K + k;
            r[i] = aligned ? *(global const float4*)p : vload4(0, p);
        }
    }
}

inline void mma_put_x(const float4* r, local uint* As) {
    for (int i = 0; i < MMA_XR; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        vstore_half4(r[i], 0, (local half*)(As + (t / 8) * MMA_ROW_WORDS + 2 * (t % 8)));
    }
}

// Quarter block rows of weights, as in gemm.cl.
#define mma_fetch_w_q4_0(w, M, K, m0, k0, r) fetch_quarters_q4_0(w, M, K, m0, k0, MMA_BM * 4, MMA_WG, MMA_PR, r)
#define mma_fetch_w_q8_0(w, M, K, m0, k0, r) fetch_quarters_q8_0(w, M, K, m0, k0, MMA_BM * 4, MMA_WG, MMA_PR, r)
#define mma_fetch_w_planar_q4_0(w, M, K, m0, k0, r) fetch_quarters_planar_q4_0(w, M, K, m0, k0, MMA_BM * 4, MMA_WG, MMA_PR, r)
#define mma_fetch_w_planar_q8_0(w, M, K, m0, k0, r) fetch_quarters_planar_q8_0(w, M, K, m0, k0, MMA_BM * 4, MMA_WG, MMA_PR, r)

// Part p: bytes 4p..4p+3 are elements 4p..4p+3 (low nibbles) and
// 4p+16..4p+19 (high nibbles).
inline void mma_put_w_q4_0(const uint* r, local uint* Bs) {
    for (int i = 0; i < MMA_PR; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        const int row = t / 4, p = t % 4;
        const float d = half_reg_to_float(r[2 * i]);
        const uchar4 q = as_uchar4(r[2 * i + 1]);
        local half* dst = (local half*)(Bs + row * MMA_ROW_WORDS) + 4 * p;
        vstore_half4((convert_float4(q & (uchar)0x0f) - 8.f) * d, 0, dst);
        vstore_half4((convert_float4(q >> (uchar)4) - 8.f) * d, 0, dst + 16);
    }
}

// Part p: bytes (elements) 8p..8p+7.
inline void mma_put_w_q8_0(const uint* r, local uint* Bs) {
    for (int i = 0; i < MMA_PR; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        const int row = t / 4, p = t % 4;
        const float d = half_reg_to_float(r[3 * i]);
        const float8 v = convert_float8(as_char8((uint2)(r[3 * i + 1], r[3 * i + 2]))) * d;
        local half* dst = (local half*)(Bs + row * MMA_ROW_WORDS) + 8 * p;
        vstore_half4(v.lo, 0, dst);
        vstore_half4(v.hi, 0, dst + 4);
    }
}

// c (16 x 8, f32) += a (16 x 16 at row a_row, f16) * b (8 x 16 at row b_row,
// f16)^T over halves k0..k0+15 of local rows a_words and b_words 32-bit
// words apart. Fragment layout of mma.m16n8k16 (PTX ISA): lane = 4 g + t;
// a0..a3 hold (row g, k 2t..2t+1), (g+8, 2t), (g, 2t+8), (g+8, 2t+8); b0, b1
// hold (col g, k 2t), (g, 2t+8); c0..c3 are (g, 2t), (g, 2t+1), (g+8, 2t),
// (g+8, 2t+1). Also used by attention_mma (attention.cl).
inline void mma_16x8x16(float* c, local const uint* As, int a_words, int a_row, local const uint* Bs, int b_words, int b_row,
                        int k0) {
    const int lane = get_local_id(0) % 32, g = lane / 4, t = lane % 4;
#ifdef NV_PTX
    local const uint* a = As + (a_row + g) * a_words + k0 / 2 + t;
    local const uint* b = Bs + (b_row + g) * b_words + k0 / 2 + t;
    const uint a0 = a[0], a1 = a[8 * a_words], a2 = a[4], a3 = a[8 * a_words + 4];
    const uint b0 = b[0], b1 = b[4];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    for (int e = 0; e < 4; ++e) {
        local const half* a = (local const half*)(As + (a_row + g + (e / 2) * 8) * a_words) + k0;
        local const half* b = (local const half*)(Bs + (b_row + 2 * t + e % 2) * b_words) + k0;
        float s = c[e];
        for (int k = 0; k < 16; ++k) s = fma(vload_half(k, a), vload_half(k, b), s);
        c[e] = s;
    }
#endif
}

// Arguments (GEMM_ARGS) as gemm.cl's kernels.
#define GEMM_MMA_KERNEL(NAME, FETCH_W, PUT_W, WREGS)                                                           \
    __attribute__((reqd_work_group_size(MMA_WG, 1, 1))) kernel void NAME(GEMM_ARGS) {                          \
        local uint As[MMA_BN * MMA_ROW_WORDS];                                                                 \
        local uint Bs[MMA_BM * MMA_ROW_WORDS];                                                                 \
        int tile = get_group_id(0);                                                                            \
        const int tiles0 = (M0 + MMA_BM - 1) / MMA_BM, tiles1 = (M1 + MMA_BM - 1) / MMA_BM;                    \
        SELECT_MATRIX(tile, tiles0, tiles1)                                                                    \
        const int m0 = tile * MMA_BM, n0 = get_group_id(1) * MMA_BN;                                           \
        global const float* x = CPTR(float, xb, xoff);                                                         \
        const bool aligned = (xoff & 15) == 0; /* buffers are aligned; K % 32 == 0 */                               \
        const int warp = get_local_id(0) / 32, wn = (warp / MMA_WARPS_M) * 32, wm = (warp % MMA_WARPS_M) * 32; \
        float c[2][4][4];                                                                                      \
        for (int i = 0; i < 2; ++i)                                                                            \
            for (int j = 0; j < 4; ++j)                                                                        \
                for (int e = 0; e < 4; ++e) c[i][j][e] = 0.f;                                                  \
        float4 xr[MMA_XR];                                                                                     \
        uint wr[WREGS];                                                                                        \
        mma_fetch_x(x, N, K, n0, 0, aligned, xr);                                                              \
        FETCH_W(w, M, K, m0, 0, wr);                                                                           \
        for (int k0 = 0; k0 < K; k0 += QK) {                                                                   \
            mma_put_x(xr, As);                                                                                 \
            PUT_W(wr, Bs);                                                                                     \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                      \
            if (k0 + QK < K) { /* the next step's loads overlap this step's mma */                             \
                mma_fetch_x(x, N, K, n0, k0 + QK, aligned, xr);                                                \
                FETCH_W(w, M, K, m0, k0 + QK, wr);                                                             \
            }                                                                                                  \
            for (int s = 0; s < QK; s += 16)                                                                   \
                for (int i = 0; i < 2; ++i)                                                                    \
                    for (int j = 0; j < 4; ++j) mma_16x8x16(c[i][j], As, MMA_ROW_WORDS, wn + 16 * i, Bs, MMA_ROW_WORDS, wm + 8 * j, s); \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                      \
        }                                                                                                      \
        global const float* bias = CPTR(float, bb, boff);                                                      \
        const int bias_mode = first ? has_bias : 0;                                                            \
        const int lane = get_local_id(0) % 32;                                                                 \
        for (int i = 0; i < 2; ++i)                                                                            \
            for (int j = 0; j < 4; ++j)                                                                        \
                for (int e = 0; e < 4; ++e) {                                                                  \
                    const int n = n0 + wn + 16 * i + lane / 4 + (e / 2) * 8;                                   \
                    const int m = m0 + wm + 8 * j + 2 * (lane % 4) + e % 2;                                    \
                    if (n < N && m < M)                                                                        \
                        y[(ulong)n * M + m] = c[i][j][e] + (bias_mode == 1   ? bias[m]                         \
                                                            : bias_mode == 2 ? bias[(ulong)n * M + m]          \
                                                                             : 0.f);                           \
                }                                                                                              \
    }

GEMM_MMA_KERNEL(gemm_mma_q4_0, mma_fetch_w_q4_0, mma_put_w_q4_0, 2 * MMA_PR)
GEMM_MMA_KERNEL(gemm_mma_q8_0, mma_fetch_w_q8_0, mma_put_w_q8_0, 3 * MMA_PR)
GEMM_MMA_KERNEL(gemm_mma_planar_q4_0, mma_fetch_w_planar_q4_0, mma_put_w_q4_0, 2 * MMA_PR)
GEMM_MMA_KERNEL(gemm_mma_planar_q8_0, mma_fetch_w_planar_q8_0, mma_put_w_q8_0, 3 * MMA_PR)

#endif  // MMA_KERNELS
