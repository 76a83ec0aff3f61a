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

kernel void matvec_q4_0(MATVEC_ARGS) {
    MATVEC_PROLOGUE
    if (row < M) {
        const int nb = K / QK;
        global const uchar* wrow = wb + woff + (ulong)row * nb * Q4_BYTES;
        for (int b = lane; b < nb; b += lanes) {
            global const ushort* blk = (global const ushort*)(wrow + b * Q4_BYTES);
            const float d = vload_half(0, (global const half*)blk);
            const ushort8 q = vload8(0, blk + 1);
            global const float* xp = x + b * QK;
            const float16 xl = vload16(0, xp);
            const float16 xh = vload16(1, xp);
            // Byte j holds element j (low nibble) and element j + 16 (high nibble).
            const uchar16 qb = as_uchar16(q);
            const float16 lo = convert_float16(qb & (uchar)0x0f) - 8.f;
            const float16 hi = convert_float16(qb >> (uchar)4) - 8.f;
            const float16 p = lo * xl + hi * xh;
            const float8 s8 = p.lo + p.hi;
            const float4 s4 = s8.lo + s8.hi;
            acc += d * (s4.x + s4.y + s4.z + s4.w);
        }
    }
    MATVEC_EPILOGUE
}

kernel void matvec_q8_0(MATVEC_ARGS) {
    MATVEC_PROLOGUE
    if (row < M) {
        const int nb = K / QK;
        global const uchar* wrow = wb + woff + (ulong)row * nb * Q8_BYTES;
        for (int b = lane; b < nb; b += lanes) {
            global const ushort* blk = (global const ushort*)(wrow + b * Q8_BYTES);
            const float d = vload_half(0, (global const half*)blk);
            const char16 q0 = as_char16(vload8(0, blk + 1));
            const char16 q1 = as_char16(vload8(0, blk + 9));
            global const float* xp = x + b * QK;
            const float16 p = convert_float16(q0) * vload16(0, xp) + convert_float16(q1) * vload16(1, xp);
            const float8 s8 = p.lo + p.hi;
            const float4 s4 = s8.lo + s8.hi;
            acc += d * (s4.x + s4.y + s4.z + s4.w);
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
