#version 450
#extension GL_GOOGLE_include_directive : require
// Causal attention over a KV cache, one workgroup per (query row, head),
// streaming the keys in tiles of WG with an online softmax so any context
// length fits in shared memory. The plain variant, for CPU implementations
// of Vulkan (lavapipe): compact code that their compilers build in a few
// milliseconds (attention.comp's unrolled decode path takes ~40 ms there,
// paid at every start because they keep no pipeline cache).
// u[0] = N, u[1] = H, u[2] = Hkv, u[3] = Hd, u[4] = C, u[5] = 1 for f16 caches;
// f[0] = scale; window and soft-cap as common.glsl says.
// u[7] = S > 0 splits the keys into segments of S (llvmpipe ends a shader's
// loops after 65535 iterations in all, so long caches must be split there):
// workgroup z takes keys [z S, z S + S) and writes its partial softmax to
// binding 6 at ((z N H + g) (Hd + 2)): the unnormalised sum of weighted V
// rows, then the scores' max and the sum of their exponentials (-inf and 0
// when it has no keys); attention_merge.comp combines the segments.
#include "common.glsl"
#include "load.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
const uint MAX_HD = 512;
const uint ACC = MAX_HD / 32;  // accumulators per invocation for WG >= 32
layout(std430, binding = 1) readonly buffer Q { float q[]; };
layout(std430, binding = 2) readonly buffer K { uint kw[]; };
layout(std430, binding = 2) readonly buffer K4 { vec4 k4[]; };  // same data
layout(std430, binding = 3) readonly buffer V { uint vw[]; };
layout(std430, binding = 4) readonly buffer P { int pos[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
layout(std430, binding = 6) writeonly buffer Part { float part[]; };
DEFINE_LOADERS(kc, kw)
DEFINE_LOADERS(vc, vw)
shared float q_s[MAX_HD];
shared float p_s[WG];
shared float red[WG];

float reduce_max(float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k) red[t] = max(red[t], red[t + k]);
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

float reduce_sum(float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main() {
    uint N = pc.u[0], H = pc.u[1], Hkv = pc.u[2], Hd = pc.u[3], C = pc.u[4];
    uint dt = pc.u[5] != 0u ? DT_F16 : DT_F32;
    uint g = flat_group();
    if (g >= N * H) return;
    uint n = g / H, h = g % H;
    uint kvh = h / (H / Hkv);
    uint t = gl_LocalInvocationID.x;
    int p = pos[(pc.t3 >> 2) + n];
    uint ob = (pc.t4 >> 2) + g * Hd;
    uint S = pc.u[7], z = gl_WorkGroupID.z;
    uint pb = (pc.t5 >> 2) + (z * N * H + g) * (Hd + 2u);  // this segment's partial (S > 0)
    bool bad = p < 0 || uint(p) >= C;
    // ATTENTION_SEQS: the row's own sequence of the stacked cache.
    uint base = bad ? 0u : seq_base(p);
    p -= int(base);
    // This workgroup's keys: first..last, none when first > last.
    int first = bad ? 1 : window_first(p), last_key = bad ? 0 : p;
    if (S > 0u) {
        first = max(first, int(z * S));
        last_key = min(last_key, int(z * S + S) - 1);
    }
    if (bad && t == 0u) report_error(ERR_BAD_POSITION, uint(p));
    if (first > last_key) {
        // Bad positions give zeros (attention_merge.comp: no keys anywhere).
        if (S == 0u) {
            for (uint d = t; d < Hd; d += WG) o[ob + d] = 0.0;
        } else {
            for (uint d = t; d < Hd; d += WG) part[pb + d] = 0.0;
            if (t == 0u) { part[pb + Hd] = -1.0 / 0.0; part[pb + Hd + 1u] = 0.0; }
        }
        return;
    }
    uint qb = (pc.t0 >> 2) + g * Hd;
    for (uint d = t; d < Hd; d += WG) q_s[d] = q[qb + d];
    barrier();

    uint row_stride = Hkv * Hd;
    uint kb = pc.t1 + base * row_stride * (dt == DT_F16 ? 2u : 4u), vb = pc.t2 + base * row_stride * (dt == DT_F16 ? 2u : 4u);
    // Small heads: spread the keys of the value sum over WG / Hd groups of invocations.
    uint G = 2u * Hd <= WG ? WG / Hd : 1u;
    bool vec_keys = dt == DT_F32 && (kb & 15u) == 0u && (Hd & 3u) == 0u && (row_stride & 3u) == 0u;
    float m = -1.0 / 0.0, l = 0.0;
    float acc[ACC];
    for (uint i = 0u; i < ACC; ++i) acc[i] = 0.0;
    uint last = uint(last_key);
    for (uint j0 = uint(first); j0 <= last; j0 += WG) {
        uint j = j0 + t;
        float s = -1.0 / 0.0;
        if (j <= last) {
            uint e = j * row_stride + kvh * Hd;
            float qk = 0.0;
            if (vec_keys) {
                // f32 cache rows 16-byte aligned: whole vec4 loads.
                uint e4 = ((kb >> 2) + e) >> 2;
                for (uint d = 0u; d < Hd; d += 4u)
                    qk += dot(vec4(q_s[d], q_s[d + 1u], q_s[d + 2u], q_s[d + 3u]), k4[e4 + d / 4u]);
            } else {
                for (uint d = 0u; d < Hd; ++d) qk += q_s[d] * kc_elem(dt, kb, e + d);
            }
            s = soft_cap(qk * pc.f[0]);
        }
        float new_m = max(m, reduce_max(s));
        float pj = j <= last ? exp(s - new_m) : 0.0;
        p_s[t] = pj;
        float corr = exp(m - new_m);
        l = l * corr + reduce_sum(pj);  // reduce_sum's barriers also publish p_s
        m = new_m;
        uint cnt = min(WG, last + 1u - j0);
        if (G > 1u) {
            // Key groups: invocation t sums every G-th key of the tile for dimension t % Hd.
            if (t < G * Hd) {
                float a = acc[0] * corr;
                for (uint jj = t / Hd; jj < cnt; jj += G)
                    a += p_s[jj] * vc_elem(dt, vb, (j0 + jj) * row_stride + kvh * Hd + t % Hd);
                acc[0] = a;
            }
        } else for (uint i = 0u; i * WG + t < Hd; ++i) {
            uint d = i * WG + t;
            float a = acc[i] * corr;
            for (uint jj = 0u; jj < cnt; ++jj)
                a += p_s[jj] * vc_elem(dt, vb, (j0 + jj) * row_stride + kvh * Hd + d);
            acc[i] = a;
        }
        barrier();
    }
    // A segment leaves its sums unnormalised, with m and l.
    float inv = S == 0u ? 1.0 / l : 1.0;
    if (S > 0u && t == 0u) { part[pb + Hd] = m; part[pb + Hd + 1u] = l; }
    if (G > 1u) {
        // Every group's sum was scaled by the same corrections: add them up.
        red[t] = t < G * Hd ? acc[0] : 0.0;
        barrier();
        if (t < Hd) {
            float a = 0.0;
            for (uint g2 = 0u; g2 < G; ++g2) a += red[g2 * Hd + t];
            if (S == 0u) o[ob + t] = a * inv;
            else part[pb + t] = a;
        }
        return;
    }
    for (uint i = 0u; i * WG + t < Hd; ++i) {
        if (S == 0u) o[ob + i * WG + t] = acc[i] * inv;
        else part[pb + i * WG + t] = acc[i];
    }
}
