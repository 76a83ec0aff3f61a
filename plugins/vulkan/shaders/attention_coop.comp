#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
// Causal attention for many query rows (prefill) on tensor cores: a
// workgroup of four subgroups takes one head and BQ = 64 query rows (16 per
// subgroup) and streams the keys in tiles of BKV through shared memory as
// f16 (64 keys up to head dim 64, 32 keys above, so that the tiles of head
// dim 128 fit the same shared memory). Per tile each subgroup computes its
// 16 x BKV scores S = Q K^T as cooperative matrices (f32 accumulators), runs
// the online softmax on them (two invocations a row, BKV / 2 keys each),
// writes P as f16 and computes P V the same way, 64 output columns at a
// time; the output rows stay in registers (half of each 64 columns an
// invocation) and are rescaled as the running maximum grows. Used where the
// device has 16x16x16 f16 cooperative matrices, a subgroup size of 32,
// HD <= 128, and the caches are f16 (the f32-cache contract does not allow
// f16 compute).
// u[0] = N, u[1] = H, u[2] = Hkv, u[3] = Hd (= HD), u[4] = C, u[5] = 1 for
// f16 caches; f[0] = scale; window and soft-cap as common.glsl says. Grid: x = query blocks, y = heads.
// OUTH=1: the output is stored as f16, for a consumer that reads it so.
#ifndef OUTH
#define OUTH 0
#endif
#if OUTH
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "load.glsl"
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint HD = 64u;  // head dim, a multiple of 16, at most 128
const uint BQ = 64u, NT = HD / 16u;
const uint BKV = HD > 64u ? 32u : 64u;  // keys a tile
const uint KPI = BKV / 2u;              // keys of a tile each invocation's softmax takes
const uint NCH = (HD + 63u) / 64u;      // 64-column chunks of the output
const uint LDK = HD + 8u;               // f16 row stride of the Q/K/V tiles: 16-byte aligned rows
const uint LDP = BKV + 8u;              // f16 row stride of the P tile
const uint LDS = 64u + 4u;              // f32 row stride of the score / P V tiles
// Tile storage, sized for the largest use: BKV x LDK is 64 x 72 at head dim
// 64 and 32 x 136 at 128; P is 64 x LDP.
const uint KV_TILE = 64u * 72u;
layout(std430, binding = 1) readonly buffer Q { float q[]; };
layout(std430, binding = 2) readonly buffer K { uint kw[]; };
layout(std430, binding = 3) readonly buffer V { uint vw[]; };
layout(std430, binding = 4) readonly buffer P { int pos[]; };
#if OUTH
layout(std430, binding = 5) writeonly buffer O { float16_t oh[]; };
#define STORE_O(I, V) oh[(pc.t4 >> 1) + (I)] = float16_t(V)
#else
layout(std430, binding = 5) writeonly buffer O { float o[]; };
#define STORE_O(I, V) o[(pc.t4 >> 2) + (I)] = (V)
#endif
DEFINE_LOADERS(kc, kw)
DEFINE_LOADERS(vc, vw)
shared float16_t k_s[KV_TILE];  // key tile (first the query block, on its way into registers)
shared float16_t v_s[KV_TILE];  // value tile
shared float16_t p_s[KV_TILE];  // each subgroup's 16 x BKV probabilities
shared float s_s[4u * 16u * LDS];      // each subgroup's scores, then its P V tile
shared float x_s[128];                 // the two halves of a row exchange maxima and sums
shared int last_s[4];

void main() {
    uint N = pc.u[0], H = pc.u[1], Hkv = pc.u[2], C = pc.u[4];
    uint dt = pc.u[5] != 0u ? DT_F16 : DT_F32;
    uint h = gl_WorkGroupID.y, n0 = gl_WorkGroupID.x * BQ;
    uint kvh = h / (H / Hkv);
    uint t = gl_LocalInvocationID.x, sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint r = lane >> 1, half_ = lane & 1u;  // this invocation's row in the subgroup's 16 and key / dim half
    uint n = n0 + sg * 16u + r;
    uint qb = pc.t0 >> 2, pb = pc.t3 >> 2;
    uint kb = pc.t1, vb = pc.t2;
    uint row_stride = Hkv * HD;
    bool words = dt == DT_F16 && ((kb | vb) & 3u) == 0u;  // HD is even, so rows stay word aligned

    // Row position; -1 marks rows past N or with a bad position (they attend to nothing).
    int p = -1;
    if (n < N) {
        p = pos[pb + n];
        if (p < 0 || uint(p) >= C) {
            if (half_ == 0u) report_error(ERR_BAD_POSITION, uint(p));
            p = -1;
        }
    }
    // The block's last key: the largest position of its rows.
    if (lane == 0u) last_s[sg] = -1;
    barrier();
    atomicMax(last_s[sg], p);
    // The scaled query block, f16, through k_s into registers, BKV rows at a time.
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qm[NT];
    [[unroll]] for (uint q0 = 0u; q0 < BQ; q0 += BKV) {
        for (uint i = t; i < BKV * HD; i += 128u) {
            uint rr = i / HD, d = i % HD;
            uint qn = n0 + q0 + rr;
            k_s[rr * LDK + d] = float16_t(qn < N ? q[qb + (qn * H + h) * HD + d] * pc.f[0] : 0.0);
        }
        barrier();
        if (sg * 16u >= q0 && sg * 16u < q0 + BKV)
            [[unroll]] for (uint i = 0u; i < NT; ++i) coopMatLoadNV(qm[i], k_s, (sg * 16u - q0) * LDK + 16u * i, LDK, false);
        barrier();
    }
    int last = max(max(last_s[0], last_s[1]), max(last_s[2], last_s[3]));

    float m = -1.0 / 0.0, l = 0.0;
    float acc[64];  // NCH chunks of 32: dims 64 ch + 32 half_ + i
    [[unroll]] for (uint i = 0u; i < 64u; ++i) acc[i] = 0.0;
    uint srow = (sg * 16u + r) * LDS, prow = (sg * 16u + r) * LDP;
    int lo = window_first(p);  // this row's first key (keys before it are masked)
    for (int j0 = 0; j0 <= last; j0 += int(BKV)) {
        barrier();  // the previous tile's readers (and the query loads) are done
        if (words) {
            // f16 caches at 4-byte aligned offsets: two elements a load.
            for (uint i = t; i < BKV * HD / 2u; i += 128u) {
                uint jj = i / (HD / 2u), d = 2u * (i % (HD / 2u));
                uint j = uint(j0) + jj;
                uint e = (j * row_stride + kvh * HD + d) >> 1;
                // Rows past the block's last position may hold anything (NaN
                // included): they are never read, as 0 x NaN would not vanish.
                bool live = int(j) <= last;
                f16vec2 kv = live ? unpackFloat2x16(kw[(kb >> 2) + e]) : f16vec2(0.0);
                f16vec2 vv = live ? unpackFloat2x16(vw[(vb >> 2) + e]) : f16vec2(0.0);
                k_s[jj * LDK + d] = kv.x;
                k_s[jj * LDK + d + 1u] = kv.y;
                v_s[jj * LDK + d] = vv.x;
                v_s[jj * LDK + d + 1u] = vv.y;
            }
        } else {
            for (uint i = t; i < BKV * HD; i += 128u) {
                uint jj = i / HD, d = i % HD;
                uint j = uint(j0) + jj;
                float kv = 0.0, vv = 0.0;
                if (int(j) <= last) {  // see above
                    uint e = j * row_stride + kvh * HD + d;
                    kv = kc_elem(dt, kb, e);
                    vv = vc_elem(dt, vb, e);
                }
                k_s[jj * LDK + d] = float16_t(kv);
                v_s[jj * LDK + d] = float16_t(vv);
            }
        }
        barrier();
        // S = Q K^T: K's tile read column-major is K^T.
        [[unroll]] for (uint c = 0u; c < BKV / 16u; ++c) {
            fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> s = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
            [[unroll]] for (uint i = 0u; i < NT; ++i) {
                fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> kt;
                coopMatLoadNV(kt, k_s, (16u * c) * LDK + 16u * i, LDK, true);
                s = coopMatMulAddNV(qm[i], kt, s);
            }
            coopMatStoreNV(s, s_s, sg * 16u * LDS + 16u * c, LDS, false);
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        // Online softmax: this invocation's KPI keys of its row.
        float sv[32];
        float mx = -1.0 / 0.0;
        [[unroll]] for (uint i = 0u; i < KPI; ++i) {
            uint jj = half_ * KPI + i;
            sv[i] = j0 + int(jj) <= p && j0 + int(jj) >= lo ? soft_cap(s_s[srow + jj]) : -1.0 / 0.0;
            mx = max(mx, sv[i]);
        }
        x_s[sg * 32u + lane] = mx;
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        float new_m = max(m, max(mx, x_s[sg * 32u + (lane ^ 1u)]));
        float sum = 0.0;
        [[unroll]] for (uint i = 0u; i < KPI; ++i) {
            float e = new_m == -1.0 / 0.0 ? 0.0 : exp(sv[i] - new_m);
            p_s[prow + half_ * KPI + i] = float16_t(e);
            sum += e;
        }
        subgroupBarrier();  // both halves read the maxima before the sums replace them
        x_s[sg * 32u + lane] = sum;
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        float corr = new_m == -1.0 / 0.0 ? 1.0 : exp(m - new_m);
        l = l * corr + sum + x_s[sg * 32u + (lane ^ 1u)];
        m = new_m;
        // P V into s_s (the scores are consumed), 64 columns at a time, then
        // into the register rows.
        [[unroll]] for (uint ch = 0u; ch < NCH; ++ch) {
            [[unroll]] for (uint c = 0u; c < 4u; ++c) {
                if (64u * ch + 16u * c < HD) {
                    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> pv = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
                    [[unroll]] for (uint i = 0u; i < BKV / 16u; ++i) {
                        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> pm, vm;
                        coopMatLoadNV(pm, p_s, (sg * 16u) * LDP + 16u * i, LDP, false);
                        coopMatLoadNV(vm, v_s, (16u * i) * LDK + 64u * ch + 16u * c, LDK, false);
                        pv = coopMatMulAddNV(pm, vm, pv);
                    }
                    coopMatStoreNV(pv, s_s, sg * 16u * LDS + 16u * c, LDS, false);
                }
            }
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            [[unroll]] for (uint i = 0u; i < 32u; ++i)
                if (64u * ch + half_ * 32u + i < HD) acc[32u * ch + i] = acc[32u * ch + i] * corr + s_s[srow + half_ * 32u + i];
            subgroupBarrier();  // the next chunk overwrites s_s
        }
    }
    if (n < N) {
        float inv = l > 0.0 ? 1.0 / l : 0.0;
        [[unroll]] for (uint ch = 0u; ch < NCH; ++ch)
            [[unroll]] for (uint i = 0u; i < 32u; ++i)
                if (64u * ch + half_ * 32u + i < HD)
                    STORE_O((n * H + h) * HD + 64u * ch + half_ * 32u + i, acc[32u * ch + i] * inv);
    }
}
