#version 450
#extension GL_GOOGLE_include_directive : require
// out[n, :] = table[ids[n], :]. One invocation per output element.
// u[0] = N, u[1] = D, u[2] = V, u[3] = table dtype.
#include "common.glsl"
#include "load.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, binding = 1) readonly buffer T { uint tw[]; };
layout(std430, binding = 2) readonly buffer I { int ids[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
DEFINE_LOADERS(table, tw)

void main() {
    uint i = flat_invocation();
    uint N = pc.u[0], D = pc.u[1], V = pc.u[2];
    if (i >= N * D) return;
    uint n = i / D, d = i % D;
    int id = ids[(pc.t1 >> 2) + n];
    if (id < 0 || uint(id) >= V) {
        report_error(ERR_BAD_ID, uint(id));
        o[(pc.t4 >> 2) + i] = 0.0;
        return;
    }
    o[(pc.t4 >> 2) + i] = table_elem(pc.u[3], pc.t0, uint(id) * D + d);
}
