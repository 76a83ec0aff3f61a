#version 450
#extension GL_GOOGLE_include_directive : require
// Causal attention for many query rows (prefill): a workgroup of 128 takes
// one head and a block of BQ = 32 query rows, streams the keys in tiles of
// BKV = 32 through shared memory (each key and value read once per block
// instead of once per row) and keeps an online softmax per row. Four
// invocations share a row: each scores 8 keys of a tile and accumulates
// every fourth dimension of the output. Head dim at most 64.
// u[0] = N, u[1] = H, u[2] = Hkv, u[3] = Hd, u[4] = C, u[5] = 1 for f16 caches;
// f[0] = scale; window and soft-cap as common.glsl says. Grid: x = query
// blocks, y = heads.
#include "common.glsl"
#include "load.glsl"
layout(local_size_x = 128) in;
const uint BQ = 32, BKV = 32, MAX_HD = 64;
const uint LD = MAX_HD + 1;  // padded rows: the 4 readers of a row hit different banks
layout(std430, binding = 1) readonly buffer Q { float q[]; };
layout(std430, binding = 2) readonly buffer K { uint kw[]; };
layout(std430, binding = 3) readonly buffer V { uint vw[]; };
layout(std430, binding = 4) readonly buffer P { int pos[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
DEFINE_LOADERS(kc, kw)
DEFINE_LOADERS(vc, vw)
shared float q_s[BQ * LD];
shared float k_s[BKV * LD];
shared float v_s[BKV * MAX_HD];
shared float p_s[BQ * (BKV + 1)];
shared float red[128];
shared int last_s[BQ];

void main() {
    uint N = pc.u[0], H = pc.u[1], Hkv = pc.u[2], Hd = pc.u[3], C = pc.u[4];
    uint dt = pc.u[5] != 0u ? DT_F16 : DT_F32;
    uint h = gl_WorkGroupID.y, n0 = gl_WorkGroupID.x * BQ;
    uint kvh = h / (H / Hkv);
    uint t = gl_LocalInvocationID.x;
    uint r = t >> 2, c = t & 3u;  // this invocation's row in the block and quarter
    uint n = n0 + r;
    uint qb = pc.t0 >> 2, ob = pc.t4 >> 2, pb = pc.t3 >> 2;
    uint kb = pc.t1, vb = pc.t2;
    uint row_stride = Hkv * Hd;

    // Row positions; -1 marks rows past N or with a bad position (they attend to nothing).
    int p = -1;
    if (n < N) {
        p = pos[pb + n];
        if (p < 0 || uint(p) >= C) {
            if (c == 0u) report_error(ERR_BAD_POSITION, uint(p));
            p = -1;
        }
    }
    if (c == 0u) last_s[r] = p;
    for (uint i = t; i < BQ * Hd; i += 128u) {
        uint rr = i / Hd, d = i % Hd;
        q_s[rr * LD + d] = n0 + rr < N ? q[qb + ((n0 + rr) * H + h) * Hd + d] : 0.0;
    }
    barrier();
    // Keys from the first of the earliest row's window (windows start in
    // position order) to the block's last position.
    int last = -1, first_p = 1 << 30;
    for (uint i = 0u; i < BQ; ++i) {
        last = max(last, last_s[i]);
        if (last_s[i] >= 0) first_p = min(first_p, last_s[i]);
    }
    int start = last >= 0 ? window_first(first_p) : 0;
    int lo = window_first(p);  // this row's first key

    float m = -1.0 / 0.0, l = 0.0;
    float acc[MAX_HD / 4];
    for (uint i = 0u; i < MAX_HD / 4u; ++i) acc[i] = 0.0;
    for (int j0 = start; j0 <= last; j0 += int(BKV)) {
        barrier();  // the previous tile's readers are done
        for (uint i = t; i < BKV * Hd; i += 128u) {
            uint jj = i / Hd, d = i % Hd;
            uint j = uint(j0) + jj;
            float kv = 0.0, vv = 0.0;
            // Rows past the block's last position may hold anything (NaN
            // included): they are never read, as 0 x NaN would not vanish.
            if (int(j) <= last) {
                uint e = j * row_stride + kvh * Hd + d;
                kv = kc_elem(dt, kb, e);
                vv = vc_elem(dt, vb, e);
            }
            k_s[jj * LD + d] = kv;
            v_s[jj * MAX_HD + d] = vv;
        }
        barrier();
        // Scores of keys j0 + 8c .. +7 for row r.
        float s[8];
        float mx = -1.0 / 0.0;
        for (uint i = 0u; i < 8u; ++i) {
            uint jj = c * 8u + i;
            float dot = 0.0;
            for (uint d = 0u; d < Hd; ++d) dot += q_s[r * LD + d] * k_s[jj * LD + d];
            s[i] = j0 + int(jj) <= p && j0 + int(jj) >= lo ? soft_cap(dot * pc.f[0]) : -1.0 / 0.0;
            mx = max(mx, s[i]);
        }
        red[t] = mx;
        barrier();
        float new_m = max(m, max(max(red[r * 4u], red[r * 4u + 1u]), max(red[r * 4u + 2u], red[r * 4u + 3u])));
        barrier();
        float sum = 0.0;
        for (uint i = 0u; i < 8u; ++i) {
            float e = new_m == -1.0 / 0.0 ? 0.0 : exp(s[i] - new_m);
            p_s[r * (BKV + 1u) + c * 8u + i] = e;
            sum += e;
        }
        red[t] = sum;
        barrier();
        float corr = new_m == -1.0 / 0.0 ? 1.0 : exp(m - new_m);
        l = l * corr + red[r * 4u] + red[r * 4u + 1u] + red[r * 4u + 2u] + red[r * 4u + 3u];
        m = new_m;
        for (uint i = 0u; 4u * i + c < Hd; ++i) {
            uint d = 4u * i + c;
            float a = acc[i] * corr;
            for (uint jj = 0u; jj < BKV; ++jj) a += p_s[r * (BKV + 1u) + jj] * v_s[jj * MAX_HD + d];
            acc[i] = a;
        }
    }
    if (n < N) {
        float inv = l > 0.0 ? 1.0 / l : 0.0;
        for (uint i = 0u; 4u * i + c < Hd; ++i) o[ob + (n * H + h) * Hd + 4u * i + c] = acc[i] * inv;
    }
}
