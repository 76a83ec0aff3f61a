#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require
// out[n, m] = dot(x[n, :], W[m, :]) (+ bias[m]) for many tokens (prefill) on
// tensor cores: a workgroup computes a 128 x 128 or 64 x 64 tile of the output
// as cooperative 16 x 16 f32 accumulators (see WG below). Per step of BK = 64 (two quantization blocks) W's tile is
// dequantized to f16 in shared memory and x's tile converted to f16 next to
// it; the next step's global words are loaded into registers before this
// step's matrix products (software pipelining). Every invocation loads one
// quantization block of one W row (whole 32-bit words) and half a row (32
// floats) of x. Edge tiles are zero-padded and the result goes out through
// shared memory so any N and M work. Used only where the device reports
// 16x16x16 f16 x f16 + f32 subgroup matrices and a subgroup size of 32.
// Products of one step are summed in f16 accumulators (twice as fast as f32
// ones on NVIDIA's implementation), which are added into f32 totals after
// every step, so at most 64 products are ever summed in f16.
// WTYPE: 3 (Q8_0), 4 (Q4_0), 7 (Q4_K), 8 (Q5_K) or 9 (Q6_K). For the K-quants an
// invocation loads one 32-element sub-block with the scales of its
// super-block and dequantizes it in f32 before the one rounding to f16.
// u[0] = N, u[1] = M, u[2] = K (multiple of 32), u[3] = 1: add bias[m], 2: add a residual [N, M] (a fused ADD).
// MULTI=1: up to three matrices that share x in one dispatch (Q/K/V, gate/up):
// W0..W2 at bindings 2..4, outputs at 5..7, u[1], u[4], u[5] = their row
// counts (0 = absent); W0's column tiles come first, then W1's, then W2's. No bias.
#include "common.glsl"
#ifndef MULTI
#define MULTI 0
#endif
// XH=1: x is stored as f16 (its producer wrote it so, see vk_executable.cpp),
// loaded as it goes into shared memory: half the bytes and no conversions.
#ifndef XH
#define XH 0
#endif
// Specialisation: constant 0 = invocations (WG), constant 1 = BIG, the tile
// (m rows of W x n rows of x): 0: 64 x 64, 1: 128 x 128, 2: 128 x 64.
// Subgroups are laid out 2 (n) x WG / 64 (m), each with TN x TM accumulators:
// WG 128, BIG 0: 2 x 2; WG 256, BIG 1: 4 x 2; WG 128, BIG 1: 4 x 4; WG 256,
// BIG 2: 2 x 2.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128u;
layout(constant_id = 1) const uint BIG = 1u;
const uint BM = BIG >= 1u ? 128u : 64u, BN = BIG == 1u ? 128u : 64u, BK = 64u;
const uint NSG = WG / 32u, SG_N = 2u, SG_M = NSG / 2u;
const uint TN = BN / 32u, TM = BM / (16u * SG_M);  // accumulators per subgroup (at most 4 x 4)
const uint P = (2u * BM) / WG;  // loader passes: rows of the tiles per invocation (x's tile may have fewer)
const uint LDS = BK + 8u;  // f16 row stride: rows stay 16-byte aligned, banks shift
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 1) readonly buffer XW { uint xw[]; };    // f16 pairs (XH)
layout(std430, binding = 1) readonly buffer XQ { uvec4 xq[]; };  // eight f16 (XH)
layout(std430, binding = 5) writeonly buffer O { float o[]; };
#if MULTI
layout(std430, binding = 2) readonly buffer W0 { uint ww0[]; };
layout(std430, binding = 3) readonly buffer W1 { uint ww1[]; };
layout(std430, binding = 4) readonly buffer W2 { uint ww2[]; };
layout(std430, binding = 6) writeonly buffer O1 { float o1[]; };
layout(std430, binding = 7) writeonly buffer O2 { float o2[]; };
// The matrix is the same for the whole workgroup, so these branches do not diverge.
uint wword(uint mat, uint i) { return mat == 0u ? ww0[i] : mat == 1u ? ww1[i] : ww2[i]; }
void put(uint mat, uint i, float v) {
    if (mat == 0u) o[i] = v;
    else if (mat == 1u) o1[i] = v;
    else o2[i] = v;
}
#else
layout(std430, binding = 2) readonly buffer Wt { uint ww[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
uint wword(uint mat, uint i) { return ww[i]; }
void put(uint mat, uint i, float v) { o[i] = v; }
#endif
shared uvec2 ws[BM * LDS / 4u];  // W tile, row m, column k (4 f16 an element)
shared uvec2 xs[BN * LDS / 4u];  // x tile, row n, column k
shared float cs[NSG * 256u];    // one 16 x 16 accumulator per subgroup on its way out

#if WTYPE == 7
const uint BLK_BYTES = Q4_K_BYTES, NWORDS = 12u;  // per 256-element super-block; 4 header + 8 quant words loaded
#elif WTYPE == 8
const uint BLK_BYTES = Q5_K_BYTES, NWORDS = 20u;  // per super-block; 4 header + 8 fifth-bit + 8 quant words
#elif WTYPE == 9
const uint BLK_BYTES = Q6_K_BYTES, NWORDS = 18u;  // per super-block; 8 + 8 quant words, the scales, d
#elif WTYPE == 4
const uint BLK_BYTES = Q4_0_BYTES, NWORDS = 5u;
#else
const uint BLK_BYTES = Q8_0_BYTES, NWORDS = 9u;
#endif

#if WTYPE >= 7
uvec4 bytes4(uint v) { return uvec4(v, v >> 8, v >> 16, v >> 24) & 0xffu; }
// The 32-bit word at an even byte offset of W (weights sit at even offsets).
uint wword_at(uint mat, uint byte_off) {
    uint w = byte_off >> 2;
    return (byte_off & 2u) == 0u ? wword(mat, w) : (wword(mat, w) >> 16) | (wword(mat, w + 1u) << 16);
}
// The 16 bits at an even byte offset, read within their word (as matvec.comp
// does, so a block's last two bytes never reach past its word).
uint whalf_at(uint mat, uint byte_off) { return (wword(mat, byte_off >> 2) >> ((byte_off & 2u) * 8u)) & 0xffffu; }
#endif
#if WTYPE == 7 || WTYPE == 8
// Sub-block kb (32 elements) of row m: its super-block's d/dmin word and 12
// scale bytes, (Q5_K) the 32 fifth-bit bytes, then the 32 quant bytes it
// shares with its neighbour sub-block (kb even: low nibbles, odd: high).
void load_q45k(uint mat, uint wbase, uint m, uint nb, uint kb, bool valid, out uint r[NWORDS]) {
    uint blk = wbase + (m * (nb / 8u) + kb / 8u) * BLK_BYTES;
    uint qs = blk + (WTYPE == 8 ? 48u : 16u) + 32u * ((kb & 7u) >> 1);
    [[unroll]] for (uint i = 0u; i < 4u; ++i) r[i] = valid ? wword_at(mat, blk + 4u * i) : 0u;
    [[unroll]] for (uint i = 0u; i < 8u; ++i) r[4u + i] = valid ? wword_at(mat, qs + 4u * i) : 0u;
#if WTYPE == 8
    [[unroll]] for (uint i = 0u; i < 8u; ++i) r[12u + i] = valid ? wword_at(mat, blk + 16u + 4u * i) : 0u;
#endif
}
#define LOAD_KQ load_q45k
#elif WTYPE == 9
// Sub-block kb = 4h + c of row m: its 32 low-bit bytes (nibble c / 2 of the
// 32-byte run c % 2 of half h), its 32 high-bit bytes (bits 2c of half h's
// run), its two int8 scales (16 elements each) and d.
void load_q6k(uint mat, uint wbase, uint m, uint nb, uint kb, bool valid, out uint r[NWORDS]) {
    uint blk = wbase + (m * (nb / 8u) + kb / 8u) * BLK_BYTES;
    uint j = kb & 7u, h = j >> 2, c = j & 3u;
    uint ql = blk + 64u * h + 32u * (c & 1u), qh = blk + 128u + 32u * h;
    [[unroll]] for (uint i = 0u; i < 8u; ++i) r[i] = valid ? wword_at(mat, ql + 4u * i) : 0u;
    [[unroll]] for (uint i = 0u; i < 8u; ++i) r[8u + i] = valid ? wword_at(mat, qh + 4u * i) : 0u;
    r[16] = valid ? whalf_at(mat, blk + 192u + 2u * j) : 0u;
    r[17] = valid ? whalf_at(mat, blk + 208u) : 0u;
}
#define LOAD_KQ load_q6k
#endif

// Four f16 as the two words of a shared-memory element.
uvec2 pk(f16vec4 v) { return uvec2(packFloat2x16(v.xy), packFloat2x16(v.zw)); }
#if XH
#define XSTORE(V) (V)
#else
#define XSTORE(V) pk(f16vec4(V))
#endif

void main() {
    uint N = pc.u[0], M = pc.u[1], K = pc.u[2];
    uint mat = 0u, mtile = gl_WorkGroupID.x, wbase = pc.t1, ob = pc.t4 >> 2;
#if MULTI
    uint g0 = (M + BM - 1u) / BM, g1 = (pc.u[4] + BM - 1u) / BM;
    if (mtile >= g0 + g1) {
        mat = 2u; mtile -= g0 + g1; M = pc.u[5]; wbase = pc.t3; ob = pc.t6 >> 2;
    } else if (mtile >= g0) {
        mat = 1u; mtile -= g0; M = pc.u[4]; wbase = pc.t2; ob = pc.t5 >> 2;
    }
#endif
    uint m0 = mtile * BM, n0 = gl_WorkGroupID.y * BN;
    uint t = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint wn = (sg / SG_M) * (16u * TN), wm = (sg % SG_M) * (16u * TM);  // this subgroup's corner
#if XH
    uint xb = pc.t0 >> 1;  // in halves
    bool xal = (pc.t0 & 15u) == 0u;
#else
    uint xb = pc.t0 >> 2;
    bool xal = (xb & 3u) == 0u;
#endif
    uint nb = K / 32u;               // quantization blocks per row
    uint steps = (nb + 1u) / 2u;     // BK = 64 per step; an odd last block is zero-padded
    // Loader roles: row lr of both tiles, block / half lh.
    uint lr = t >> 1, lh = t & 1u;
    uint m = m0 + lr, n = n0 + lr;

    uint wr[2][NWORDS];
#if XH
    uvec2 xr[2][8];  // 32 f16 of x as four-element shared-memory words
#define LOAD_X(P_, E_, V_)                                                                           \
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {                                                      \
        uvec4 q_ = !(V_) ? uvec4(0u)                                                                 \
                 : xal   ? xq[((E_) >> 3) + i]                                                       \
                         : uvec4(xw[((E_) >> 1) + 4u * i], xw[((E_) >> 1) + 4u * i + 1u],           \
                                 xw[((E_) >> 1) + 4u * i + 2u], xw[((E_) >> 1) + 4u * i + 3u]);       \
        xr[P_][2u * i] = q_.xy;                                                                      \
        xr[P_][2u * i + 1u] = q_.zw;                                                                 \
    }
#else
    vec4 xr[2][8];
#define LOAD_X(P_, E_, V_)                                                                           \
    [[unroll]] for (uint i = 0u; i < 8u; ++i)                                                        \
        xr[P_][i] = !(V_) ? vec4(0.0)                                                                \
                  : xal   ? x4[((E_) >> 2) + i]                                                      \
                          : vec4(x[(E_) + 4u * i], x[(E_) + 4u * i + 1u], x[(E_) + 4u * i + 2u], x[(E_) + 4u * i + 3u]);
#endif

    // Global loads of step s into registers (zeros outside the matrices).
#if WTYPE >= 7
#define LOAD_W(P_, M_, KB_, V_) LOAD_KQ(mat, wbase, M_, nb, KB_, V_, wr[P_]);
#else
#define LOAD_W(P_, M_, KB_, V_)                                                                   \
    {                                                                                             \
        uint wi_ = (wbase + ((M_) * nb + (KB_)) * BLK_BYTES) >> 2;                                \
        [[unroll]] for (uint i = 0u; i < NWORDS; ++i) wr[P_][i] = (V_) ? wword(mat, wi_ + i) : 0u; \
    }
#endif
#define LOAD_STEP(s)                                                                    \
    [[unroll]] for (uint p = 0u; p < P; ++p) {                                          \
        uint kb_ = (s) * 2u + lh, m_ = m + p * (WG / 2u), n_ = n + p * (WG / 2u);      \
        bool wv_ = m_ < M && kb_ < nb;                                                  \
        LOAD_W(p, m_, kb_, wv_)                                                         \
        bool xv_ = n_ < N && kb_ < nb && lr + p * (WG / 2u) < BN;                       \
        uint e_ = xb + n_ * K + kb_ * 32u;                                              \
        LOAD_X(p, e_, xv_)                                                              \
    }

    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[4][4];
    [[unroll]] for (uint i = 0u; i < TN; ++i)
        [[unroll]] for (uint j = 0u; j < TM; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

    // Whether this invocation's block starts at an odd 16-bit word (then the
    // scale sits in the upper half of word 0 and the quants are word aligned).
    bool odd = WTYPE < 7 && ((wbase + (m * nb + lh) * BLK_BYTES) & 2u) != 0u;  // BLK_BYTES * 2 keeps the parity per step
    LOAD_STEP(0u)
    for (uint s = 0u; s < steps; ++s) {
        // Dequantize / convert the registers into shared memory, four f16 a
        // store. Integers become f16 exactly through the exponent of 1024:
        // (0x6400 | u) is 1024 + u for u < 1024.
        [[unroll]] for (uint p = 0u; p < P; ++p) {
            uint wrow = ((lr + p * (WG / 2u)) * LDS + lh * 32u) / 4u;
#if WTYPE == 7 || WTYPE == 8
            // d * scale * q - dmin * min, f32 until the one rounding to f16;
            // Q5_K's q takes bit j of its fifth-bit byte as bit 4.
            uint j = (s * 2u + lh) & 7u, jj = j & 3u;
            vec2 dm = unpackHalf2x16(wr[p][0]);
            uvec4 A = bytes4(wr[p][1]), B = bytes4(wr[p][2]), C = bytes4(wr[p][3]);
            uint sc = HETERO_KQ_SCALE(A[jj], C[jj], j), mn = HETERO_KQ_MIN(B[jj], C[jj], j);
            float dsc = dm.x * float(sc), dmm = dm.y * float(mn);
            uint sh = 4u * (j & 1u);
            [[unroll]] for (uint i = 0u; i < 8u; ++i) {
                uint q = (wr[p][4u + i] >> sh) & 0x0f0f0f0fu;
#if WTYPE == 8
                q |= ((wr[p][12u + i] >> j) & 0x01010101u) << 4;
#endif
                ws[wrow + i] = pk(f16vec4(dsc * vec4(bytes4(q)) - dmm));
            }
#elif WTYPE == 9
            // d * scale * (q - 32), q = low 4 bits | high 2 bits << 4; f32 until the rounding.
            uint c = (s * 2u + lh) & 3u;
            float d = unpackHalf2x16(wr[p][17]).x;
            float d0 = d * float(int(wr[p][16] << 24) >> 24), d1 = d * float(int(wr[p][16] << 16) >> 24);
            [[unroll]] for (uint i = 0u; i < 8u; ++i) {
                uint q = ((wr[p][i] >> (4u * (c >> 1))) & 0x0f0f0f0fu) | (((wr[p][8u + i] >> (2u * c)) & 0x03030303u) << 4);
                ws[wrow + i] = pk(f16vec4((i < 4u ? d0 : d1) * (vec4(bytes4(q)) - 32.0)));
            }
#else
            uint q[NWORDS - 1u];
            float16_t d;
            if (odd) {
                d = unpackFloat2x16(wr[p][0] >> 16).x;
                [[unroll]] for (uint i = 0u; i < NWORDS - 1u; ++i) q[i] = wr[p][i + 1u];
            } else {
                d = unpackFloat2x16(wr[p][0]).x;
                [[unroll]] for (uint i = 0u; i < NWORDS - 1u; ++i) q[i] = (wr[p][i] >> 16) | (wr[p][i + 1u] << 16);
            }
#if WTYPE == 4
            // Byte i holds element i (low nibble) and 16 + i (high nibble).
            [[unroll]] for (uint j = 0u; j < 4u; ++j) {
                uint v = q[j];
                f16vec2 l02 = unpackFloat2x16((v & 0x000f000fu) | 0x64006400u), l13 = unpackFloat2x16(((v >> 8) & 0x000f000fu) | 0x64006400u);
                f16vec2 h02 = unpackFloat2x16(((v >> 4) & 0x000f000fu) | 0x64006400u), h13 = unpackFloat2x16(((v >> 12) & 0x000f000fu) | 0x64006400u);
                ws[wrow + j] = pk(d * (f16vec4(l02.x, l13.x, l02.y, l13.y) - float16_t(1032.0)));
                ws[wrow + 4u + j] = pk(d * (f16vec4(h02.x, h13.x, h02.y, h13.y) - float16_t(1032.0)));
            }
#else
            [[unroll]] for (uint j = 0u; j < 8u; ++j) {
                uint v = q[j] ^ 0x80808080u;  // q + 128
                f16vec2 e02 = unpackFloat2x16((v & 0x00ff00ffu) | 0x64006400u), e13 = unpackFloat2x16(((v >> 8) & 0x00ff00ffu) | 0x64006400u);
                ws[wrow + j] = pk(d * (f16vec4(e02.x, e13.x, e02.y, e13.y) - float16_t(1152.0)));
            }
#endif
#endif  // WTYPE
            if (lr + p * (WG / 2u) < BN)
                [[unroll]] for (uint i = 0u; i < 8u; ++i) xs[wrow + i] = XSTORE(xr[p][i]);
        }
        barrier();
        if (s + 1u < steps) LOAD_STEP(s + 1u)
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> part[4][4];
        [[unroll]] for (uint i = 0u; i < TN; ++i)
            [[unroll]] for (uint j = 0u; j < TM; ++j) part[i][j] = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(0.0);
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[4], b[4];
            [[unroll]] for (uint i = 0u; i < TN; ++i) coopMatLoadNV(a[i], xs, ((wn + 16u * i) * LDS + kk) / 4u, LDS / 4u, false);
            // B = W^T (k x m) is W's tile read column-major.
            [[unroll]] for (uint j = 0u; j < TM; ++j) coopMatLoadNV(b[j], ws, ((wm + 16u * j) * LDS + kk) / 4u, LDS / 4u, true);
            [[unroll]] for (uint i = 0u; i < TN; ++i)
                [[unroll]] for (uint j = 0u; j < TM; ++j) part[i][j] = coopMatMulAddNV(a[i], b[j], part[i][j]);
        }
        [[unroll]] for (uint i = 0u; i < TN; ++i)
            [[unroll]] for (uint j = 0u; j < TM; ++j) acc[i][j] += fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(part[i][j]);
        barrier();
    }

    [[unroll]] for (uint i = 0u; i < TN; ++i)
        [[unroll]] for (uint j = 0u; j < TM; ++j) {
            coopMatStoreNV(acc[i][j], cs, sg * 256u, 16u, false);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (uint e = lane; e < 256u; e += gl_SubgroupSize) {
                uint nn = n0 + wn + 16u * i + e / 16u, mm = m0 + wm + 16u * j + e % 16u;
                if (nn < N && mm < M) {
                    float v = cs[sg * 256u + e];
#if !MULTI
                    if (pc.u[3] != 0u) v += bias[(pc.t2 >> 2) + (pc.u[3] == 2u ? nn * M : 0u) + mm];
#endif
                    put(mat, ob + nn * M + mm, v);
                }
            }
            subgroupBarrier();
        }
}
