// Y[N,M] = X[N,K] W[M,K]^T (+ bias) for several activation rows (prefill).
//
// Register-tiled GEMM: a work-group of GEMM_LX x GEMM_LY work-items computes a
// (GEMM_LY*GEMM_TN) x (GEMM_LX*GEMM_TM) output tile, each work-item a
// GEMM_TN x GEMM_TM micro-tile held in registers. K advances 32 at a time, one
// quantization block, so a weight tile is dequantized on the fly into local
// memory straight from the GGUF blocks. The host picks the macros per device
// (defaults: 16x8 work-items, 4x8 micro-tiles, 64x64 tiles). GEMM_TM and
// GEMM_TN must be multiples of 4.
//
// A K step's x and weights are first all fetched into registers, raw, and
// only then converted into local memory, so every load of the step is in
// flight at once (H100, TinyLlama 1.1B prefill: 10,740-10,941 tok/s against
// 10,044-10,097 loading and storing element by element). Fetching the next
// step during the current one's multiply-adds was no faster overall: it
// helped the 2048-row GEMMs and slowed the wide gate/up one.
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
// Registers per work-item holding one K step: x values, weight elements
// (f32/f16/bf16) and quarter block rows (Q8_0/Q4_0).
#define GEMM_CEIL(a) (((a) + GEMM_WG - 1) / GEMM_WG)
#define GEMM_XR GEMM_CEIL(GEMM_BN * GEMM_BK)
#define GEMM_ER GEMM_CEIL(GEMM_BM * GEMM_BK)
#define GEMM_PR GEMM_CEIL(GEMM_BM * 4)

// x element t of a step: row t / 32, column t % 32 (coalesced along K).
inline void gemm_fetch_x(global const float* x, int N, int K, int n0, int k0, float* r) {
    for (int i = 0; i < GEMM_XR; ++i) {
        const int t = get_local_id(0) + i * GEMM_WG;
        const int n = n0 + t / GEMM_BK, k = k0 + t % GEMM_BK;
        r[i] = (t < GEMM_BN * GEMM_BK && n < N && k < K) ? x[(ulong)n * K + k] : 0.f;
    }
}

inline void gemm_put_x(const float* r, local float* As) {
    for (int i = 0; i < GEMM_XR; ++i) {
        const int t = get_local_id(0) + i * GEMM_WG;
        if (t < GEMM_BN * GEMM_BK) As[(t % GEMM_BK) * GEMM_SA + t / GEMM_BK] = r[i];
    }
}

// Element weights: the raw bits of element t (row t / 32, column t % 32).
#define GEMM_ELEM_FETCH(NAME, T)                                                                   \
    inline void NAME(global const uchar* w, int M, int K, int m0, int k0, uint* r) {              \
        for (int i = 0; i < GEMM_ER; ++i) {                                                         \
            const int t = get_local_id(0) + i * GEMM_WG;                                            \
            const int m = m0 + t / GEMM_BK, k = k0 + t % GEMM_BK;                                   \
            r[i] = (t < GEMM_BM * GEMM_BK && m < M && k < K) ? ((global const T*)w)[(ulong)m * K + k] : 0u; \
        }                                                                                           \
    }
GEMM_ELEM_FETCH(gemm_fetch_w_f32, uint)
GEMM_ELEM_FETCH(gemm_fetch_w_f16, ushort)
GEMM_ELEM_FETCH(gemm_fetch_w_bf16, ushort)

#define GEMM_ELEM_PUT(NAME, CONVERT)                                                              \
    inline void NAME(const uint* r, local float* Bs) {                                             \
        for (int i = 0; i < GEMM_ER; ++i) {                                                         \
            const int t = get_local_id(0) + i * GEMM_WG;                                            \
            if (t < GEMM_BM * GEMM_BK) Bs[(t % GEMM_BK) * GEMM_SB + t / GEMM_BK] = CONVERT(r[i]);  \
        }                                                                                           \
    }
GEMM_ELEM_PUT(gemm_put_w_f32, as_float)
GEMM_ELEM_PUT(gemm_put_w_f16, half_reg_to_float)
GEMM_ELEM_PUT(gemm_put_w_bf16, bf16_bits_to_float)

// Quantized weights: part t is quarter t % 4 of row t / 4's block, fetched
// as its f16 scale plus 4 (Q4_0) or 8 (Q8_0) quant bytes. A work-item of a
// `group` fetches parts t = id + i * group, i < count, t < parts; rows past
// M read as zero (scale 0). Shared with gemm_mma.cl.
inline void fetch_quarters_q4_0(global const uchar* w, int M, int K, int m0, int k0, int parts, int group, int count, uint* r) {
    const ulong row_bytes = (ulong)(K / QK) * Q4_BYTES;
    for (int i = 0; i < count; ++i) {
        const int t = get_local_id(0) + i * group;
        const int m = m0 + t / 4, p = t % 4;
        r[2 * i] = r[2 * i + 1] = 0u;
        if (t < parts && m < M) {
            global const ushort* blk = (global const ushort*)(w + (ulong)m * row_bytes + (ulong)(k0 / QK) * Q4_BYTES);
            r[2 * i] = blk[0];
            r[2 * i + 1] = as_uint(vload2(0, blk + 1 + 2 * p));
        }
    }
}

inline void fetch_quarters_q8_0(global const uchar* w, int M, int K, int m0, int k0, int parts, int group, int count, uint* r) {
    const ulong row_bytes = (ulong)(K / QK) * Q8_BYTES;
    for (int i = 0; i < count; ++i) {
        const int t = get_local_id(0) + i * group;
        const int m = m0 + t / 4, p = t % 4;
        r[3 * i] = r[3 * i + 1] = r[3 * i + 2] = 0u;
        if (t < parts && m < M) {
            global const ushort* blk = (global const ushort*)(w + (ulong)m * row_bytes + (ulong)(k0 / QK) * Q8_BYTES);
            const uint2 q = as_uint2(vload4(0, blk + 1 + 4 * p));
            r[3 * i] = blk[0];
            r[3 * i + 1] = q.x;
            r[3 * i + 2] = q.y;
        }
    }
}

// The same parts of weights in the planar layout (matvec_planar.cl): block
// (m, kb) of an M-row matrix has its quants at block m * nb + kb of the
// quants plane and its scale in the plane after it. Same registers as above.
inline void fetch_quarters_planar_q4_0(global const uchar* w, int M, int K, int m0, int k0, int parts, int group, int count,
                                       uint* r) {
    const ulong nb = K / QK;
    global const ushort* scales = (global const ushort*)(w + (ulong)M * nb * Q4_PLANE_BYTES);
    for (int i = 0; i < count; ++i) {
        const int t = get_local_id(0) + i * group;
        const int m = m0 + t / 4, p = t % 4;
        r[2 * i] = r[2 * i + 1] = 0u;
        if (t < parts && m < M) {
            const ulong b = (ulong)m * nb + k0 / QK;
            r[2 * i] = scales[b];
            r[2 * i + 1] = ((global const uint*)(w + b * Q4_PLANE_BYTES))[p];
        }
    }
}

inline void fetch_quarters_planar_q8_0(global const uchar* w, int M, int K, int m0, int k0, int parts, int group, int count,
                                       uint* r) {
    const ulong nb = K / QK;
    global const ushort* scales = (global const ushort*)(w + (ulong)M * nb * Q8_PLANE_BYTES);
    for (int i = 0; i < count; ++i) {
        const int t = get_local_id(0) + i * group;
        const int m = m0 + t / 4, p = t % 4;
        r[3 * i] = r[3 * i + 1] = r[3 * i + 2] = 0u;
        if (t < parts && m < M) {
            const ulong b = (ulong)m * nb + k0 / QK;
            const uint2 q = ((global const uint2*)(w + b * Q8_PLANE_BYTES))[p];
            r[3 * i] = scales[b];
            r[3 * i + 1] = q.x;
            r[3 * i + 2] = q.y;
        }
    }
}

#define gemm_fetch_w_q4_0(w, M, K, m0, k0, r) fetch_quarters_q4_0(w, M, K, m0, k0, GEMM_BM * 4, GEMM_WG, GEMM_PR, r)
#define gemm_fetch_w_planar_q4_0(w, M, K, m0, k0, r) fetch_quarters_planar_q4_0(w, M, K, m0, k0, GEMM_BM * 4, GEMM_WG, GEMM_PR, r)
#define gemm_fetch_w_planar_q8_0(w, M, K, m0, k0, r) fetch_quarters_planar_q8_0(w, M, K, m0, k0, GEMM_BM * 4, GEMM_WG, GEMM_PR, r)
#define gemm_fetch_w_q8_0(w, M, K, m0, k0, r) fetch_quarters_q8_0(w, M, K, m0, k0, GEMM_BM * 4, GEMM_WG, GEMM_PR, r)

// Part p holds bytes 4p..4p+3: elements 4p..4p+3 (low nibbles) and
// 4p+16..4p+19 (high nibbles).
inline void gemm_put_w_q4_0(const uint* r, local float* Bs) {
    for (int i = 0; i < GEMM_PR; ++i) {
        const int t = get_local_id(0) + i * GEMM_WG;
        if (t >= GEMM_BM * 4) break;
        const int row = t / 4, p = t % 4;
        const float d = half_reg_to_float(r[2 * i]);
        const uchar4 q = as_uchar4(r[2 * i + 1]);
        const float4 lo = (convert_float4(q & (uchar)0x0f) - 8.f) * d;
        const float4 hi = (convert_float4(q >> (uchar)4) - 8.f) * d;
        local float* dst = Bs + 4 * p * GEMM_SB + row;
        dst[0 * GEMM_SB] = lo.x; dst[1 * GEMM_SB] = lo.y; dst[2 * GEMM_SB] = lo.z; dst[3 * GEMM_SB] = lo.w;
        dst += 16 * GEMM_SB;
        dst[0 * GEMM_SB] = hi.x; dst[1 * GEMM_SB] = hi.y; dst[2 * GEMM_SB] = hi.z; dst[3 * GEMM_SB] = hi.w;
    }
}

// Part p holds bytes (elements) 8p..8p+7.
inline void gemm_put_w_q8_0(const uint* r, local float* Bs) {
    for (int i = 0; i < GEMM_PR; ++i) {
        const int t = get_local_id(0) + i * GEMM_WG;
        if (t >= GEMM_BM * 4) break;
        const int row = t / 4, p = t % 4;
        const float d = half_reg_to_float(r[3 * i]);
        const float8 v = convert_float8(as_char8((uint2)(r[3 * i + 1], r[3 * i + 2]))) * d;
        local float* dst = Bs + 8 * p * GEMM_SB + row;
        dst[0 * GEMM_SB] = v.s0; dst[1 * GEMM_SB] = v.s1; dst[2 * GEMM_SB] = v.s2; dst[3 * GEMM_SB] = v.s3;
        dst[4 * GEMM_SB] = v.s4; dst[5 * GEMM_SB] = v.s5; dst[6 * GEMM_SB] = v.s6; dst[7 * GEMM_SB] = v.s7;
    }
}

// Like the matvec kernels, a GEMM launch takes up to three matrices over the
// same x; work-group column tiles are numbered across them. has_bias: 1 adds
// bias[m], 2 adds a residual bias[n * M + m] (a fused ADD), to matrix 0.
// WREGS: the registers one K step of weights takes per work-item.
#define GEMM_ARGS                                                                                          \
    global const uchar *xb, ulong xoff, global const uchar *w0b, ulong w0off, global uchar *y0b, ulong y0off, \
        int M0, global const uchar *w1b, ulong w1off, global uchar *y1b, ulong y1off, int M1,             \
        global const uchar *w2b, ulong w2off, global uchar *y2b, ulong y2off, int M2, global const uchar *bb, \
        ulong boff, int has_bias, int N, int K
#define GEMM_KERNEL(NAME, FETCH_W, PUT_W, WREGS)                                                               \
    __attribute__((reqd_work_group_size(GEMM_WG, 1, 1))) kernel void NAME(GEMM_ARGS) {                         \
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
        float xr[GEMM_XR];                                                                                     \
        uint wr[WREGS];                                                                                        \
        for (int k0 = 0; k0 < K; k0 += GEMM_BK) {                                                              \
            gemm_fetch_x(x, N, K, n0, k0, xr);                                                                 \
            FETCH_W(w, M, K, m0, k0, wr);                                                                      \
            gemm_put_x(xr, As);                                                                                \
            PUT_W(wr, Bs);                                                                                     \
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

GEMM_KERNEL(gemm_f32, gemm_fetch_w_f32, gemm_put_w_f32, GEMM_ER)
GEMM_KERNEL(gemm_f16, gemm_fetch_w_f16, gemm_put_w_f16, GEMM_ER)
GEMM_KERNEL(gemm_bf16, gemm_fetch_w_bf16, gemm_put_w_bf16, GEMM_ER)
GEMM_KERNEL(gemm_q8_0, gemm_fetch_w_q8_0, gemm_put_w_q8_0, 3 * GEMM_PR)
GEMM_KERNEL(gemm_q4_0, gemm_fetch_w_q4_0, gemm_put_w_q4_0, 2 * GEMM_PR)
GEMM_KERNEL(gemm_planar_q8_0, gemm_fetch_w_planar_q8_0, gemm_put_w_q8_0, 3 * GEMM_PR)
GEMM_KERNEL(gemm_planar_q4_0, gemm_fetch_w_planar_q4_0, gemm_put_w_q4_0, 2 * GEMM_PR)
