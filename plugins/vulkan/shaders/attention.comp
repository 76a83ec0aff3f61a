#version 450
#extension GL_GOOGLE_include_directive : require
// Causal attention over a KV cache, one workgroup per (query row, head),
// streaming the keys in tiles of T = WG / L with an online softmax so any
// context length fits in shared memory. Built for decode latency: every
// global load of a tile (keys and values) is issued at the tile's start, q
// stays in registers, and a tile costs two barriers (no reduction trees).
//  - score phase: L invocations per key, each a dot over its columns of q.k
//    (a column is 4 consecutive dims when HD % 4 == 0, else 1);
//  - value phase: G = WG / NC groups of invocations split the tile's keys,
//    each invocation one column with its own running max and sum (online
//    softmax per invocation), merged across groups at the end.
// Specialisation (host computes them, see vk_lowering.cpp): WG, HD = head
// dim, L = lanes per key (a power of two with ceil(NC / L) <= MAX_CPL and
// KPT * CPT <= MAX_KV).
// u[0] = N, u[1] = H, u[2] = Hkv, u[3] = Hd, u[4] = C, u[5] = 1 for f16 caches;
// f[0] = scale; window and soft-cap as common.glsl says.
#include "common.glsl"
#include "load.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint HD = 64;
layout(constant_id = 2) const uint L = 2;
const uint CW = HD % 4u == 0u ? 4u : 1u;    // dims per column
const uint NC = HD / CW;                     // columns
const uint T = WG / L;                       // keys per tile
const uint G = NC <= WG ? WG / NC : 1u;      // key groups of the value phase
const uint CPL = (NC + L - 1u) / L;          // columns per lane (score phase)
const uint CPT = (NC + WG - 1u) / WG;        // columns per invocation (value phase)
const uint KPT = (T + G - 1u) / G;           // keys per invocation and tile (value phase)
const uint MAX_CPL = 8, MAX_CPT = 4, MAX_KV = 16;
layout(std430, binding = 1) readonly buffer Q { float q[]; };
layout(std430, binding = 2) readonly buffer K { uint kw[]; };
layout(std430, binding = 2) readonly buffer K4 { vec4 k4[]; };  // same data
layout(std430, binding = 2) readonly buffer K2 { uvec2 k2[]; };  // same data (f16 caches)
layout(std430, binding = 3) readonly buffer V { uint vw[]; };
layout(std430, binding = 3) readonly buffer V4 { vec4 v4[]; };  // same data
layout(std430, binding = 3) readonly buffer V2 { uvec2 v2[]; };  // same data (f16 caches)
layout(std430, binding = 4) readonly buffer P { int pos[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
DEFINE_LOADERS(kc, kw)
DEFINE_LOADERS(vc, vw)
shared float part[WG];   // score-phase partial dots
shared float s_s[WG];    // scores of the tile
shared float m_s[WG], l_s[WG];
shared vec4 acc_s[WG];

// Column `c` (CW dims from element e) of a cache row; mode 0: f32 vec4, 1: f16
// word pairs (one 8-byte load), 2: any.
vec4 load_k(uint mode, uint dt, uint base, uint e) {
    if (CW == 1u) return vec4(kc_elem(dt, base, e), 0.0, 0.0, 0.0);
    if (mode == 0u) return k4[((base >> 2) + e) >> 2];
    if (mode == 1u) {
        uvec2 w = k2[((base >> 2) + (e >> 1)) >> 1];
        return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
    }
    return vec4(kc_elem(dt, base, e), kc_elem(dt, base, e + 1u), kc_elem(dt, base, e + 2u), kc_elem(dt, base, e + 3u));
}
vec4 load_v(uint mode, uint dt, uint base, uint e) {
    if (CW == 1u) return vec4(vc_elem(dt, base, e), 0.0, 0.0, 0.0);
    if (mode == 0u) return v4[((base >> 2) + e) >> 2];
    if (mode == 1u) {
        uvec2 w = v2[((base >> 2) + (e >> 1)) >> 1];
        return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
    }
    return vec4(vc_elem(dt, base, e), vc_elem(dt, base, e + 1u), vc_elem(dt, base, e + 2u), vc_elem(dt, base, e + 3u));
}
uint load_mode(uint dt, uint base) {
    if (dt == DT_F32 && (base & 15u) == 0u) return 0u;
    if (dt == DT_F16 && (base & 7u) == 0u) return 1u;
    return 2u;
}

void main() {
    uint N = pc.u[0], H = pc.u[1], Hkv = pc.u[2], C = pc.u[4];
    uint dt = pc.u[5] != 0u ? DT_F16 : DT_F32;
    uint g = flat_group();
    if (g >= N * H) return;
    uint n = g / H, h = g % H;
    uint kvh = h / (H / Hkv);
    uint t = gl_LocalInvocationID.x;
    // q in registers: this lane's columns of the score phase.
    uint lane = t % L, kk = t / L;
    uint qb = (pc.t0 >> 2) + g * HD;
    vec4 qr[MAX_CPL];
    for (uint i = 0u; i < CPL; ++i) {
        uint c = lane + i * L;
        qr[i] = vec4(0.0);
        if (c < NC)
            for (uint k = 0u; k < CW; ++k) qr[i][k] = q[qb + c * CW + k];
    }
    int p = pos[(pc.t3 >> 2) + n];
    uint ob = (pc.t4 >> 2) + g * HD;
    if (p < 0 || uint(p) >= C) {
        if (t == 0u) report_error(ERR_BAD_POSITION, uint(p));
        for (uint d = t; d < HD; d += WG) o[ob + d] = 0.0;
        return;
    }

    uint row_stride = Hkv * HD;
    // ATTENTION_SEQS: the row's own sequence of the stacked cache.
    uint base = seq_base(p);
    p -= int(base);
    uint kb = pc.t1 + base * row_stride * (dt == DT_F16 ? 2u : 4u), vb = pc.t2 + base * row_stride * (dt == DT_F16 ? 2u : 4u);
    uint kmode = load_mode(dt, kb), vmode = load_mode(dt, vb);
    uint head = kvh * HD;
    // Value phase: this invocation's group and columns.
    uint gi = NC <= WG ? t / NC : 0u;
    bool v_active = gi < G;
    float m = -1.0 / 0.0, l = 0.0;
    vec4 acc[MAX_CPT];
    for (uint ci = 0u; ci < CPT; ++ci) acc[ci] = vec4(0.0);
    uint last = uint(p);
    for (uint j0 = uint(window_first(p)); j0 <= last; j0 += T) {
        uint cnt = min(T, last + 1u - j0);
        // Issue the tile's key and value loads together.
        vec4 kr[MAX_CPL];
        for (uint i = 0u; i < CPL; ++i) {
            uint c = lane + i * L;
            kr[i] = c < NC && kk < cnt ? load_k(kmode, dt, kb, (j0 + kk) * row_stride + head + c * CW) : vec4(0.0);
        }
        vec4 vr[MAX_KV];
        for (uint r = 0u; r < KPT; ++r) {
            uint jj = gi + r * G;
            for (uint ci = 0u; ci < CPT; ++ci) {
                uint c = NC <= WG ? t % NC : t + ci * WG;
                vr[r * CPT + ci] = v_active && jj < cnt && c < NC
                                       ? load_v(vmode, dt, vb, (j0 + jj) * row_stride + head + c * CW)
                                       : vec4(0.0);
            }
        }
        float pd = 0.0;
        for (uint i = 0u; i < CPL; ++i) pd += dot(qr[i], kr[i]);
        part[t] = pd;
        barrier();
        if (t < T) {
            float qk = 0.0;
            for (uint i = 0u; i < L; ++i) qk += part[t * L + i];
            s_s[t] = t < cnt ? soft_cap(qk * pc.f[0]) : -1.0 / 0.0;
        }
        barrier();
        // Online softmax over this invocation's keys of the tile.
        float sr[MAX_KV];
        float mt = m;
        for (uint r = 0u; r < KPT; ++r) {
            uint jj = gi + r * G;
            sr[r] = jj < cnt ? s_s[jj] : -1.0 / 0.0;
            mt = max(mt, sr[r]);
        }
        float corr = mt == m ? 1.0 : exp(m - mt);
        l *= corr;
        for (uint ci = 0u; ci < CPT; ++ci) acc[ci] *= corr;
        for (uint r = 0u; r < KPT; ++r) {
            uint jj = gi + r * G;
            if (jj < cnt) {
                float pj = exp(sr[r] - mt);
                l += pj;
                for (uint ci = 0u; ci < CPT; ++ci) acc[ci] += pj * vr[r * CPT + ci];
            }
        }
        m = mt;
        // The next tile's first barrier orders these reads of s_s before its writes.
    }
    if (G > 1u) {
        // Merge the groups: rescale each to the common max.
        if (v_active && t % NC == 0u) { m_s[gi] = m; l_s[gi] = l; }
        barrier();
        float M = -1.0 / 0.0;
        for (uint g2 = 0u; g2 < G; ++g2) M = max(M, m_s[g2]);
        float f = m == M ? 1.0 : exp(m - M);
        acc_s[t] = v_active ? acc[0] * f : vec4(0.0);
        barrier();
        if (t < NC) {
            float lt = 0.0;
            vec4 a = vec4(0.0);
            for (uint g2 = 0u; g2 < G; ++g2) {
                lt += m_s[g2] == M ? l_s[g2] : l_s[g2] * exp(m_s[g2] - M);
                a += acc_s[g2 * NC + t];
            }
            float inv = 1.0 / lt;
            for (uint k = 0u; k < CW; ++k) o[ob + t * CW + k] = a[k] * inv;
        }
        return;
    }
    float inv = 1.0 / l;
    for (uint ci = 0u; ci < CPT; ++ci) {
        uint c = t + ci * WG;
        if (c < NC)
            for (uint k = 0u; k < CW; ++k) o[ob + c * CW + k] = acc[ci][k] * inv;
    }
}
