#version 450
#extension GL_GOOGLE_include_directive : require
// One workgroup per row. u[0] = rows, u[1] = D; f[0] = scale (0 = 1).
#include "common.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
shared float red[WG];

void main() {
    uint row = flat_group();
    if (row >= pc.u[0]) return;
    uint D = pc.u[1];
    uint t = gl_LocalInvocationID.x;
    float scale = pc.f[0] == 0.0 ? 1.0 : pc.f[0];
    uint xb = (pc.t0 >> 2) + row * D;
    float m = -1.0 / 0.0;
    for (uint i = t; i < D; i += WG) m = max(m, x[xb + i] * scale);
    red[t] = m;
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k) red[t] = max(red[t], red[t + k]);
        barrier();
    }
    m = red[0];
    barrier();
    float s = 0.0;
    for (uint i = t; i < D; i += WG) s += exp(x[xb + i] * scale - m);
    red[t] = s;
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        barrier();
    }
    float inv = 1.0 / red[0];
    uint ob = (pc.t4 >> 2) + row * D;
    for (uint i = t; i < D; i += WG) o[ob + i] = exp(x[xb + i] * scale - m) * inv;
}
