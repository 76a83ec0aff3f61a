#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// cache[positions[n], :] = src[n, :] (cache f32 or f16). One invocation per
// element. u[0] = N, u[1] = D, u[2] = C, u[3] = 1 when the cache is f16.
// PAIR=1: a second source and cache of the same shapes with the same
// positions (V next to K) in the same dispatch: source at binding 3, cache at
// binding 6; its invocations follow the first's.
#include "common.glsl"
#ifndef PAIR
#define PAIR 0
#endif
#include "f16_store.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer S { float s[]; };
layout(std430, binding = 2) readonly buffer P { int pos[]; };
layout(std430, binding = 5) writeonly buffer O32 { float o32[]; };
layout(std430, binding = 5) writeonly buffer O16 { uint16_t o16[]; };
#if PAIR
layout(std430, binding = 3) readonly buffer S1 { float s1[]; };
layout(std430, binding = 6) writeonly buffer O1_32 { float o1_32[]; };
layout(std430, binding = 6) writeonly buffer O1_16 { uint16_t o1_16[]; };
#endif

void main() {
    uint i = flat_invocation();
    uint N = pc.u[0], D = pc.u[1];
    bool second = false;
#if PAIR
    if (i >= N * D) {
        i -= N * D;
        second = true;
    }
#endif
    if (i >= N * D) return;
    uint n = i / D, d = i % D;
    int p = pos[(pc.t1 >> 2) + n];
    if (p < 0 || uint(p) >= pc.u[2]) {
        report_error(ERR_BAD_POSITION, uint(p));
        return;
    }
    uint dst = uint(p) * D + d;
#if PAIR
    if (second) {
        float v1 = s1[(pc.t2 >> 2) + i];
        if (pc.u[3] != 0u) o1_16[(pc.t5 >> 1) + dst] = uint16_t(f32_to_f16_bits(v1));
        else o1_32[(pc.t5 >> 2) + dst] = v1;
        return;
    }
#endif
    float v = s[(pc.t0 >> 2) + i];
    if (pc.u[3] != 0u) o16[(pc.t4 >> 1) + dst] = uint16_t(f32_to_f16_bits(v));
    else o32[(pc.t4 >> 2) + dst] = v;
}
