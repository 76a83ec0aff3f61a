#version 450
#extension GL_GOOGLE_include_directive : require
// add / mul / swiglu over n elements; b may broadcast along the last dim.
// u[0] = n, u[1] = broadcast width (0 = same shape), u[2] = 0 add, 1 mul,
// 2 swiglu, 3 geglu (GELU's tanh form), 4 softcap (b unused, f[0] = cap)
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
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer A { float a[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
#if OUTH
layout(std430, binding = 5) writeonly buffer O { uint16_t oh[]; };
#else
layout(std430, binding = 5) writeonly buffer O { float o[]; };
#endif

void main() {
    uint i = flat_invocation();
    if (i >= pc.u[0]) return;
    float x = a[(pc.t0 >> 2) + i];
    uint j = pc.u[1] != 0u ? i % pc.u[1] : i;
    float r;
    if (pc.u[2] == 4u) {
        r = pc.f[0] * tanh_sat(x / pc.f[0]);
    } else {
        float y = b[(pc.t1 >> 2) + j];
        if (pc.u[2] == 0u) r = x + y;
        else if (pc.u[2] == 1u) r = x * y;
        else if (pc.u[2] == 2u) r = x / (1.0 + exp(-x)) * y;
        else r = 0.5 * x * (1.0 + tanh_sat(0.7978845608 * x * (1.0 + 0.044715 * x * x))) * y;
    }
#if OUTH
    oh[(pc.t4 >> 1) + i] = uint16_t(f32_to_f16_bits(r));
#else
    o[(pc.t4 >> 2) + i] = r;
#endif
}
