#version 450
#extension GL_GOOGLE_include_directive : require
// out[n, m] = dot(x[n, :], W[m, :]) (+ bias[m]) for many tokens (prefill):
// a register-tiled GEMM. A workgroup of 256 computes a BM x BN tile of the
// output; each invocation a TM x TN micro-tile. Per step of BK = 32 (one
// quantization block) W's tile is dequantized into shared memory once and
// x's tile is staged next to it, both k-major so the inner loop reads
// consecutive words.
// WTYPE: hetero_dtype of W. u[0] = N, u[1] = M, u[2] = K, u[3] = 1: add bias[m], 2: add a residual [N, M] (a fused ADD).
#include "common.glsl"
#include "load.glsl"
layout(local_size_x = 256) in;
const uint BM = 64, BN = 64, BK = 32, TM = 4, TN = 4;
const uint PAD = 4;  // breaks bank conflicts of the k-major stores
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer Wt { uint ww[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(std430, binding = 5) writeonly buffer O { float o[]; };
DEFINE_LOADERS(w, ww)
shared float ws[BK][BM + PAD];
shared float xs[BK][BN + PAD];

void main() {
    uint N = pc.u[0], M = pc.u[1], K = pc.u[2];
    uint m0 = gl_WorkGroupID.x * BM, n0 = gl_WorkGroupID.y * BN;
    uint t = gl_LocalInvocationID.x;
    uint tx = t % 16u, ty = t / 16u;
    uint xb = pc.t0 >> 2;
    uint wbase = pc.t1;
    // Loader roles: 4 invocations per row of a tile, 8 consecutive k each.
    uint lr = t / 4u, lp = t % 4u;
    float acc[TN][TM];
    for (uint j = 0u; j < TN; ++j)
        for (uint i = 0u; i < TM; ++i) acc[j][i] = 0.0;

    for (uint k0 = 0u; k0 < K; k0 += BK) {
        // W tile: row m0 + lr, k in [k0 + 8 lp, +8) (Q4_0 splits by nibble instead).
        uint m = m0 + lr;
        if (m < M) {
#if WTYPE == 4
            uint blk = wbase + (m * (K / 32u) + k0 / 32u) * Q4_0_BYTES;
            float d = unpackHalf2x16(w_u16(blk)).x;
            for (uint b = 0u; b < 4u; b += 2u) {
                uint v = w_u16(blk + 2u + lp * 4u + b);
                ws[lp * 4u + b][lr] = d * float(int(v & 15u) - 8);
                ws[lp * 4u + b + 16u][lr] = d * float(int((v >> 4) & 15u) - 8);
                ws[lp * 4u + b + 1u][lr] = d * float(int((v >> 8) & 15u) - 8);
                ws[lp * 4u + b + 17u][lr] = d * float(int(v >> 12) - 8);
            }
#elif WTYPE == 3
            uint blk = wbase + (m * (K / 32u) + k0 / 32u) * Q8_0_BYTES;
            float d = unpackHalf2x16(w_u16(blk)).x;
            for (uint b = 0u; b < 8u; b += 2u) {
                uint v = w_u16(blk + 2u + lp * 8u + b);
                ws[lp * 8u + b][lr] = d * float(int(v << 24) >> 24);
                ws[lp * 8u + b + 1u][lr] = d * float(int(v << 16) >> 24);
            }
#elif WTYPE == 7 || WTYPE == 8
            // K-quants: a step of 32 is sub-block j of one super-block; this
            // invocation's 8 elements are its quant bytes 8lp.. (low nibbles
            // for even j, high for odd; Q5_K's fifth bit: bit j of qh[8lp..]).
            // Its 6-bit scale and min: see load.glsl.
            uint blk = wbase + (m * (K / 256u) + k0 / 256u) * (WTYPE == 8 ? Q5_K_BYTES : Q4_K_BYTES);
            uint j = (k0 >> 5) & 7u;
            uint a = w_u8(blk + 4u + (j & 3u)), bm = w_u8(blk + 8u + (j & 3u)), c = w_u8(blk + 12u + (j & 3u));
            uint sc = HETERO_KQ_SCALE(a, c, j), mn = HETERO_KQ_MIN(bm, c, j);
            vec2 dm = unpackHalf2x16(w_u32(blk));
            float d = dm.x * float(sc), o = dm.y * float(mn);
            for (uint b = 0u; b < 8u; b += 4u) {
                uint q = (w_u32(blk + (WTYPE == 8 ? 48u : 16u) + 32u * (j >> 1) + lp * 8u + b) >> (4u * (j & 1u))) & 0x0f0f0f0fu;
#if WTYPE == 8
                q |= ((w_u32(blk + 16u + lp * 8u + b) >> j) & 0x01010101u) << 4;
#endif
                for (uint e = 0u; e < 4u; ++e) ws[lp * 8u + b + e][lr] = d * float((q >> (8u * e)) & 0xffu) - o;
            }
#elif WTYPE == 9
            // Q6_K: step j is run c = j % 4 of half h = j / 4 (elements
            // 128h + 32c + l): low 4 bits in ql (nibble c / 2 of byte
            // 64h + 32(c % 2) + l), top 2 at bits 2c of qh[32h + l]; columns
            // 8lp..8lp+7 share scale 8h + 2c + lp / 2.
            uint blk = wbase + (m * (K / 256u) + k0 / 256u) * Q6_K_BYTES;
            uint j = (k0 >> 5) & 7u, h = j >> 2, c = j & 3u;
            float d = unpackHalf2x16(w_u16(blk + 208u)).x * float(int(w_u8(blk + 192u + 8u * h + 2u * c + (lp >> 1)) << 24) >> 24);
            for (uint b = 0u; b < 8u; b += 4u) {
                uint q = (w_u32(blk + 64u * h + 32u * (c & 1u) + lp * 8u + b) >> (4u * (c >> 1))) & 0x0f0f0f0fu;
                q |= ((w_u32(blk + 128u + 32u * h + lp * 8u + b) >> (2u * c)) & 0x03030303u) << 4;
                for (uint e = 0u; e < 4u; ++e) ws[lp * 8u + b + e][lr] = d * float(int((q >> (8u * e)) & 0xffu) - 32);
            }
#elif (WTYPE >= 10 && WTYPE <= 13) || WTYPE == 16
            // Q4_1, Q5_0, Q5_1, IQ4_NL, E0M4: elements 8lp..8lp+7 of the block are
            // the low (lp < 2) or high nibbles of quant bytes 8(lp % 2)..,
            // their fifth bits (Q5_0, Q5_1) bits 8lp.. of qh.
            uint blk = wbase + (m * (K / 32u) + k0 / 32u) * q32_bytes(WTYPE);
            float d = unpackHalf2x16(w_u16(blk)).x;
            float mn = q32_has_m(WTYPE) ? unpackHalf2x16(w_u16(blk + 2u)).x : 0.0;
            uint qh = WTYPE == 11 || WTYPE == 12 ? w_u32(blk + q32_qh(WTYPE)) >> (8u * lp) : 0u;
            for (uint b = 0u; b < 8u; b += 4u) {
                uint q = (w_u32(blk + q32_qs(WTYPE) + 8u * (lp & 1u) + b) >> (4u * (lp >> 1))) & 0x0f0f0f0fu;
                for (uint e = 0u; e < 4u; ++e)
                    ws[lp * 8u + b + e][lr] = q32_value(WTYPE, ((q >> (8u * e)) & 15u) | (((qh >> (b + e)) & 1u) << 4), d, mn);
            }
#elif WTYPE == 14 || WTYPE == 15
            // Q2_K, Q3_K: step j is run c = j % 4 of half h = j / 4 (elements
            // 128h + 32c + l); columns 8lp..8lp+7 are bits 2c of quant bytes
            // 32h + 8lp.. and share sub-block 8h + 2c + lp / 2 (see load.glsl).
            uint blk = wbase + (m * (K / 256u) + k0 / 256u) * (WTYPE == 14 ? Q2_K_BYTES : Q3_K_BYTES);
            uint j = (k0 >> 5) & 7u, h = j >> 2, c = j & 3u, sub = 2u * j + (lp >> 1);
            float d, o = 0.0;
            if (WTYPE == 14) {
                uint sc = w_u8(blk + sub);
                vec2 dm = unpackHalf2x16(w_u32(blk + 80u));
                d = dm.x * float(sc & 15u);
                o = dm.y * float(sc >> 4);
            } else {
                d = unpackHalf2x16(w_u16(blk + 108u)).x * float(w_q3k_scale(blk, sub));
            }
            for (uint b = 0u; b < 8u; b += 4u) {
                uint q = (w_u32(blk + (WTYPE == 14 ? 16u : 32u) + 32u * h + lp * 8u + b) >> (2u * c)) & 0x03030303u;
                // Q3_K: the third bit set keeps q, clear subtracts 4.
                if (WTYPE == 15) q |= ((w_u32(blk + lp * 8u + b) >> (4u * h + c)) & 0x01010101u) << 2;
                for (uint e = 0u; e < 4u; ++e) ws[lp * 8u + b + e][lr] = d * float(int((q >> (8u * e)) & 0xffu) - (WTYPE == 15 ? 4 : 0)) - o;
            }
#else
            for (uint b = 0u; b < 8u; ++b) {
                uint k = k0 + lp * 8u + b;
                ws[lp * 8u + b][lr] = k < K ? w_elem(WTYPE, wbase, m * K + k) : 0.0;
            }
#endif
        } else {
            for (uint b = 0u; b < 8u; ++b) ws[lp * 8u + b][lr] = 0.0;
        }
        uint n = n0 + lr;
        for (uint b = 0u; b < 8u; ++b) {
            uint k = k0 + lp * 8u + b;
            xs[lp * 8u + b][lr] = (n < N && k < K) ? x[xb + n * K + k] : 0.0;
        }
        barrier();
        for (uint k = 0u; k < BK; ++k) {
            float wv[TM], xv[TN];
            for (uint i = 0u; i < TM; ++i) wv[i] = ws[k][tx + 16u * i];
            for (uint j = 0u; j < TN; ++j) xv[j] = xs[k][ty + 16u * j];
            for (uint j = 0u; j < TN; ++j)
                for (uint i = 0u; i < TM; ++i) acc[j][i] = fma(xv[j], wv[i], acc[j][i]);
        }
        barrier();
    }
    uint ob = pc.t4 >> 2;
    for (uint j = 0u; j < TN; ++j) {
        uint n = n0 + ty + 16u * j;
        if (n >= N) continue;
        for (uint i = 0u; i < TM; ++i) {
            uint m = m0 + tx + 16u * i;
            if (m >= M) continue;
            float v = acc[j][i];
            if (pc.u[3] != 0u) v += bias[(pc.t2 >> 2) + (pc.u[3] == 2u ? n * M : 0u) + m];
            o[ob + n * M + m] = v;
        }
    }
}
