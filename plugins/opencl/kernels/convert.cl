// Conversions between f32 and the storage dtypes. Quantizers follow GGUF's
// reference rounding exactly, so contraction into FMAs is switched off here.
#pragma OPENCL FP_CONTRACT OFF

// Any float/quantized dtype -> f32, one work-item per element.
// planar_blocks > 0: Q4_0/Q8_0 in the planar layout, of that many blocks.
kernel void convert_to_f32(global const uchar* xb, ulong xoff, int dtype, global uchar* yb, ulong yoff, ulong n,
                           ulong planar_blocks) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    global const uchar* x = xb + xoff;
    if (planar_blocks) {
        PTR(float, yb, yoff)[i] = planar_elem(x, dtype, planar_blocks, i);
        return;
    }
    PTR(float, yb, yoff)[i] = load_elem_flat(x, dtype, i);
}

// f32 -> f32/f16/bf16, one work-item per element.
kernel void convert_from_f32(global const uchar* xb, ulong xoff, int dtype, global uchar* yb, ulong yoff, ulong n) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const float v = CPTR(float, xb, xoff)[i];
    if (dtype == DT_F32) PTR(float, yb, yoff)[i] = v;
    else if (dtype == DT_F16) PTR(ushort, yb, yoff)[i] = float_to_half_bits(v);
    else PTR(ushort, yb, yoff)[i] = float_to_bf16_bits(v);
}

// f32 -> Q8_0, one work-item per block.
kernel void quantize_q8_0(global const uchar* xb, ulong xoff, global uchar* yb, ulong yoff, ulong nblocks) {
    const ulong b = get_global_id(0);
    if (b >= nblocks) return;
    global const float* x = CPTR(float, xb, xoff) + b * QK;
    global uchar* blk = yb + yoff + b * Q8_BYTES;
    float amax = 0.f;
    for (int i = 0; i < QK; ++i) amax = fmax(amax, fabs(x[i]));
    const float d = amax / 127.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    *(global ushort*)blk = float_to_half_bits(d);
    for (int i = 0; i < QK; ++i) blk[2 + i] = (uchar)(char)convert_int(round(x[i] * id));
}

// f32 -> Q4_0, one work-item per block.
kernel void quantize_q4_0(global const uchar* xb, ulong xoff, global uchar* yb, ulong yoff, ulong nblocks) {
    const ulong b = get_global_id(0);
    if (b >= nblocks) return;
    global const float* x = CPTR(float, xb, xoff) + b * QK;
    global uchar* blk = yb + yoff + b * Q4_BYTES;
    float amax = 0.f, mx = 0.f;
    for (int i = 0; i < QK; ++i) {
        const float a = fabs(x[i]);
        if (a > amax) { amax = a; mx = x[i]; }
    }
    const float d = mx / -8.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    *(global ushort*)blk = float_to_half_bits(d);
    for (int j = 0; j < QK / 2; ++j) {
        const float x0 = x[j] * id, x1 = x[j + QK / 2] * id;
        const int q0 = min(15, convert_int_rtz(x0 + 8.5f));
        const int q1 = min(15, convert_int_rtz(x1 + 8.5f));
        blk[2 + j] = (uchar)(q0 | (q1 << 4));
    }
}
