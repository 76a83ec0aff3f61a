#version 450
#extension GL_GOOGLE_include_directive : require
// The output rows of attention split into key segments (attention_basic.comp
// with u[7] > 0), one workgroup per (query row, head) g: with M the largest
// of the segments' maxima and w = exp(max - M) per segment,
// out = sum(w acc) / sum(w l). Rows with no keys anywhere (bad positions)
// get zeros.
// u[0] = N x H, u[1] = Hd, u[2] = segments; binding 1: the partials
// ([segment][g][Hd + 2]: acc, max, sum), binding 5: out [N, H, Hd].
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 1) readonly buffer Part { float part[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };

void main() {
    uint NH = pc.u[0], Hd = pc.u[1], segments = pc.u[2];
    uint g = flat_group();
    if (g >= NH) return;
    uint t = gl_LocalInvocationID.x;
    uint pb = pc.t0 >> 2, stride = NH * (Hd + 2u);  // floats from one segment's partial of g to the next's
    uint at = pb + g * (Hd + 2u);
    float top = -1.0 / 0.0;
    for (uint z = 0u; z < segments; ++z) top = max(top, part[at + z * stride + Hd]);
    float total = 0.0;
    for (uint z = 0u; z < segments; ++z) {
        float l = part[at + z * stride + Hd + 1u];
        if (l > 0.0) total += l * exp(part[at + z * stride + Hd] - top);
    }
    float inv = total > 0.0 ? 1.0 / total : 0.0;
    uint ob = (pc.t4 >> 2) + g * Hd;
    for (uint d = t; d < Hd; d += 64u) {
        float a = 0.0;
        for (uint z = 0u; z < segments; ++z) {
            uint s = at + z * stride;
            if (part[s + Hd + 1u] > 0.0) a += part[s + d] * exp(part[s + Hd] - top);
        }
        o[ob + d] = a * inv;
    }
}
