// Y[N,M] = X[N,K] W[M,K]^T (+ bias) for several activation rows (prefill).
//
// Register-tiled GEMM: a work-group of GEMM_LX x GEMM_LY work-items computes a
// (GEMM_LY*GEMM_TN) x (GEMM_LX*GEMM_TM) output tile, each work-item a
// GEMM_TN x GEMM_TM micro-tile held in registers. K advances 32 at a time, one
// quantization block, so a weight tile is dequantized on the fly into local
// memory straight from the GGUF blocks. The host picks the macros per device
// (defaults: 16x8 work-items, 4x8 micro-tiles, 64x64 tiles). GEMM_TM and
// GEMM_TN must be multiples of 4.
#ifndef GEMM_LX
#define GEMM_LX 16
#endif
#ifndef GEMM_LY
#define GEMM_LY 8
#endif
#ifndef GEMM_TM
#define GEMM_TM 4
#endif
#ifndef GEMM_TN
#define GEMM_TN 8
#endif
#define GEMM_WG (GEMM_LX * GEMM_LY)
#define GEMM_BM (GEMM_LX * GEMM_TM)
#define GEMM_BN (GEMM_LY * GEMM_TN)
#define GEMM_BK 32
// Row strides of the local tiles; +4 keeps float4 alignment and spreads banks.
#define GEMM_SA (GEMM_BN + 4)
#define GEMM_SB (GEMM_BM + 4)

inline void gemm_load_x(global const float* x, int N, int K, int n0, int k0, local float* As) {
    for (int t = get_local_id(0); t < GEMM_BN * GEMM_BK; t += GEMM_WG) {
        const int r = t / GEMM_BK, c = t % GEMM_BK;
        const int n = n0 + r, k = k0 + c;
        As[c * GEMM_SA + r] = (n < N && k < K) ? x[(ulong)n * K + k] : 0.f;
    }
}

inline void gemm_load_w_f32(global const uchar* w, int M, int K, int m0, int k0, local float* Bs) {
    for (int t = get_local_id(0); t < GEMM_BM * GEMM_BK; t += GEMM_WG) {
        const int r = t / GEMM_BK, c = t % GEMM_BK;
        const int m = m0 + r, k = k0 + c;
        Bs[c * GEMM_SB + r] = (m < M && k < K) ? ((global const float*)w)[(ulong)m * K + k] : 0.f;
    }
}

inline void gemm_load_w_f16(global const uchar* w, int M, int K, int m0, int k0, local float* Bs) {
    for (int t = get_local_id(0); t < GEMM_BM * GEMM_BK; t += GEMM_WG) {
        const int r = t / GEMM_BK, c = t % GEMM_BK;
        const int m = m0 + r, k = k0 + c;
        Bs[c * GEMM_SB + r] = (m < M && k < K) ? vload_half((ulong)m * K + k, (global const half*)w) : 0.f;
    }
}

inline void gemm_load_w_bf16(global const uchar* w, int M, int K, int m0, int k0, local float* Bs) {
    for (int t = get_local_id(0); t < GEMM_BM * GEMM_BK; t += GEMM_WG) {
        const int r = t / GEMM_BK, c = t % GEMM_BK;
        const int m = m0 + r, k = k0 + c;
        Bs[c * GEMM_SB + r] =
            (m < M && k < K) ? bf16_bits_to_float(((global const ushort*)w)[(ulong)m * K + k]) : 0.f;
    }
}

// Four work-items per block row: part p expands bytes 4p..4p+3 into elements
// 4p..4p+3 (low nibbles) and 4p+16..4p+19 (high nibbles).
inline void gemm_load_w_q4_0(global const uchar* w, int M, int K, int m0, int k0, local float* Bs) {
    const ulong row_bytes = (ulong)(K / QK) * Q4_BYTES;
    for (int t = get_local_id(0); t < GEMM_BM * 4; t += GEMM_WG) {
        const int r = t / 4, p = t % 4;
        const int m = m0 + r;
        if (m < M) {
            global const ushort* blk = (global const ushort*)(w + (ulong)m * row_bytes + (ulong)(k0 / QK) * Q4_BYTES);
            const float d = vload_half(0, (global const half*)blk);
            const uchar4 q = as_uchar4(vload2(0, blk + 1 + 2 * p));
            const float4 lo = (convert_float4(q & (uchar)0x0f) - 8.f) * d;
            const float4 hi = (convert_float4(q >> (uchar)4) - 8.f) * d;
            local float* dst = Bs + 4 * p * GEMM_SB + r;
            dst[0 * GEMM_SB] = lo.x; dst[1 * GEMM_SB] = lo.y; dst[2 * GEMM_SB] = lo.z; dst[3 * GEMM_SB] = lo.w;
            dst += 16 * GEMM_SB;
            dst[0 * GEMM_SB] = hi.x; dst[1 * GEMM_SB] = hi.y; dst[2 * GEMM_SB] = hi.z; dst[3 * GEMM_SB] = hi.w;
        } else {
            for (int j = 0; j < 4; ++j) {
                Bs[(4 * p + j) * GEMM_SB + r] = 0.f;
                Bs[(4 * p + j + 16) * GEMM_SB + r] = 0.f;
            }
        }
    }
}

// Four work-items per block row: part p expands bytes 8p..8p+7.
inline void gemm_load_w_q8_0(global const uchar* w, int M, int K, int m0, int k0, local float* Bs) {
    const ulong row_bytes = (ulong)(K / QK) * Q8_BYTES;
    for (int t = get_local_id(0); t < GEMM_BM * 4; t += GEMM_WG) {
        const int r = t / 4, p = t % 4;
        const int m = m0 + r;
        local float* dst = Bs + 8 * p * GEMM_SB + r;
        if (m < M) {
            global const ushort* blk = (global const ushort*)(w + (ulong)m * row_bytes + (ulong)(k0 / QK) * Q8_BYTES);
            const float d = vload_half(0, (global const half*)blk);
            const float8 v = convert_float8(as_char8(vload4(0, blk + 1 + 4 * p))) * d;
            dst[0 * GEMM_SB] = v.s0; dst[1 * GEMM_SB] = v.s1; dst[2 * GEMM_SB] = v.s2; dst[3 * GEMM_SB] = v.s3;
            dst[4 * GEMM_SB] = v.s4; dst[5 * GEMM_SB] = v.s5; dst[6 * GEMM_SB] = v.s6; dst[7 * GEMM_SB] = v.s7;
        } else {
            for (int j = 0; j < 8; ++j) dst[j * GEMM_SB] = 0.f;
        }
    }
}

// Like the matvec kernels, a GEMM launch takes up to three matrices over the
// same x; work-group column tiles are numbered across them. has_bias: 1 adds
// bias[m], 2 adds a residual bias[n * M + m] (a fused ADD), to matrix 0.
#define GEMM_KERNEL(NAME, LOAD_W)                                                                              \
    __attribute__((reqd_work_group_size(GEMM_WG, 1, 1))) kernel void NAME(                                     \
        global const uchar* xb, ulong xoff, global const uchar* w0b, ulong w0off, global uchar* y0b, ulong y0off, \
        int M0, global const uchar* w1b, ulong w1off, global uchar* y1b, ulong y1off, int M1,                 \
        global const uchar* w2b, ulong w2off, global uchar* y2b, ulong y2off, int M2, global const uchar* bb,  \
        ulong boff, int has_bias, int N, int K) {                                                              \
        /* float4 storage: micro-tile reads below are aligned 128-bit loads. */                               \
        local float4 As4[GEMM_BK * GEMM_SA / 4];                                                               \
        local float4 Bs4[GEMM_BK * GEMM_SB / 4];                                                               \
        local float* As = (local float*)As4;                                                                   \
        local float* Bs = (local float*)Bs4;                                                                   \
        const int tx = get_local_id(0) % GEMM_LX, ty = get_local_id(0) / GEMM_LX;                              \
        int tile = get_group_id(0);                                                                            \
        const int tiles0 = (M0 + GEMM_BM - 1) / GEMM_BM, tiles1 = (M1 + GEMM_BM - 1) / GEMM_BM;                \
        SELECT_MATRIX(tile, tiles0, tiles1)                                                                    \
        const int m0 = tile * GEMM_BM, n0 = get_group_id(1) * GEMM_BN;                                         \
        global const float* x = CPTR(float, xb, xoff);                                                         \
        float acc[GEMM_TN][GEMM_TM];                                                                           \
        for (int i = 0; i < GEMM_TN; ++i)                                                                      \
            for (int j = 0; j < GEMM_TM; ++j) acc[i][j] = 0.f;                                                 \
        for (int k0 = 0; k0 < K; k0 += GEMM_BK) {                                                              \
            gemm_load_x(x, N, K, n0, k0, As);                                                                  \
            LOAD_W(w, M, K, m0, k0, Bs);                                                                       \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                      \
            for (int k = 0; k < GEMM_BK; ++k) {                                                                \
                float a[GEMM_TN], b[GEMM_TM];                                                                  \
                local const float4* ap = As4 + (k * GEMM_SA + ty * GEMM_TN) / 4;                               \
                local const float4* bp = Bs4 + (k * GEMM_SB + tx * GEMM_TM) / 4;                               \
                for (int i = 0; i < GEMM_TN / 4; ++i) vstore4(ap[i], i, a);                                    \
                for (int j = 0; j < GEMM_TM / 4; ++j) vstore4(bp[j], j, b);                                    \
                for (int i = 0; i < GEMM_TN; ++i)                                                              \
                    for (int j = 0; j < GEMM_TM; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);                  \
            }                                                                                                  \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                      \
        }                                                                                                      \
        global const float* bias = CPTR(float, bb, boff);                                                      \
        const int bias_mode = first ? has_bias : 0;                                                            \
        for (int i = 0; i < GEMM_TN; ++i) {                                                                    \
            const int n = n0 + ty * GEMM_TN + i;                                                               \
            if (n >= N) break;                                                                                 \
            for (int j = 0; j < GEMM_TM; ++j) {                                                                \
                const int m = m0 + tx * GEMM_TM + j;                                                           \
                if (m < M)                                                                                     \
                    y[(ulong)n * M + m] = acc[i][j] + (bias_mode == 1   ? bias[m]                              \
                                                       : bias_mode == 2 ? bias[(ulong)n * M + m]               \
                                                                        : 0.f);                                \
            }                                                                                                  \
        }                                                                                                      \
    }

GEMM_KERNEL(gemm_f32, gemm_load_w_f32)
GEMM_KERNEL(gemm_f16, gemm_load_w_f16)
GEMM_KERNEL(gemm_bf16, gemm_load_w_bf16)
GEMM_KERNEL(gemm_q8_0, gemm_load_w_q8_0)
GEMM_KERNEL(gemm_q4_0, gemm_load_w_q4_0)
