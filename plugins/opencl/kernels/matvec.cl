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

// Quantized rows: the `lanes` work-items of a row walk (block, part) pairs
// (4 parts per Q4_0 block, 8 per Q8_0 block), so neighbouring lanes share a
// block and a 32-lane row reads consecutive blocks per step: few cache lines
// per load instruction.

kernel void matvec_q4_0(MATVEC_ARGS) {
    MATVEC_PROLOGUE
    if (row < M) {
        const int nb = K / QK;
        global const uchar* wrow = wb + woff + (ulong)row * nb * Q4_BYTES;
        for (int v = lane; v < nb * 4; v += lanes) {
            const int b = v >> 2, s = v & 3;
            global const ushort* blk = (global const ushort*)(wrow + b * Q4_BYTES);
            const float d = vload_half(0, (global const half*)blk);
            // Bytes 4s..4s+3: elements 4s..4s+3 (low nibbles) and 4s+16..4s+19 (high).
            const uchar4 q = as_uchar4(vload2(0, blk + 1 + 2 * s));
            global const float* xp = x + b * QK + 4 * s;
            const float4 lo = convert_float4(q & (uchar)15) - 8.f;
            const float4 hi = convert_float4(q >> (uchar)4) - 8.f;
            acc = fma(d, dot(lo, vload4(0, xp)) + dot(hi, vload4(0, xp + 16)), acc);
        }
    }
    MATVEC_EPILOGUE
}

kernel void matvec_q8_0(MATVEC_ARGS) {
    MATVEC_PROLOGUE
    if (row < M) {
        const int nb = K / QK;
        global const uchar* wrow = wb + woff + (ulong)row * nb * Q8_BYTES;
        for (int v = lane; v < nb * 8; v += lanes) {
            const int b = v >> 3, s = v & 7;
            global const ushort* blk = (global const ushort*)(wrow + b * Q8_BYTES);
            const float d = vload_half(0, (global const half*)blk);
            const float4 q = convert_float4(as_char4(vload2(0, blk + 1 + 2 * s)));
            const float4 xv = vload4(0, x + b * QK + 4 * s);
            acc = fma(d, dot(q, xv), acc);
        }
    }
    MATVEC_EPILOGUE
}

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
