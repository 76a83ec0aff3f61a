#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// f32 -> Q8_0 (u[1] = 3) or Q4_0 (u[1] = 4), one invocation per 32-element
// block, rounding exactly as GGUF's reference quantizer. u[0] = blocks.
#include "common.glsl"
#include "f16_store.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(std430, binding = 1) readonly buffer S { float s[]; };
layout(std430, binding = 5) writeonly buffer O { uint16_t o[]; };

// lround: half away from zero.
int round_away(float v) {
    float t = trunc(v);
    precise float frac = abs(v - t);
    if (frac >= 0.5) t += sign(v);
    return int(t);
}

void main() {
    uint blk = flat_invocation();
    if (blk >= pc.u[0]) return;
    uint sb = (pc.t0 >> 2) + blk * 32u;
    float v[32];
    for (uint i = 0u; i < 32u; ++i) v[i] = s[sb + i];
    if (pc.u[1] == 3u) {
        float amax = 0.0;
        for (uint i = 0u; i < 32u; ++i) amax = max(amax, abs(v[i]));
        float d = div_rn(amax, 127.0);
        float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
        uint ob = (pc.t4 >> 1) + blk * 17u;
        o[ob] = uint16_t(f32_to_f16_bits(d));
        for (uint i = 0u; i < 16u; ++i) {
            precise float x0 = v[2u * i] * id;
            precise float x1 = v[2u * i + 1u] * id;
            uint q0 = uint(round_away(x0)) & 0xffu, q1 = uint(round_away(x1)) & 0xffu;
            o[ob + 1u + i] = uint16_t(q0 | (q1 << 8));
        }
    } else {
        float amax = 0.0, mx = 0.0;
        for (uint i = 0u; i < 32u; ++i)
            if (abs(v[i]) > amax) { amax = abs(v[i]); mx = v[i]; }
        float d = div_rn(mx, -8.0);
        float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
        uint ob = (pc.t4 >> 1) + blk * 9u;
        o[ob] = uint16_t(f32_to_f16_bits(d));
        uint q[16];
        for (uint j = 0u; j < 16u; ++j) {
            precise float x0 = v[j] * id;
            precise float x1 = v[j + 16u] * id;
            precise float y0 = x0 + 8.5;
            precise float y1 = x1 + 8.5;
            uint q0 = uint(min(15, int(y0)));
            uint q1 = uint(min(15, int(y1)));
            q[j] = q0 | (q1 << 4);
        }
        for (uint i = 0u; i < 8u; ++i) o[ob + 1u + i] = uint16_t(q[2u * i] | (q[2u * i + 1u] << 8));
    }
}
