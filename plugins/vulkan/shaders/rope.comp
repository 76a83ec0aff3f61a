#version 450
#extension GL_GOOGLE_include_directive : require
// One invocation per pair of elements. u[0] = N, u[1] = H, u[2] = Hd,
// u[3] = rot_dims, u[4] = mode (0 adjacent, 1 halves); f[0] = base.
// PAIR=1: a second tensor with the same positions and parameters (the K
// projection next to Q) in the same dispatch: input at binding 3, output at
// binding 6, u[5] = its head count; its invocations follow the first's.
// STORE=1 (with PAIR): the rotated K rows go straight into the K cache at
// their positions (binding 6, C = u[6] rows, f16 when u[7] = 1) and V
// (binding 4, same shape as K) into the V cache (binding 7), which saves the
// STORE_ROWS pair dispatch of decode; V's invocations (a pair of elements
// each) follow K's.
// SCALED=1 (ROPE_SCALED, alone or with PAIR / STORE): the angle is also
// multiplied by f[1] (freq_scale) and, when u[8] = 1, divided by the pair's
// factor (binding 8, shared by both tensors of a pair).
#ifndef PAIR
#define PAIR 0
#endif
#ifndef SCALED
#define SCALED 0
#endif
#ifndef STORE
#define STORE 0
#endif
#if STORE && !PAIR
#error "STORE needs PAIR"
#endif
#if STORE
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "f16_store.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer P { int pos[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
#if STORE
layout(std430, binding = 3) readonly buffer X1 { float x1[]; };
layout(std430, binding = 4) readonly buffer V { float vs[]; };
layout(std430, binding = 6) writeonly buffer K32 { float k32[]; };
layout(std430, binding = 6) writeonly buffer K16 { uint16_t k16[]; };
layout(std430, binding = 7) writeonly buffer V32 { float v32[]; };
layout(std430, binding = 7) writeonly buffer V16 { uint16_t v16[]; };
bool second = false;
float load_x(uint i) { return second ? x1[i] : x[i]; }
// i: element index in the cache (K) or in q_rope.
void store_o(uint i, float v) {
    if (!second) o[i] = v;
    else if (pc.u[7] != 0u) k16[(pc.t5 >> 1) + i] = uint16_t(f32_to_f16_bits(v));
    else k32[(pc.t5 >> 2) + i] = v;
}
void store_v(uint i, float v) {
    if (pc.u[7] != 0u) v16[(pc.t6 >> 1) + i] = uint16_t(f32_to_f16_bits(v));
    else v32[(pc.t6 >> 2) + i] = v;
}
#elif PAIR
layout(std430, binding = 3) readonly buffer X1 { float x1[]; };
layout(std430, binding = 6) writeonly buffer O1 { float o1[]; };
bool second = false;
float load_x(uint i) { return second ? x1[i] : x[i]; }
void store_o(uint i, float v) { if (second) o1[i] = v; else o[i] = v; }
#else
float load_x(uint i) { return x[i]; }
void store_o(uint i, float v) { o[i] = v; }
#endif

#if SCALED
layout(std430, binding = 8) readonly buffer F { float factors[]; };
#endif

// sin/cos of large angles lose accuracy on fast GPU paths: reduce modulo 2*pi
// first with a three-part constant (Cody-Waite).
vec2 cos_sin(float a) {
    float k = round(a * 0.15915494309189535);
    precise float r = fma(-k, 6.28125, a);
    r = fma(-k, 1.9353071693331003e-3, r);
    r = fma(-k, 1.0253131677018246e-11, r);
    return vec2(cos(r), sin(r));
}

void main() {
    uint N = pc.u[0], H = pc.u[1], Hd = pc.u[2], rot = pc.u[3];
    uint half_hd = (Hd + 1u) / 2u;  // pairs, the last one short when Hd is odd
    uint i = flat_invocation();
    uint xt = pc.t0, ot = pc.t4;
#if PAIR
    if (i >= N * H * half_hd) {
        i -= N * H * half_hd;
        H = pc.u[5];
        second = true;
        xt = pc.t2;
        ot = pc.t5;
    }
#endif
#if STORE
    // V: copy a pair of elements into the V cache.
    bool is_v = second && i >= N * H * half_hd;
    if (is_v) i -= N * H * half_hd;
#endif
    if (i >= N * H * half_hd) return;
    uint p = i % half_hd;
    uint rowhead = i / half_hd;  // n * H + h
    uint n = rowhead / H;
    uint xb = (xt >> 2) + rowhead * Hd;
    uint ob = (ot >> 2) + rowhead * Hd;
#if STORE
    if (second) {
        int ps = pos[(pc.t1 >> 2) + n];
        if (ps < 0 || uint(ps) >= pc.u[6]) {
            if (p == 0u) report_error(ERR_BAD_POSITION, uint(ps));
            return;
        }
        ob = (uint(ps) * H + rowhead % H) * Hd;  // the cache row, in elements (store_o adds the base)
        if (is_v) {
            uint vb = (pc.t3 >> 2) + rowhead * Hd;
            store_v(ob + 2u * p, vs[vb + 2u * p]);
            if (2u * p + 1u < Hd) store_v(ob + 2u * p + 1u, vs[vb + 2u * p + 1u]);
            return;
        }
    }
#endif
    uint half_rot = rot / 2u;
    if (p >= half_rot) {
        // not rotated: copy two elements beyond the rotated span
        uint e = pc.u[4] == 0u ? 2u * p : rot + 2u * (p - half_rot);
        store_o(ob + e, load_x(xb + e));
        if (e + 1u < Hd) store_o(ob + e + 1u, load_x(xb + e + 1u));
        return;
    }
    uint e0 = pc.u[4] == 0u ? 2u * p : p;
    uint e1 = pc.u[4] == 0u ? 2u * p + 1u : p + half_rot;
    float position = float(pos[(pc.t1 >> 2) + n]);
    float inv_freq = pow(pc.f[0], -float(2u * p) / float(rot));
#if SCALED
    inv_freq *= pc.f[1];
    if (pc.u[8] != 0u) inv_freq /= factors[(pc.t7 >> 2) + p];
#endif
    vec2 cs = cos_sin(position * inv_freq);
    float a = load_x(xb + e0), b = load_x(xb + e1);
    store_o(ob + e0, a * cs.x - b * cs.y);
    store_o(ob + e1, a * cs.y + b * cs.x);
}
