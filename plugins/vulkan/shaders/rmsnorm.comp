#version 450
#extension GL_GOOGLE_include_directive : require
// One workgroup per row; SUBGROUP=1 reduces with subgroupAdd. u[0] = rows, u[1] = D; f[0] = eps.
// DC (specialisation) != 0 is the row length known at pipeline creation
// (host ensures DC == D and DC <= MAX_PER * WG): each invocation then keeps
// its elements of x and w in registers, issuing every load before the
// reduction, so the row is read once and no load waits on another.
// OUTH=1: the output is stored as f16 (bit-exact rounding), for a consumer
// that reads it so (see vk_executable.cpp).
#ifndef OUTH
#define OUTH 0
#endif
#if OUTH
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "f16_store.glsl"
#if SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint DC = 0;
const uint MAX_PER = 16;
const uint PER = DC == 0u ? 1u : (DC + WG - 1u) / WG;
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer W { float w[]; };
#if OUTH
layout(std430, binding = 5) writeonly buffer O { uint16_t oh[]; };
#define STORE_O(I, V) oh[(pc.t4 >> 1) + (I)] = uint16_t(f32_to_f16_bits(V))
#else
layout(std430, binding = 5) writeonly buffer O { float o[]; };
#define STORE_O(I, V) o[(pc.t4 >> 2) + (I)] = (V)
#endif
shared float red[WG];

float row_sum(float s) {
    uint t = gl_LocalInvocationID.x;
#if SUBGROUP
    // Barrier-free steps instead of a log2(WG)-step tree.
    s = subgroupAdd(s);
    if (subgroupElect()) red[gl_SubgroupID] = s;
    barrier();
    float total = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) total += red[i];
    return subgroupAdd(total);
#else
    red[t] = s;
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        barrier();
    }
    return red[0];
#endif
}

void main() {
    uint row = flat_group();
    if (row >= pc.u[0]) return;
    uint D = DC != 0u ? DC : pc.u[1];
    uint t = gl_LocalInvocationID.x;
    uint xb = (pc.t0 >> 2) + row * D;
    uint wb = pc.t1 >> 2;
    uint ob = row * D;  // STORE_O adds the output's offset
    if (DC != 0u) {
        float xv[MAX_PER], wv[MAX_PER];
        float s = 0.0;
        for (uint i = 0u; i < PER; ++i) {
            uint k = t + i * WG;
            xv[i] = k < D ? x[xb + k] : 0.0;
            wv[i] = k < D ? w[wb + k] : 0.0;
        }
        for (uint i = 0u; i < PER; ++i) s += xv[i] * xv[i];
        float inv = 1.0 / sqrt(row_sum(s) / float(D) + pc.f[0]);
        for (uint i = 0u; i < PER; ++i) {
            uint k = t + i * WG;
            if (k < D) STORE_O(ob + k, xv[i] * inv * wv[i]);
        }
        return;
    }
    float s = 0.0;
    for (uint i = t; i < D; i += WG) { float v = x[xb + i]; s += v * v; }
    float inv = 1.0 / sqrt(row_sum(s) / float(D) + pc.f[0]);
    for (uint i = t; i < D; i += WG) STORE_O(ob + i, x[xb + i] * inv * w[wb + i]);
}
