#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// f32 -> f16 (u[1] = 1) or bf16 (u[1] = 2). u[0] = elements.
#include "common.glsl"
#include "f16_store.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer S { float s[]; };
layout(std430, binding = 5) writeonly buffer O { uint16_t o[]; };

void main() {
    uint i = flat_invocation();
    if (i >= pc.u[0]) return;
    float v = s[(pc.t0 >> 2) + i];
    uint h = pc.u[1] == 1u ? f32_to_f16_bits(v) : f32_to_bf16_bits(v);
    o[(pc.t4 >> 1) + i] = uint16_t(h);
}
