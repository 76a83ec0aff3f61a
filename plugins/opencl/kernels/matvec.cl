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

#define MATVEC_PROLOGUE                                                         \
    const int lid = get_local_id(0);                                            \
    const int lane = lid & (lanes - 1);                                         \
    const int row = get_group_id(0) * (get_local_size(0) / lanes) + lid / lanes; \
    global const float* x = CPTR(float, xb, xoff);                              \
    float acc = 0.f;

#define MATVEC_EPILOGUE                                                  \
    const float sum = row_reduce(acc, red, lanes);                       \
    if (row < M && lane == 0)                                            \
        PTR(float, yb, yoff)[row] = sum + (has_bias ? CPTR(float, bb, boff)[row] : 0.f);

#define MATVEC_ARGS                                                                          \
    global const uchar *xb, ulong xoff, global const uchar *wb, ulong woff, global const uchar *bb, \
        ulong boff, int has_bias, global uchar *yb, ulong yoff, int M, int K, int lanes, local float *red

// Quantized rows: the `lanes` work-items of a row walk (block, part) pairs,
// 8 parts per block, so neighbouring lanes share a block and a 32-lane row
// reads 4 consecutive blocks per step. Each step is unrolled MV_UNROLL times
// with all loads issued before any math: decode is latency-bound unless every
// lane keeps several independent loads in flight.
#define MV_UNROLL 8

inline float q4_part(global const uchar* wrow, global const float* x, int v) {
    const int b = v >> 3, s = v & 7;
    global const ushort* blk = (global const ushort*)(wrow + b * Q4_BYTES);
    const float d = vload_half(0, (global const half*)blk);
    // Bytes 2s and 2s+1: elements 2s, 2s+1 (low nibbles), 2s+16, 2s+17 (high).
    const uint q = blk[1 + s];
    global const float* xp = x + b * QK + 2 * s;
    const float2 xl = vload2(0, xp);
    const float2 xh = vload2(0, xp + 16);
    float sum = ((float)(q & 15u) - 8.f) * xl.x;
    sum = fma((float)((q >> 8) & 15u) - 8.f, xl.y, sum);
    sum = fma((float)((q >> 4) & 15u) - 8.f, xh.x, sum);
    sum = fma((float)(q >> 12) - 8.f, xh.y, sum);
    return d * sum;
}

inline float q8_part(global const uchar* wrow, global const float* x, int v) {
    const int b = v >> 3, s = v & 7;
    global const ushort* blk = (global const ushort*)(wrow + b * Q8_BYTES);
    const float d = vload_half(0, (global const half*)blk);
    const float4 q = convert_float4(as_char4(vload2(0, blk + 1 + 2 * s)));
    return d * dot(q, vload4(0, x + b * QK + 4 * s));
}

#define QUANT_MATVEC(NAME, BYTES, PART)                                              \
    kernel void NAME(MATVEC_ARGS) {                                                  \
        MATVEC_PROLOGUE                                                              \
        if (row < M) {                                                               \
            const int parts = (K / QK) * 8;                                          \
            global const uchar* wrow = wb + woff + (ulong)row * (K / QK) * BYTES;    \
            int v = lane;                                                            \
            for (; v + (MV_UNROLL - 1) * lanes < parts; v += MV_UNROLL * lanes) {    \
                float p[MV_UNROLL];                                                  \
                for (int u = 0; u < MV_UNROLL; ++u) p[u] = PART(wrow, x, v + u * lanes); \
                for (int u = 0; u < MV_UNROLL; ++u) acc += p[u];                     \
            }                                                                        \
            for (; v < parts; v += lanes) acc += PART(wrow, x, v);                   \
        }                                                                            \
        MATVEC_EPILOGUE                                                              \
    }

QUANT_MATVEC(matvec_q4_0, Q4_BYTES, q4_part)
QUANT_MATVEC(matvec_q8_0, Q8_BYTES, q8_part)

kernel void matvec_f32(MATVEC_ARGS) {
    MATVEC_PROLOGUE
    if (row < M) {
        global const float* w = CPTR(float, wb, woff) + (ulong)row * K;
        for (int k = lane; k < K; k += lanes) acc += w[k] * x[k];
    }
    MATVEC_EPILOGUE
}

kernel void matvec_f16(MATVEC_ARGS) {
    MATVEC_PROLOGUE
    if (row < M) {
        global const half* w = CPTR(half, wb, woff) + (ulong)row * K;
        for (int k = lane; k < K; k += lanes) acc += vload_half(k, w) * x[k];
    }
    MATVEC_EPILOGUE
}

kernel void matvec_bf16(MATVEC_ARGS) {
    MATVEC_PROLOGUE
    if (row < M) {
        global const ushort* w = CPTR(ushort, wb, woff) + (ulong)row * K;
        for (int k = lane; k < K; k += lanes) acc += bf16_bits_to_float(w[k]) * x[k];
    }
    MATVEC_EPILOGUE
}
