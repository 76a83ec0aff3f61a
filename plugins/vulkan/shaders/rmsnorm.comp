#version 450
#extension GL_GOOGLE_include_directive : require
// One workgroup per row; SUBGROUP=1 reduces with subgroupAdd. u[0] = rows, u[1] = D; f[0] = eps.
#include "common.glsl"
#if SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer W { float w[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
shared float red[WG];

void main() {
    uint row = flat_group();
    if (row >= pc.u[0]) return;
    uint D = pc.u[1];
    uint t = gl_LocalInvocationID.x;
    uint xb = (pc.t0 >> 2) + row * D;
    float s = 0.0;
    for (uint i = t; i < D; i += WG) { float v = x[xb + i]; s += v * v; }
#if SUBGROUP
    // Two barrier-free steps instead of a log2(WG)-step tree.
    s = subgroupAdd(s);
    if (subgroupElect()) red[gl_SubgroupID] = s;
    barrier();
    float total = 0.0;
    for (uint i = 0u; i < gl_NumSubgroups; ++i) total += red[i];
#else
    red[t] = s;
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        barrier();
    }
    float total = red[0];
#endif
    float inv = 1.0 / sqrt(total / float(D) + pc.f[0]);
    uint wb = pc.t1 >> 2;
    uint ob = (pc.t4 >> 2) + row * D;
    for (uint i = t; i < D; i += WG) o[ob + i] = x[xb + i] * inv * w[wb + i];
}
