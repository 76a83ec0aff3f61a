// y[M] = W[M,K] x[K] (+ bias) for a single activation row (decode).
//
// A work-group holds local_size / lanes rows; the `lanes` work-items of a row
// stride over its K extent so that neighbouring lanes read neighbouring
// blocks (coalesced), then reduce their partial sums in local memory.
// Quantized weights are read in place: no dequantized copy exists.

inline float row_reduce(float v, local float* red, int lanes) {
    const int lid = get_local_id(0);
    const int lane = lid & (lanes - 1);
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = lanes / 2; s > 0; s >>= 1) {
        if (lane < s) red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return red[lid - lane];
}

// Every matvec kernel takes up to three matrices over the same x (Q, K and V;
// gate and up): rows are numbered across them, so one launch does the work
// of three. has_bias adds bias[row] to the first matrix's rows (a MATMUL's
// bias, or a fused residual: for one activation row both are a vector).
#define MATVEC_ARGS                                                                              \
    global const uchar *xb, ulong xoff, global const uchar *w0b, ulong w0off, global uchar *y0b, ulong y0off, \
        int M0, global const uchar *w1b, ulong w1off, global uchar *y1b, ulong y1off, int M1,             \
        global const uchar *w2b, ulong w2off, global uchar *y2b, ulong y2off, int M2, global const uchar *bb, \
        ulong boff, int has_bias, int K, int lanes, local float *red

// Quantized rows: the `lanes` work-items of a row walk (block, part) pairs,
// 8 parts per block, so neighbouring lanes share a block and a 32-lane row
// reads 4 consecutive blocks per step. Each step is unrolled MV_UNROLL times
// with all loads issued before any math, so every lane keeps several
// independent loads in flight (on an H100, 4, 8 and 16 measured the same).
#define MV_UNROLL 8

// The part helpers and dots exist for x in global memory and, for the
// norm-fused kernels, in local memory (OpenCL C 1.2 has no generic pointers).
#define Q4_PART(NAME, AS)                                                              \
    inline float NAME(global const uchar* wrow, AS const float* x, int v) {           \
        const int b = v >> 3, s = v & 7;                                               \
        global const ushort* blk = (global const ushort*)(wrow + b * Q4_BYTES);        \
        const float d = vload_half(0, (global const half*)blk);                        \
        /* Bytes 2s, 2s+1: elements 2s, 2s+1 (low nibbles), 2s+16, 2s+17 (high). */   \
        const uint q = blk[1 + s];                                                     \
        AS const float* xp = x + b * QK + 2 * s;                                       \
        const float2 xl = vload2(0, xp);                                               \
        const float2 xh = vload2(0, xp + 16);                                          \
        float sum = ((float)(q & 15u) - 8.f) * xl.x;                                   \
        sum = fma((float)((q >> 8) & 15u) - 8.f, xl.y, sum);                           \
        sum = fma((float)((q >> 4) & 15u) - 8.f, xh.x, sum);                           \
        sum = fma((float)(q >> 12) - 8.f, xh.y, sum);                                  \
        return d * sum;                                                                \
    }

#define Q8_PART(NAME, AS)                                                              \
    inline float NAME(global const uchar* wrow, AS const float* x, int v) {           \
        const int b = v >> 3, s = v & 7;                                               \
        global const ushort* blk = (global const ushort*)(wrow + b * Q8_BYTES);        \
        const float d = vload_half(0, (global const half*)blk);                        \
        const float4 q = convert_float4(as_char4(vload2(0, blk + 1 + 2 * s)));        \
        return d * dot(q, vload4(0, x + b * QK + 4 * s));                              \
    }

// This lane's share of row . x (reduced across lanes by the caller).
#define QUANT_DOT(NAME, PART, AS)                                                    \
    inline float NAME(global const uchar* wrow, AS const float* x, int K, int lane, int lanes) { \
        const int parts = (K / QK) * 8;                                              \
        float acc = 0.f;                                                             \
        int v = lane;                                                                \
        for (; v + (MV_UNROLL - 1) * lanes < parts; v += MV_UNROLL * lanes) {        \
            float p[MV_UNROLL];                                                      \
            for (int u = 0; u < MV_UNROLL; ++u) p[u] = PART(wrow, x, v + u * lanes); \
            for (int u = 0; u < MV_UNROLL; ++u) acc += p[u];                         \
        }                                                                            \
        for (; v < parts; v += lanes) acc += PART(wrow, x, v);                       \
        return acc;                                                                  \
    }
Q4_PART(q4_part, global)
Q8_PART(q8_part, global)
Q4_PART(q4_part_l, local)
Q8_PART(q8_part_l, local)
QUANT_DOT(dot_q4_0, q4_part, global)
QUANT_DOT(dot_q8_0, q8_part, global)
QUANT_DOT(dot_q4_0_l, q4_part_l, local)
QUANT_DOT(dot_q8_0_l, q8_part_l, local)

inline float dot_f32(global const uchar* wrow, global const float* x, int K, int lane, int lanes) {
    global const float* w = (global const float*)wrow;
    float acc = 0.f;
    for (int k = lane; k < K; k += lanes) acc += w[k] * x[k];
    return acc;
}

inline float dot_f16(global const uchar* wrow, global const float* x, int K, int lane, int lanes) {
    global const half* w = (global const half*)wrow;
    float acc = 0.f;
    for (int k = lane; k < K; k += lanes) acc += vload_half(k, w) * x[k];
    return acc;
}

inline float dot_bf16(global const uchar* wrow, global const float* x, int K, int lane, int lanes) {
    global const ushort* w = (global const ushort*)wrow;
    float acc = 0.f;
    for (int k = lane; k < K; k += lanes) acc += bf16_bits_to_float(w[k]) * x[k];
    return acc;
}

#define ROW_BYTES_Q4_0(K) ((ulong)((K) / QK) * Q4_BYTES)
#define ROW_BYTES_Q8_0(K) ((ulong)((K) / QK) * Q8_BYTES)
#define ROW_BYTES_F32(K) ((ulong)(K) * 4)
#define ROW_BYTES_F16(K) ((ulong)(K) * 2)
#define ROW_BYTES_BF16(K) ((ulong)(K) * 2)

// Picks this work-item's row: index `row` across the matrices becomes a row
// of matrix 0, 1 or 2 (`w`, `y`, `M`).
#define MATVEC_SELECT_ROW                                                            \
    const int lid = get_local_id(0);                                                 \
    const int lane = lid & (lanes - 1);                                              \
    int row = get_group_id(0) * (get_local_size(0) / lanes) + lid / lanes;           \
    SELECT_MATRIX(row, M0, M1)

// x as the kernel reads it: straight from global memory, or (NORM_ARGS
// kernels) RMS-normalised into local memory first: the RMSNORM before the
// matmuls runs in every work-group, which costs a re-read of x (a few KiB)
// and saves a launch.
#define X_GLOBAL global const float* x = CPTR(float, xb, xoff);
#define NORM_ARGS , global const uchar *nwb, ulong nwoff, float eps, local float *xs
#define X_NORMED                                                                     \
    {                                                                                \
        global const float* xg = CPTR(float, xb, xoff);                              \
        global const float* nw = CPTR(float, nwb, nwoff);                            \
        float ss = 0.f;                                                              \
        for (int i = get_local_id(0); i < K; i += get_local_size(0)) ss += xg[i] * xg[i]; \
        ss = group_sum(ss, red);                                                     \
        const float scale = 1.f / sqrt(ss / (float)K + eps);                         \
        for (int i = get_local_id(0); i < K; i += get_local_size(0)) xs[i] = xg[i] * scale * nw[i]; \
        barrier(CLK_LOCAL_MEM_FENCE);                                                \
    }                                                                                \
    local const float* x = xs;

// A decode step of several tokens (a server's batched step) launches the
// matvec with one work-group row per token: token n reads row n of x and
// writes row n of each y (and reads row n of a fused residual, has_bias 2).
// The token rows run at once, so each weight row comes from DRAM once and
// from L2 for the others.
#define MATVEC_TOKEN_ROW                                                             \
    {                                                                                \
        const ulong n = get_group_id(1);                                             \
        xoff += n * (ulong)K * 4;                                                    \
        if (has_bias == 2) boff += n * (ulong)M0 * 4;                                \
        y0off += n * (ulong)M0 * 4;                                                  \
        y1off += n * (ulong)M1 * 4;                                                  \
        y2off += n * (ulong)M2 * 4;                                                  \
    }

#define MATVEC_KERNEL(NAME, DOT, ROW_BYTES, EXTRA_ARGS, X_SETUP)                      \
    kernel void NAME(MATVEC_ARGS EXTRA_ARGS) {                                       \
        MATVEC_TOKEN_ROW                                                             \
        X_SETUP                                                                      \
        MATVEC_SELECT_ROW                                                            \
        const float part = row < M ? DOT(w + (ulong)row * ROW_BYTES(K), x, K, lane, lanes) : 0.f; \
        const float sum = row_reduce(part, red, lanes);                              \
        if (row < M && lane == 0)                                                    \
            y[row] = sum + (has_bias && first ? CPTR(float, bb, boff)[row] : 0.f);  \
    }

// Gate and up rows (matrices 0 and 1, M0 rows each) in one pass over x,
// writing silu(gate) * up to y0: the SwiGLU after the pair runs here.
#define MATVEC_SWIGLU_KERNEL(NAME, DOT, ROW_BYTES, EXTRA_ARGS, X_SETUP)               \
    kernel void NAME(MATVEC_ARGS EXTRA_ARGS) {                                       \
        MATVEC_TOKEN_ROW                                                             \
        X_SETUP                                                                      \
        const int lid = get_local_id(0);                                             \
        const int lane = lid & (lanes - 1);                                          \
        const int row = get_group_id(0) * (get_local_size(0) / lanes) + lid / lanes; \
        const ulong at = (ulong)row * ROW_BYTES(K);                                  \
        const bool in = row < M0;                                                    \
        const float gp = in ? DOT(w0b + w0off + at, x, K, lane, lanes) : 0.f;        \
        const float up = in ? DOT(w1b + w1off + at, x, K, lane, lanes) : 0.f;        \
        const float g = row_reduce(gp, red, lanes);                                  \
        barrier(CLK_LOCAL_MEM_FENCE); /* every lane has read g before red is reused */ \
        const float u = row_reduce(up, red, lanes);                                  \
        if (in && lane == 0) PTR(float, y0b, y0off)[row] = g / (1.f + exp(-g)) * u;  \
    }

MATVEC_KERNEL(matvec_q4_0, dot_q4_0, ROW_BYTES_Q4_0, , X_GLOBAL)
MATVEC_KERNEL(matvec_q8_0, dot_q8_0, ROW_BYTES_Q8_0, , X_GLOBAL)
MATVEC_KERNEL(matvec_f32, dot_f32, ROW_BYTES_F32, , X_GLOBAL)
MATVEC_KERNEL(matvec_f16, dot_f16, ROW_BYTES_F16, , X_GLOBAL)
MATVEC_KERNEL(matvec_bf16, dot_bf16, ROW_BYTES_BF16, , X_GLOBAL)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_q4_0, dot_q4_0, ROW_BYTES_Q4_0, , X_GLOBAL)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_q8_0, dot_q8_0, ROW_BYTES_Q8_0, , X_GLOBAL)
MATVEC_KERNEL(matvec_norm_q4_0, dot_q4_0_l, ROW_BYTES_Q4_0, NORM_ARGS, X_NORMED)
MATVEC_KERNEL(matvec_norm_q8_0, dot_q8_0_l, ROW_BYTES_Q8_0, NORM_ARGS, X_NORMED)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_norm_q4_0, dot_q4_0_l, ROW_BYTES_Q4_0, NORM_ARGS, X_NORMED)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_norm_q8_0, dot_q8_0_l, ROW_BYTES_Q8_0, NORM_ARGS, X_NORMED)
