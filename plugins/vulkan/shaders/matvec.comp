#version 450
#extension GL_GOOGLE_include_directive : require
// out[n, r] = dot(x[n, :], W[r, :]) (+ bias[r]) for few tokens (decode).
// A workgroup owns NR consecutive rows; its invocations stride over K in
// chunks so neighbouring invocations read neighbouring bytes, then the
// partial sums are reduced with subgroupAdd (SUBGROUP=1) or shared memory.
// WTYPE: hetero_dtype of W. u[0] = N, u[1] = M, u[2] = K, u[3] = has bias.
// Grid: groups (2-D) over row blocks, z over tokens.
#include "common.glsl"
#include "load.glsl"
#if SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint NR = 2;
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer Wt { uint ww[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
DEFINE_LOADERS(w, ww)

#if SUBGROUP
shared float red[NR * 32];  // one slot per subgroup per row (>= 4 lanes per subgroup)
#else
shared float red[NR * WG];
#endif

// Partial dot product of one row of W with x over this invocation's chunks.
float row_partial(uint row, uint K, uint wbase, uint xb) {
    uint t = gl_LocalInvocationID.x;
    float sum = 0.0;
#if WTYPE == 4
    // Q4_0: a chunk is 8 bytes of a block: elements 8c..8c+7 (low nibbles)
    // and 16+8c..16+8c+7 (high nibbles), c = 0/1.
    uint nchunks = K / 16u;
    uint rb = wbase + row * (K / 32u) * 18u;
    for (uint c = t; c < nchunks; c += WG) {
        uint blk = rb + (c >> 1) * 18u;
        float d = unpackHalf2x16(w_u16(blk)).x;
        uint qb = blk + 2u + (c & 1u) * 8u;
        uint xo = xb + (c >> 1) * 32u + (c & 1u) * 8u;
        float s = 0.0, xs = 0.0;
        for (uint k = 0u; k < 4u; ++k) {
            uint v = w_u16(qb + 2u * k);
            float x0 = x[xo + 2u * k], x1 = x[xo + 2u * k + 1u];
            float x2 = x[xo + 16u + 2u * k], x3 = x[xo + 17u + 2u * k];
            s += float(v & 15u) * x0 + float((v >> 8) & 15u) * x1 + float((v >> 4) & 15u) * x2 + float(v >> 12) * x3;
            xs += x0 + x1 + x2 + x3;
        }
        sum += d * (s - 8.0 * xs);
    }
#elif WTYPE == 3
    // Q8_0: a chunk is half a block, 16 int8 values.
    uint nchunks = K / 16u;
    uint rb = wbase + row * (K / 32u) * 34u;
    for (uint c = t; c < nchunks; c += WG) {
        uint blk = rb + (c >> 1) * 34u;
        float d = unpackHalf2x16(w_u16(blk)).x;
        uint qb = blk + 2u + (c & 1u) * 16u;
        uint xo = xb + c * 16u;
        float s = 0.0;
        for (uint k = 0u; k < 8u; ++k) {
            uint v = w_u16(qb + 2u * k);
            s += float(int(v << 24) >> 24) * x[xo + 2u * k] + float(int(v << 16) >> 24) * x[xo + 2u * k + 1u];
        }
        sum += d * s;
    }
#elif WTYPE == 0
    uint rb = (wbase >> 2) + row * K;
    for (uint k = t; k < K; k += WG) sum += uintBitsToFloat(ww[rb + k]) * x[xb + k];
#elif WTYPE == 1
    uint rb = wbase + row * K * 2u;
    for (uint k = t; k < K; k += WG) sum += unpackHalf2x16(w_u16(rb + 2u * k)).x * x[xb + k];
#else
    uint rb = wbase + row * K * 2u;
    for (uint k = t; k < K; k += WG) sum += uintBitsToFloat(w_u16(rb + 2u * k) << 16) * x[xb + k];
#endif
    return sum;
}

void main() {
    uint N = pc.u[0], M = pc.u[1], K = pc.u[2];
    uint n = gl_WorkGroupID.z;
    uint row0 = flat_group() * NR;
    if (row0 >= M) return;
    uint t = gl_LocalInvocationID.x;
    uint xb = (meta.base[pc.t0] >> 2) + n * K;
    uint wbase = meta.base[pc.t1];
    float part[NR];
    for (uint r = 0u; r < NR; ++r) part[r] = row0 + r < M ? row_partial(row0 + r, K, wbase, xb) : 0.0;
#if SUBGROUP
    for (uint r = 0u; r < NR; ++r) {
        float s = subgroupAdd(part[r]);
        if (subgroupElect()) red[r * 32u + gl_SubgroupID] = s;
    }
    barrier();
    if (t < NR && row0 + t < M) {
        float s = 0.0;
        for (uint i = 0u; i < gl_NumSubgroups; ++i) s += red[t * 32u + i];
        if (pc.u[3] != 0u) s += bias[(meta.base[pc.t2] >> 2) + row0 + t];
        o[(meta.base[pc.t4] >> 2) + n * M + row0 + t] = s;
    }
#else
    for (uint r = 0u; r < NR; ++r) red[r * WG + t] = part[r];
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k)
            for (uint r = 0u; r < NR; ++r) red[r * WG + t] += red[r * WG + t + k];
        barrier();
    }
    if (t < NR && row0 + t < M) {
        float s = red[t * WG];
        if (pc.u[3] != 0u) s += bias[(meta.base[pc.t2] >> 2) + row0 + t];
        o[(meta.base[pc.t4] >> 2) + n * M + row0 + t] = s;
    }
#endif
}
