#version 450
#extension GL_GOOGLE_include_directive : require
// convert any storage dtype to f32. u[0] = elements, u[1] = source dtype.
#include "common.glsl"
#include "load.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer S { uint sw[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
DEFINE_LOADERS(src, sw)

void main() {
    uint i = flat_invocation();
    if (i >= pc.u[0]) return;
    o[(pc.t4 >> 2) + i] = src_elem(pc.u[1], pc.t0, i);
}
