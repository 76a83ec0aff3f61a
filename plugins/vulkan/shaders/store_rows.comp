#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// cache[positions[n], :] = src[n, :] (cache f32 or f16). One invocation per
// element. u[0] = N, u[1] = D, u[2] = C, u[3] = 1 when the cache is f16.
#include "common.glsl"
#include "f16_store.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer S { float s[]; };
layout(std430, binding = 2) readonly buffer P { int pos[]; };
layout(std430, binding = 5) writeonly buffer O32 { float o32[]; };
layout(std430, binding = 5) writeonly buffer O16 { uint16_t o16[]; };

void main() {
    uint i = flat_invocation();
    uint N = pc.u[0], D = pc.u[1];
    if (i >= N * D) return;
    uint n = i / D, d = i % D;
    int p = pos[(pc.t1 >> 2) + n];
    if (p < 0 || uint(p) >= pc.u[2]) {
        report_error(ERR_BAD_POSITION, uint(p));
        return;
    }
    float v = s[(pc.t0 >> 2) + i];
    uint dst = uint(p) * D + d;
    if (pc.u[3] != 0u) o16[(pc.t4 >> 1) + dst] = uint16_t(f32_to_f16_bits(v));
    else o32[(pc.t4 >> 2) + dst] = v;
}
