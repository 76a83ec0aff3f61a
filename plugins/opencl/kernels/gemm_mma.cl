// Prefill GEMM over Q4_0/Q8_0 weights on NVIDIA tensor cores.
//
// Y[N,M] = X[N,K] W[M,K]^T (+ bias), like gemm.cl, but the multiply-adds are
// PTX mma.sync m16n8k16 instructions (f16 inputs, f32 accumulation) issued
// through inline assembly, which NVIDIA's OpenCL compiler accepts on devices
// of compute capability 8.0 and later (the host defines NV_PTX there). Each
// K step of 32 (one quantization block) stages the tile into local memory as
// f16: x rounded to f16 (once, by stage_x_f16), weights dequantized to f16
// (d * q, so f16 range is never exceeded). Both are rounded once, within the matmul error bound of
// the conformance suite (2^-10 of sum |x w|).
//
// Elsewhere NV_PTX is undefined and each mma becomes the same arithmetic on
// the local tiles in plain OpenCL C: too slow to use, but it runs this
// kernel's staging and output mapping on any device, so the CI machine tests
// them (HETERO_CL_MMA=emulate).
//
// The host compiles this file's kernels (MMA_KERNELS) only where they run:
// with NV_PTX, or in emulation. The cp.async copies and the mma fragments
// they share with the tensor-core attention are in mma_common.cl.
#ifdef MMA_KERNELS

// A work-group of MMA_WARPS_N x MMA_WARPS_M warps (set by the host) computes
// a tile of MMA_BN activation rows x MMA_BM weight rows; each warp owns
// MMA_FRAGS_N mma tiles of 16 activation rows by MMA_FRAGS_M tiles of 8
// weight rows. The more tiles a warp owns, the more mma instructions each
// fragment load feeds.
#ifndef MMA_WARPS_N
#define MMA_WARPS_N 4
#endif
#ifndef MMA_WARPS_M
#define MMA_WARPS_M 1
#endif
#ifndef MMA_FRAGS_N
#define MMA_FRAGS_N 2
#endif
#ifndef MMA_FRAGS_M
#define MMA_FRAGS_M 8
#endif
#define MMA_WG (32 * MMA_WARPS_N * MMA_WARPS_M)
#define MMA_BN (16 * MMA_FRAGS_N * MMA_WARPS_N)
#define MMA_BM (8 * MMA_FRAGS_M * MMA_WARPS_M)
// Local rows hold 32 halves plus 8 of padding: 20 words (80 bytes), so the
// 8 rows one fragment load reads 16 bytes of each fall in 8 different
// 16-byte bank groups (and single-word loads of rows g*20 + t, g < 8,
// t < 4, in 32 different banks).
#define MMA_ROW_WORDS 20

// Per work-item and K step: MMA_XR 16-byte pieces of x copied; MMA_PR
// quarter block rows of weights (scale + 4 or 8 quant bytes) in registers.
// The host picks tilings that divide evenly.
#define MMA_XR (MMA_BN * 4 / MMA_WG)
#define MMA_PR (MMA_BM * 4 / MMA_WG)

// x as f16, n4 groups of 4 values: rounded to nearest-even once per GEMM
// launch here, so each weight tile's work-group reads half the bytes and
// converts nothing.
kernel void stage_x_f16(global const uchar* xb, ulong xoff, global uchar* yb, ulong n4) {
    const ulong i = get_global_id(0);
    if (i < n4) vstore_half4(vload4(i, CPTR(float, xb, xoff)), i, (global half*)yb);
}

// x16: N x K halves, rows 64-byte aligned (K % 32 == 0). The K step's x
// tile (MMA_BN rows of 32 halves, four 16-byte pieces each) into local rows
// of MMA_ROW_WORDS; rows past N are zeros.
inline void mma_copy_x(global const uchar* x16, bool async, int N, int K, int n0, int k0, local uint* As) {
    for (int i = 0; i < MMA_XR; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        const int n = n0 + t / 4;
        const bool valid = n < N;
        copy16_async(As + (t / 4) * MMA_ROW_WORDS + 4 * (t % 4), x16 + (valid ? 2 * ((ulong)n * K + k0) + 16 * (t % 4) : 0), valid, async);
    }
}

// Quarter block rows of weights, as in gemm.cl.
#define mma_fetch_w_q4_0(w, M, K, m0, k0, r) fetch_quarters_q4_0(w, M, K, m0, k0, MMA_BM * 4, MMA_WG, MMA_PR, r)
#define mma_fetch_w_q8_0(w, M, K, m0, k0, r) fetch_quarters_q8_0(w, M, K, m0, k0, MMA_BM * 4, MMA_WG, MMA_PR, r)
#define mma_fetch_w_planar_q4_0(w, M, K, m0, k0, r) fetch_quarters_planar_q4_0(w, M, K, m0, k0, MMA_BM * 4, MMA_WG, MMA_PR, r)
#define mma_fetch_w_planar_q8_0(w, M, K, m0, k0, r) fetch_quarters_planar_q8_0(w, M, K, m0, k0, MMA_BM * 4, MMA_WG, MMA_PR, r)

#ifdef NV_PTX
// Bytes b0..b3 of v as exact f16 pairs (b0 - o, b1 - o), (b2 - o, b3 - o),
// `minus` holding 1024 + o in both halves: prmt makes the f16 bits 0x64bb
// (1024 + b) and f16x2 arithmetic subtracts 1024 + o exactly.
inline uint2 bytes_f16x2(uint v, uint minus) {
    uint lo, hi;
    asm("prmt.b32 %0, %1, 0x64, 0x4140;" : "=r"(lo) : "r"(v));
    asm("prmt.b32 %0, %1, 0x64, 0x4342;" : "=r"(hi) : "r"(v));
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(lo) : "r"(lo), "r"(minus));
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(hi) : "r"(hi), "r"(minus));
    return (uint2)(lo, hi);
}

// The same pairs times d (d2: d in both halves), rounding once as the float
// path below does. A handful of instructions for what took a conversion and
// a multiply a value.
inline uint2 dequant_bytes_f16(uint v, uint minus, uint d2) {
    uint2 r = bytes_f16x2(v, minus);
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r.x) : "r"(r.x), "r"(d2));
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r.y) : "r"(r.y), "r"(d2));
    return r;
}

// a * b + c on f16 pairs, rounding once.
inline uint fma_f16x2(uint a, uint b, uint c) {
    uint d;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
#endif

// Part p: bytes 4p..4p+3 are elements 4p..4p+3 (low nibbles) and
// 4p+16..4p+19 (high nibbles). (`step`, the K step, is for the K-quants.)
inline void mma_put_w_q4_0(const uint* r, local uint* Bs, int step) {
    for (int i = 0; i < MMA_PR; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        const int row = t / 4, p = t % 4;
        local uint* dst = Bs + row * MMA_ROW_WORDS + 2 * p;
#ifdef NV_PTX
        const uint d2 = (r[2 * i] & 0xffffu) * 0x10001u, q = r[2 * i + 1];
        *(local uint2*)dst = dequant_bytes_f16(q & 0x0f0f0f0fu, 0x64086408u, d2);        /* 1024 + 8 */
        *(local uint2*)(dst + 8) = dequant_bytes_f16((q >> 4) & 0x0f0f0f0fu, 0x64086408u, d2);
#else
        const float d = half_reg_to_float(r[2 * i]);
        const uchar4 q = as_uchar4(r[2 * i + 1]);
        vstore_half4((convert_float4(q & (uchar)0x0f) - 8.f) * d, 0, (local half*)dst);
        vstore_half4((convert_float4(q >> (uchar)4) - 8.f) * d, 0, (local half*)(dst + 8));
#endif
    }
}

// Part p: bytes (elements) 8p..8p+7.
inline void mma_put_w_q8_0(const uint* r, local uint* Bs, int step) {
    for (int i = 0; i < MMA_PR; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        const int row = t / 4, p = t % 4;
        local uint* dst = Bs + row * MMA_ROW_WORDS + 4 * p;
#ifdef NV_PTX
        /* signed bytes + 128 (xor of the sign bit), less 1024 + 128 */
        const uint d2 = (r[3 * i] & 0xffffu) * 0x10001u;
        const uint2 a = dequant_bytes_f16(r[3 * i + 1] ^ 0x80808080u, 0x64806480u, d2);
        const uint2 b = dequant_bytes_f16(r[3 * i + 2] ^ 0x80808080u, 0x64806480u, d2);
        *(local uint4*)dst = (uint4)(a, b);
#else
        const float d = half_reg_to_float(r[3 * i]);
        const float8 v = convert_float8(as_char8((uint2)(r[3 * i + 1], r[3 * i + 2]))) * d;
        vstore_half4(v.lo, 0, (local half*)dst);
        vstore_half4(v.hi, 0, (local half*)dst + 4);
#endif
    }
}

// The GEMM's fragments. With NV_PTX they are registers in mma.m16n8k16's
// layout (above), filled by ldmatrix: one instruction loads a whole 16 x 16
// activation fragment, or the fragments of two 8-row weight tiles, where
// single-word loads took four (MMA_WORD_LOADS, the host's
// HETERO_CL_LDMATRIX=0, reads the same words one by one instead). In
// emulation a fragment is the word offset of its first row and k in the
// local tile, and the mma reads local memory.
#ifdef NV_PTX
typedef uint4 mma_frag_a;
typedef uint2 mma_frag_b;

// The 16 x 16 fragment at word offset `at` (row, k).
inline mma_frag_a mma_load_a(local const uint* As, int at) {
#ifdef MMA_WORD_LOADS
    return mma_words_a(As + at, MMA_ROW_WORDS);
#else
    return ldmatrix_a(As + at, MMA_ROW_WORDS);
#endif
}

// Tiles of weight rows 0-7 and 8-15 at word offset `at`.
inline void mma_load_b2(local const uint* Bs, int at, mma_frag_b* b) {
#ifdef MMA_WORD_LOADS
    b[0] = mma_words_b(Bs + at, MMA_ROW_WORDS);
    b[1] = mma_words_b(Bs + at + 8 * MMA_ROW_WORDS, MMA_ROW_WORDS);
#else
    const uint4 r = ldmatrix_b2(Bs + at, MMA_ROW_WORDS);
    b[0] = r.xy;
    b[1] = r.zw;
#endif
}

inline void mma_frag(float* c, mma_frag_a a, mma_frag_b b, local const uint* As, local const uint* Bs) { mma_sync(c, a, b); }
#else
typedef int mma_frag_a;
typedef int mma_frag_b;

inline mma_frag_a mma_load_a(local const uint* As, int at) { return at; }

inline void mma_load_b2(local const uint* Bs, int at, mma_frag_b* b) {
    b[0] = at;
    b[1] = at + 8 * MMA_ROW_WORDS;
}

inline void mma_frag(float* c, mma_frag_a a, mma_frag_b b, local const uint* As, local const uint* Bs) {
    mma_emulate(c, As + a, MMA_ROW_WORDS, Bs + b, MMA_ROW_WORDS);
}
#endif

// One K step of a warp: its FRAGS_N x FRAGS_M mma tiles (c, row-major, 4
// floats each) over the 32 halves of the step's local tiles at and bt.
inline void mma_step(float* c, local const uint* at, local const uint* bt, int wn, int wm) {
    /* unrolled, so that c and the fragments stay registers */
    MMA_UNROLL
    for (int s = 0; s < QK / 2; s += 8) {
        mma_frag_a a[MMA_FRAGS_N];
        mma_frag_b b[MMA_FRAGS_M];
        MMA_UNROLL
        for (int i = 0; i < MMA_FRAGS_N; ++i) a[i] = mma_load_a(at, (wn + 16 * i) * MMA_ROW_WORDS + s);
        MMA_UNROLL
        for (int j = 0; j < MMA_FRAGS_M; j += 2) mma_load_b2(bt, (wm + 8 * j) * MMA_ROW_WORDS + s, b + j);
        MMA_UNROLL
        for (int i = 0; i < MMA_FRAGS_N; ++i)
            MMA_UNROLL
            for (int j = 0; j < MMA_FRAGS_M; ++j) mma_frag(c + 4 * (i * MMA_FRAGS_M + j), a[i], b[j], at, bt);
    }
}

// Arguments (GEMM_ARGS) as gemm.cl's kernels; x comes as f16 (stage_x_f16).
// x tiles are copied asynchronously into a ring of three local buffers,
// issued two K steps (quantization blocks) ahead. Weights are read two steps
// ahead into two register sets (0 for even steps, 1 for odd; the loop takes
// steps in pairs so that both sets stay registers), dequantized into one of
// two local buffers a step before their use. So one barrier a step keeps
// writers of the next steps from readers of this one: a step's mma
// instructions alone are too short to cover the latency of reads from L2.
//
// PAIRED (K-quants): the registers of an even step also hold the next
// step's weights, so odd steps load nothing: set 1 is a copy of set 0, taken
// once set 0's loads have landed. KSTEP(s) is the K step (of QK) that the
// loop's s-th step covers; any order of a row's steps gives the same sums,
// and the K-quants order them so that pairs share bytes. PUT_W gets it too.
//
// Work-groups run in order of their linear index; with MMA_N_FASTEST the
// activation tiles of one weight tile are adjacent in it (the weight tile is
// read from memory once, while it is in L2), else the weight tiles of one
// activation tile are.
#define MMA_X_WORDS (MMA_BN * MMA_ROW_WORDS)
#define MMA_W_WORDS (MMA_BM * MMA_ROW_WORDS)
#define MMA_COPY_X(step, KSTEP)                                                                  \
    {                                                                                            \
        if ((step) < steps) mma_copy_x(x16, async, N, K, n0, KSTEP(step) * QK, As + ((step) % 3) * MMA_X_WORDS); \
        copy_async_commit();                                                                     \
    }
#define MMA_STEP_IN_ORDER(s) (s)
#ifdef MMA_N_FASTEST
#define MMA_TILE_IDS                                                                              \
    const int linear = get_group_id(0) + get_group_id(1) * get_num_groups(0);                     \
    int tile = linear / get_num_groups(1);                                                        \
    const int n_tile = linear % get_num_groups(1);
#else
#define MMA_TILE_IDS                                                                              \
    int tile = get_group_id(0);                                                                   \
    const int n_tile = get_group_id(1);
#endif
#define GEMM_MMA_KERNEL(NAME, FETCH_W, PUT_W, WREGS, PAIRED, KSTEP)                                              \
    __attribute__((reqd_work_group_size(MMA_WG, 1, 1))) kernel void NAME(GEMM_ARGS) {                             \
        /* uint4: ldmatrix rows and cp.async destinations are 16-byte aligned */                                  \
        local uint4 As4[3 * MMA_X_WORDS / 4];                                                                     \
        local uint4 Bs4[2 * MMA_W_WORDS / 4];                                                                     \
        local uint* As = (local uint*)As4;                                                                        \
        local uint* Bs = (local uint*)Bs4;                                                                        \
        MMA_TILE_IDS                                                                                              \
        const int tiles0 = (M0 + MMA_BM - 1) / MMA_BM, tiles1 = (M1 + MMA_BM - 1) / MMA_BM;                       \
        SELECT_MATRIX(tile, tiles0, tiles1)                                                                       \
        const int m0 = tile * MMA_BM, n0 = n_tile * MMA_BN;                                                       \
        global const uchar* x16 = xb + xoff;                                                                      \
        const bool async = aligned16(x16);                                                                        \
        const int warp = get_local_id(0) / 32;                                                                    \
        const int wn = (warp / MMA_WARPS_M) * 16 * MMA_FRAGS_N, wm = (warp % MMA_WARPS_M) * 8 * MMA_FRAGS_M;      \
        float c[MMA_FRAGS_N * MMA_FRAGS_M * 4];                                                                   \
        MMA_UNROLL for (int i = 0; i < MMA_FRAGS_N * MMA_FRAGS_M * 4; ++i) c[i] = 0.f;                            \
        uint wr0[WREGS], wr1[WREGS];                                                                              \
        const int steps = K / QK;                                                                                 \
        MMA_COPY_X(0, KSTEP)                                                                                      \
        MMA_COPY_X(1, KSTEP)                                                                                      \
        FETCH_W(w, M, K, m0, KSTEP(0) * QK, wr0);                                                                 \
        if (PAIRED) {                                                                                             \
            MMA_UNROLL for (int e = 0; e < WREGS; ++e) wr1[e] = wr0[e];                                           \
        } else if (steps > 1) {                                                                                   \
            FETCH_W(w, M, K, m0, KSTEP(1) * QK, wr1);                                                             \
        }                                                                                                         \
        PUT_W(wr0, Bs, KSTEP(0));                                                                                 \
        copy_async_wait_previous();                                                                               \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                             \
        for (int s = 0; s < steps; s += 2) {                                                                      \
            MMA_COPY_X(s + 2, KSTEP)                                                                              \
            if (s + 2 < steps) FETCH_W(w, M, K, m0, KSTEP(s + 2) * QK, wr0);                                      \
            mma_step(c, As + (s % 3) * MMA_X_WORDS, Bs, wn, wm);                                                  \
            if (s + 1 < steps) PUT_W(wr1, Bs + MMA_W_WORDS, KSTEP(s + 1));                                        \
            copy_async_wait_previous();                                                                           \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                         \
            if (s + 1 >= steps) break;                                                                            \
            MMA_COPY_X(s + 3, KSTEP)                                                                              \
            if (!(PAIRED) && s + 3 < steps) FETCH_W(w, M, K, m0, KSTEP(s + 3) * QK, wr1);                         \
            mma_step(c, As + ((s + 1) % 3) * MMA_X_WORDS, Bs + MMA_W_WORDS, wn, wm);                              \
            if (s + 2 < steps) {                                                                                  \
                PUT_W(wr0, Bs, KSTEP(s + 2));                                                                     \
                if (PAIRED) MMA_UNROLL for (int e = 0; e < WREGS; ++e) wr1[e] = wr0[e];                           \
            }                                                                                                     \
            copy_async_wait_previous();                                                                           \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                         \
        }                                                                                                         \
        global const float* bias = CPTR(float, bb, boff);                                                         \
        const int bias_mode = first ? has_bias : 0;                                                               \
        const int lane = get_local_id(0) % 32;                                                                    \
        MMA_UNROLL for (int i = 0; i < MMA_FRAGS_N; ++i)                                                          \
            MMA_UNROLL for (int j = 0; j < MMA_FRAGS_M; ++j)                                                      \
                MMA_UNROLL for (int e = 0; e < 4; ++e) {                                                          \
                    const int n = n0 + wn + 16 * i + lane / 4 + (e / 2) * 8;                                      \
                    const int m = m0 + wm + 8 * j + 2 * (lane % 4) + e % 2;                                       \
                    if (n < N && m < M)                                                                           \
                        y[(ulong)n * M + m] = c[4 * (i * MMA_FRAGS_M + j) + e] + (bias_mode == 1 ? bias[m]       \
                                                                   : bias_mode == 2 ? bias[(ulong)n * M + m]      \
                                                                                    : 0.f);                       \
                }                                                                                                 \
    }

GEMM_MMA_KERNEL(gemm_mma_q4_0, mma_fetch_w_q4_0, mma_put_w_q4_0, 2 * MMA_PR, 0, MMA_STEP_IN_ORDER)
GEMM_MMA_KERNEL(gemm_mma_q8_0, mma_fetch_w_q8_0, mma_put_w_q8_0, 3 * MMA_PR, 0, MMA_STEP_IN_ORDER)
GEMM_MMA_KERNEL(gemm_mma_planar_q4_0, mma_fetch_w_planar_q4_0, mma_put_w_q4_0, 2 * MMA_PR, 0, MMA_STEP_IN_ORDER)
GEMM_MMA_KERNEL(gemm_mma_planar_q8_0, mma_fetch_w_planar_q8_0, mma_put_w_q8_0, 3 * MMA_PR, 0, MMA_STEP_IN_ORDER)

#endif  // MMA_KERNELS
