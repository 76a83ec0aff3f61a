#version 450
#extension GL_GOOGLE_include_directive : require
// out[n, r] = dot(x[n, :], W[r, :]) (+ bias[r]) for few tokens (decode).
// A workgroup owns NR consecutive rows; its invocations stride over K (one
// quantization block or element per step) so neighbouring invocations read
// neighbouring bytes, then the partial sums are reduced with subgroupAdd
// (SUBGROUP=1) or shared memory.
// WTYPE: hetero_dtype of W. u[0] = N, u[1] = M, u[2] = K, u[3] = 1: add bias[m], 2: add a residual [N, M] (a fused ADD).
// Grid: groups (2-D) over row blocks, z over tokens.
// MULTI=1 (quantized W only): up to three matrices that share x in one
// dispatch (e.g. the Q, K and V projections): W0..W2 at bindings 2..4, outputs
// at 5..7; u[1], u[4], u[5] = their row counts (0 = absent); row blocks of W0
// come first, then W1's, then W2's.
// NORM=1 (with MULTI and SUBGROUP): x is first RMS-normalised with the weight
// at binding 8 and eps = f[0], which saves the RMSNORM dispatch before the Q/K/V
// and gate/up projections of decode: the sum of squares is gathered in the same
// pass over x, and dot(W, x * g * r) = r * dot(W, x * g).
// SWIGLU=1 (with MULTI): W0 = gate and W1 = up of the same row count; a
// workgroup takes the same rows of both and writes silu(gate) * up to output
// 0, which saves the SWIGLU dispatch after the gate/up projections.
#include "common.glsl"
#include "load.glsl"
// Q32: 32-element blocks (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, E0M4), one block an
// invocation and step; KQ: K-quant super-blocks (Q4_K .. Q6_K, Q2_K, Q3_K),
// one 32-element part of one an invocation and step.
#define Q32 (WTYPE == 3 || WTYPE == 4 || (WTYPE >= 10 && WTYPE <= 13) || WTYPE == 16)
#define KQ ((WTYPE >= 7 && WTYPE <= 9) || WTYPE == 14 || WTYPE == 15)
#ifndef MULTI
#define MULTI 0
#endif
#ifndef NORM
#define NORM 0
#endif
#ifndef SWIGLU
#define SWIGLU 0
#endif
#if SWIGLU && !MULTI
#error "SWIGLU needs MULTI"
#endif
#if NORM && !(MULTI && SUBGROUP)
#error "NORM needs MULTI and SUBGROUP"
#endif
#if SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint NR = 2;
const uint NP = SWIGLU != 0 ? 2u * NR : NR;  // partial sums per invocation (gate's then up's rows)
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer X4 { vec4 x4[]; };  // same data, when 16-byte aligned
layout(std430, binding = 5) writeonly buffer O { float o[]; };
#if MULTI
#if !Q32 && !KQ
#error "MULTI is for quantized weights"
#endif
layout(std430, binding = 2) readonly buffer W0 { uint ww0[]; };
layout(std430, binding = 3) readonly buffer W1 { uint ww1[]; };
layout(std430, binding = 4) readonly buffer W2 { uint ww2[]; };
layout(std430, binding = 6) writeonly buffer O1 { float o1[]; };
layout(std430, binding = 7) writeonly buffer O2 { float o2[]; };
// Byte-addressed reads of W0..W2 (the types other than Q4_0/Q8_0 use them).
DEFINE_LOADERS(w0, ww0)
DEFINE_LOADERS(w1, ww1)
DEFINE_LOADERS(w2, ww2)
#if NORM
layout(std430, binding = 8) readonly buffer G { float gw[]; };
layout(std430, binding = 8) readonly buffer G4 { vec4 gw4[]; };
float g_ss = 0.0;  // this invocation's share of sum(x^2)
#endif
uint g_mat = 0u;  // which matrix this workgroup works on (uniform per workgroup)
#else
layout(std430, binding = 2) readonly buffer Wt { uint ww[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
DEFINE_LOADERS(w, ww)
#endif

#if SUBGROUP
shared float red[NP * 32];  // one slot per subgroup per row (>= 4 lanes per subgroup)
#if NORM
shared float ss_red[32];
#endif
#else
shared float red[NP * WG];
#endif

// x[xb + e .. +4) (e a multiple of 4) as one load when the row is 16-byte aligned.
vec4 xv4(uint xb, uint e) {
    uint i = xb + e;
    if ((xb & 3u) == 0u) return x4[i >> 2];
    return vec4(x[i], x[i + 1u], x[i + 2u], x[i + 3u]);
}

// Quantized rows: one 32-element block per invocation and step, x's block
// loaded once and used for all NR rows (their weight loads overlap).
// The functions are stamped out per weight array (macros of the array ARR and
// its loaders LD; Q4_0 and Q8_0 read ARR's words, the others use LD) so a
// multi-matvec picks its matrix with one branch per workgroup, not one per load.
#if WTYPE == 4
// Q4_0 block b of `row` against x's block (xv; xsum = sum of its 32 values).
// The 18-byte block is read as 5 words (blocks are only 2-byte aligned);
// word i of the quants holds elements 4i..4i+3 in its low nibbles and
// 16+4i..16+4i+3 in its high nibbles. unpackUnorm4x8 of nibbles gives q/255:
// the 255 is folded into the scale.
#define DEFINE_BLOCK_DOT(SFX, ARR, LD)                                                                                    \
    float block_dot##SFX(uint wbase, uint row, uint nb, uint b, vec4 xv[8], float xsum) {                                 \
        uint off = wbase + (row * nb + b) * Q4_0_BYTES;                                                                          \
        uint w0 = off >> 2;                                                                                               \
        bool odd = (off & 2u) != 0u;                                                                                      \
        uint a0 = ARR[w0], a1 = ARR[w0 + 1u], a2 = ARR[w0 + 2u], a3 = ARR[w0 + 3u], a4 = ARR[w0 + 4u];                   \
        float d = unpackHalf2x16(odd ? (a0 >> 16) : (a0 & 0xffffu)).x;                                                    \
        uint q0 = odd ? a1 : (a0 >> 16) | (a1 << 16);                                                                     \
        uint q1 = odd ? a2 : (a1 >> 16) | (a2 << 16);                                                                     \
        uint q2 = odd ? a3 : (a2 >> 16) | (a3 << 16);                                                                     \
        uint q3 = odd ? a4 : (a3 >> 16) | (a4 << 16);                                                                     \
        float s = dot(unpackUnorm4x8(q0 & 0x0f0f0f0fu), xv[0]) + dot(unpackUnorm4x8((q0 >> 4) & 0x0f0f0f0fu), xv[4]) +   \
                  dot(unpackUnorm4x8(q1 & 0x0f0f0f0fu), xv[1]) + dot(unpackUnorm4x8((q1 >> 4) & 0x0f0f0f0fu), xv[5]) +   \
                  dot(unpackUnorm4x8(q2 & 0x0f0f0f0fu), xv[2]) + dot(unpackUnorm4x8((q2 >> 4) & 0x0f0f0f0fu), xv[6]) +   \
                  dot(unpackUnorm4x8(q3 & 0x0f0f0f0fu), xv[3]) + dot(unpackUnorm4x8((q3 >> 4) & 0x0f0f0f0fu), xv[7]);    \
        return d * (255.0 * s - 8.0 * xsum);                                                                              \
    }
#elif WTYPE == 3
// Q8_0 block b of `row` against x's block, the 34 bytes read as 9 words.
#define DEFINE_BLOCK_DOT(SFX, ARR, LD)                                                            \
    float block_dot##SFX(uint wbase, uint row, uint nb, uint b, vec4 xv[8], float xsum) {         \
        uint off = wbase + (row * nb + b) * Q8_0_BYTES;                                                  \
        uint w0 = off >> 2;                                                                       \
        bool odd = (off & 2u) != 0u;                                                              \
        uint prev = ARR[w0];                                                                      \
        float d = unpackHalf2x16(odd ? (prev >> 16) : (prev & 0xffffu)).x;                        \
        float s = 0.0;                                                                            \
        for (uint i = 0u; i < 8u; ++i) {                                                          \
            uint next = ARR[w0 + 1u + i];                                                         \
            uint q = odd ? next : (prev >> 16) | (next << 16);                                    \
            prev = next;                                                                          \
            s += dot(vec4(ivec4(q << 24, q << 16, q << 8, q) >> 24), xv[i]);                      \
        }                                                                                         \
        return d * s;                                                                             \
    }
#elif WTYPE == 10 || WTYPE == 11 || WTYPE == 12
// Q4_1, Q5_0, Q5_1 block b of `row` against x's block: word i of the quants
// holds elements 4i..4i+3 (low nibbles) and 16+4i..16+4i+3 (high), as in
// Q4_0; the fifth bits of four elements, bits e0..e0+3 of qh, go to bit 4 of
// their bytes by one multiply (bit k lands at bit 8k, the four shifted copies
// never overlap). As Q4_0, 255 is folded into the scale. Q5_0 is
// d * (q - 16), the others d * q + m.
uint fifth4(uint qh, uint e0) { return ((((qh >> e0) & 15u) * 0x00204081u) & 0x01010101u) << 4; }
#define DEFINE_BLOCK_DOT(SFX, ARR, LD)                                                                                   \
    float block_dot##SFX(uint wbase, uint row, uint nb, uint b, vec4 xv[8], float xsum) {                                \
        const uint dt = WTYPE;                                                                                           \
        uint off = wbase + (row * nb + b) * q32_bytes(dt), qs = off + q32_qs(dt);                                        \
        uint qh = dt != DT_Q4_1 ? LD##_u32(off + q32_qh(dt)) : 0u;                                                       \
        float s = 0.0;                                                                                                   \
        for (uint i = 0u; i < 4u; ++i) {                                                                                 \
            uint q = LD##_u32(qs + 4u * i);                                                                              \
            s += dot(unpackUnorm4x8((q & 0x0f0f0f0fu) | fifth4(qh, 4u * i)), xv[i]) +                                    \
                 dot(unpackUnorm4x8(((q >> 4) & 0x0f0f0f0fu) | fifth4(qh, 16u + 4u * i)), xv[4u + i]);                   \
        }                                                                                                                \
        if (dt == DT_Q5_0) return unpackHalf2x16(LD##_u16(off)).x * (255.0 * s - 16.0 * xsum);                           \
        vec2 dm = unpackHalf2x16(LD##_u32(off));                                                                         \
        return dm.x * 255.0 * s + dm.y * xsum;                                                                           \
    }
#elif WTYPE == 13
// IQ4_NL block b of `row`: Q4_0's nibbles, each a level of the table.
float iq4nl_dot(uint q, vec4 xv) {
    return dot(vec4(IQ4NL_VALUES[q & 15u], IQ4NL_VALUES[(q >> 8) & 15u], IQ4NL_VALUES[(q >> 16) & 15u], IQ4NL_VALUES[(q >> 24) & 15u]), xv);
}
#define DEFINE_BLOCK_DOT(SFX, ARR, LD)                                                                  \
    float block_dot##SFX(uint wbase, uint row, uint nb, uint b, vec4 xv[8], float xsum) {               \
        uint off = wbase + (row * nb + b) * Q4_0_BYTES;                                                        \
        float s = 0.0;                                                                                  \
        for (uint i = 0u; i < 4u; ++i) {                                                                \
            uint q = LD##_u32(off + 2u + 4u * i);                                                       \
            s += iq4nl_dot(q, xv[i]) + iq4nl_dot(q >> 4, xv[4u + i]);                                   \
        }                                                                                               \
        return unpackHalf2x16(LD##_u16(off)).x * s;                                                     \
    }
#elif WTYPE == 16
// E0M4 block b of `row`: Q4_1's nibbles, each made the float w = 2 + q / 8
// by a shift and an OR (no conversion); the value is d (w - b), so the block
// gives d (sum w x - b sum x).
vec4 e0m4_floats(uint q) { return uintBitsToFloat(uvec4(HETERO_E0M4_F32_BITS) | ((uvec4(q, q >> 8, q >> 16, q >> 24) & 15u) << HETERO_E0M4_F32_SHIFT)); }
#define DEFINE_BLOCK_DOT(SFX, ARR, LD)                                                                  \
    float block_dot##SFX(uint wbase, uint row, uint nb, uint b, vec4 xv[8], float xsum) {               \
        uint off = wbase + (row * nb + b) * E0M4_BYTES;                                                 \
        float s = 0.0;                                                                                  \
        for (uint i = 0u; i < 4u; ++i) {                                                                \
            uint q = LD##_u32(off + 4u + 4u * i);                                                       \
            s += dot(e0m4_floats(q), xv[i]) + dot(e0m4_floats(q >> 4), xv[4u + i]);                     \
        }                                                                                               \
        vec2 db = unpackHalf2x16(LD##_u32(off));                                                        \
        return db.x * (s - db.y * xsum);                                                                \
    }
#endif

#if NORM
// Gathers x^2 and multiplies x by the norm weight (r is applied to the sums).
#define NORM_SCALE(V, E)                                                                   \
    {                                                                                      \
        g_ss += dot(V, V);                                                                 \
        uint gi_ = (pc.t7 >> 2) + (E);                                                     \
        V *= ((pc.t7 & 15u) == 0u) ? gw4[gi_ >> 2] : vec4(gw[gi_], gw[gi_ + 1u], gw[gi_ + 2u], gw[gi_ + 3u]); \
    }
#else
#define NORM_SCALE(V, E)
#endif

#if Q32
// x's block b (NORM: scaled by the norm weight) into xv; returns the sum of its 32 values.
float load_x_block(uint xb, uint b, out vec4 xv[8]) {
    vec4 xs4 = vec4(0.0);
    for (uint i = 0u; i < 8u; ++i) {
        xv[i] = xv4(xb, b * 32u + 4u * i);
        NORM_SCALE(xv[i], b * 32u + 4u * i);
        xs4 += xv[i];
    }
    return xs4.x + xs4.y + xs4.z + xs4.w;
}

#define DEFINE_QUANT_PARTIALS(SFX)                                                                    \
    void quant_partials##SFX(uint row0, uint M, uint K, uint wbase, uint xb, inout float part[NP]) { \
        uint nb = K / 32u;                                                                            \
        for (uint b = gl_LocalInvocationID.x; b < nb; b += WG) {                                      \
            vec4 xv[8];                                                                               \
            float xsum = load_x_block(xb, b, xv);                                                     \
            for (uint r = 0u; r < NR; ++r)                                                            \
                if (row0 + r < M) part[r] += block_dot##SFX(wbase, row0 + r, nb, b, xv, xsum);        \
        }                                                                                             \
    }
#if MULTI
DEFINE_BLOCK_DOT(_0, ww0, w0)
DEFINE_BLOCK_DOT(_1, ww1, w1)
DEFINE_BLOCK_DOT(_2, ww2, w2)
DEFINE_QUANT_PARTIALS(_0)
DEFINE_QUANT_PARTIALS(_1)
DEFINE_QUANT_PARTIALS(_2)
#if SWIGLU
// The same rows of W0 and W1, x's block loaded once for both.
void quant_partials_pair(uint row0, uint M, uint K, uint xb, inout float part[NP]) {
    uint nb = K / 32u;
    for (uint b = gl_LocalInvocationID.x; b < nb; b += WG) {
        vec4 xv[8];
        float xsum = load_x_block(xb, b, xv);
        for (uint r = 0u; r < NR; ++r)
            if (row0 + r < M) {
                part[r] += block_dot_0(pc.t1, row0 + r, nb, b, xv, xsum);
                part[NR + r] += block_dot_1(pc.t2, row0 + r, nb, b, xv, xsum);
            }
    }
}
#endif
#else
DEFINE_BLOCK_DOT(_w, ww, w)
DEFINE_QUANT_PARTIALS(_w)
#endif
#elif KQ
// K-quant rows (WTYPE 7-9: Q4_K, Q5_K, Q6_K; 14, 15: Q2_K, Q3_K). A
// super-block is cut into 8 parts of 32 elements that split its quant bytes
// between them, so each byte is read by one invocation: part s takes bytes
// 4s..4s+3 of each 32-byte run of quants (Q4_K/Q5_K: 4 elements of each of
// the 8 sub-blocks, whose fifth bits are qh[4s..4s+3]) or, for Q6_K, Q2_K and
// Q3_K, bytes 8(s%4)..+8 of each run of half s/4. Invocations stride over
// parts (neighbours read neighbouring bytes);
// x's 32 values of a part are loaded once for all NR rows (and, MULTI with
// NORM, scaled by the norm weight, each element by exactly one invocation).
uvec4 bytes4(uint v) { return uvec4(v, v >> 8, v >> 16, v >> 24) & 0xffu; }

#if WTYPE == 9 || WTYPE == 14 || WTYPE == 15
// Elements 128h + 32c + l0 + (0..7) of block b, c = 0..3, as xv[2c], xv[2c + 1]
// (with their sums for Q2_K's mins).
void load_x_part(uint xb, uint b, uint s, out vec4 xv[8], out float xsum[8]) {
    uint e0 = b * 256u + 128u * (s >> 2) + 8u * (s & 3u);
    for (uint c = 0u; c < 4u; ++c)
        for (uint i = 0u; i < 2u; ++i) {
            xv[2u * c + i] = xv4(xb, e0 + 32u * c + 4u * i);
            NORM_SCALE(xv[2u * c + i], e0 + 32u * c + 4u * i);
        }
    for (uint i = 0u; i < 8u; ++i) xsum[i] = WTYPE == 14 ? xv[i].x + xv[i].y + xv[i].z + xv[i].w : 0.0;
}
#endif

#if WTYPE == 14 || WTYPE == 15
// Q2_K / Q3_K: run c of the part is sub-block 8h + 2c + l0 / 16, one scale
// byte (Q2_K: bytes 8h + l0 / 16 + 2c of the scales; Q3_K: the low nibbles
// from there, h picking the nibble, and the top 2 bits from bytes
// 8 + l0 / 16 + 2 (c % 2)). The quants' 2 bits are bits 2c of the part's 8
// bytes; Q3_K's third bit is bit 4h + c of hmask[l0..l0+7], clear = minus 4.
#define DEFINE_KQ_DOT(SFX, LD)                                                                                  \
    float kq_part_dot##SFX(uint blk, uint s, vec4 xv[8], float xsum[8]) {                                      \
        const bool q3 = WTYPE == 15;                                                                            \
        uint h = s >> 2, l0 = 8u * (s & 3u), sh = 8u * (l0 >> 4);                                                \
        uint qs = blk + (q3 ? 32u : 16u) + 32u * h + l0;                                                        \
        uint q0 = LD##_u32(qs), q1 = LD##_u32(qs + 4u);                                                         \
        uint sa = LD##_u32(blk + (q3 ? 96u : 8u * h)), sb = LD##_u32(blk + (q3 ? 100u : 8u * h + 4u));          \
        uvec4 sc = uvec4(sa >> sh, sa >> (sh + 16u), sb >> sh, sb >> (sh + 16u)) & 0xffu;                       \
        uint m0 = q3 ? LD##_u32(blk + l0) : 0u, m1 = q3 ? LD##_u32(blk + l0 + 4u) : 0u;                         \
        if (q3) {                                                                                               \
            uint sc_hi = LD##_u32(blk + 104u);                                                                  \
            uvec4 hi = (uvec4(sc_hi >> sh, sc_hi >> (sh + 16u), sc_hi >> sh, sc_hi >> (sh + 16u)) >>            \
                        (uvec4(0u, 0u, 2u, 2u) + 4u * h)) & 3u;                                                 \
            sc = ((sc >> (4u * h)) & 15u) | (hi << 4);                                                          \
        }                                                                                                       \
        float sq = 0.0, sm = 0.0;                                                                               \
        for (uint c = 0u; c < 4u; ++c) {                                                                        \
            uint a0 = (q0 >> (2u * c)) & 0x03030303u, a1 = (q1 >> (2u * c)) & 0x03030303u;                      \
            if (q3) {                                                                                           \
                a0 |= ((m0 >> (4u * h + c)) & 0x01010101u) << 2;                                                \
                a1 |= ((m1 >> (4u * h + c)) & 0x01010101u) << 2;                                                \
                float dq = dot(vec4(bytes4(a0)) - 4.0, xv[2u * c]) + dot(vec4(bytes4(a1)) - 4.0, xv[2u * c + 1u]); \
                sq += float(int(sc[c]) - 32) * dq;                                                              \
            } else {                                                                                            \
                float dq = dot(vec4(bytes4(a0)), xv[2u * c]) + dot(vec4(bytes4(a1)), xv[2u * c + 1u]);          \
                sq += float(sc[c] & 15u) * dq;                                                                  \
                sm += float(sc[c] >> 4) * (xsum[2u * c] + xsum[2u * c + 1u]);                                   \
            }                                                                                                   \
        }                                                                                                       \
        if (q3) return unpackHalf2x16(LD##_u16(blk + 108u)).x * sq;                                             \
        vec2 dm = unpackHalf2x16(LD##_u32(blk + 80u));                                                          \
        return dm.x * sq - dm.y * sm;                                                                           \
    }
#elif WTYPE == 9
// ql run c holds its low 4 bits (runs 0, 1: low nibbles of the two 32-byte
// ql halves; runs 2, 3: their high nibbles), qh bits 2c..2c+1 the top 2; the
// 8 columns of a part share one int8 scale per run. LD: the loaders of W's array.
#define DEFINE_KQ_DOT(SFX, LD)                                                                                  \
    float kq_part_dot##SFX(uint blk, uint s, vec4 xv[8], float xsum[8]) {                                      \
        uint h = s >> 2, l0 = 8u * (s & 3u);                                                                    \
        uint qa0 = LD##_u32(blk + 64u * h + l0), qa1 = LD##_u32(blk + 64u * h + l0 + 4u);                       \
        uint qb0 = LD##_u32(blk + 64u * h + 32u + l0), qb1 = LD##_u32(blk + 64u * h + 36u + l0);                \
        uint qh0 = LD##_u32(blk + 128u + 32u * h + l0), qh1 = LD##_u32(blk + 132u + 32u * h + l0);              \
        uint sb = blk + 192u + 8u * h + (l0 >> 4);                                                              \
        float sum = 0.0;                                                                                        \
        for (uint c = 0u; c < 4u; ++c) {                                                                        \
            uint lo0 = (c & 1u) == 0u ? qa0 : qb0, lo1 = (c & 1u) == 0u ? qa1 : qb1;                            \
            uint sh = 4u * (c >> 1);                                                                            \
            uint q0 = ((lo0 >> sh) & 0x0f0f0f0fu) | (((qh0 >> (2u * c)) & 0x03030303u) << 4);                   \
            uint q1 = ((lo1 >> sh) & 0x0f0f0f0fu) | (((qh1 >> (2u * c)) & 0x03030303u) << 4);                   \
            float dq = dot(vec4(bytes4(q0)) - 32.0, xv[2u * c]) + dot(vec4(bytes4(q1)) - 32.0, xv[2u * c + 1u]); \
            sum += float(int(LD##_u8(sb + 2u * c) << 24) >> 24) * dq;                                           \
        }                                                                                                       \
        return unpackHalf2x16(LD##_u16(blk + 208u)).x * sum;                                                    \
    }
#else
// Elements 64p + 4s + (0..3) (sub-block 2p) and 64p + 32 + 4s + (0..3)
// (sub-block 2p + 1) of block b as xv[2p], xv[2p + 1], with their sums.
void load_x_part(uint xb, uint b, uint s, out vec4 xv[8], out float xsum[8]) {
    for (uint j = 0u; j < 8u; ++j) {
        xv[j] = xv4(xb, b * 256u + 32u * j + 4u * s);
        NORM_SCALE(xv[j], b * 256u + 32u * j + 4u * s);
        xsum[j] = xv[j].x + xv[j].y + xv[j].z + xv[j].w;
    }
}

// Sub-block j: d * sc[j] * dot(q, x) - dmin * m[j] * sum(x). The 16 six-bit
// scales and mins come from the 12 scale bytes A, B, C (4 each): sub-blocks
// 0-3 are the low 6 bits of A (scales) and B (mins), sub-blocks 4-7 the
// nibbles of C with the top 2 bits of A and B above them.
#define DEFINE_KQ_DOT(SFX, LD)                                                                                  \
    float kq_part_dot##SFX(uint blk, uint s, vec4 xv[8], float xsum[8]) {                                      \
        uvec4 A = bytes4(LD##_u32(blk + 4u)), B = bytes4(LD##_u32(blk + 8u)), C = bytes4(LD##_u32(blk + 12u));  \
        vec4 sc_lo = vec4(HETERO_KQ_SCALE_LO(A)), m_lo = vec4(HETERO_KQ_MIN_LO(B));                             \
        vec4 sc_hi = vec4(HETERO_KQ_SCALE_HI(A, C)), m_hi = vec4(HETERO_KQ_MIN_HI(B, C));                        \
        float sc[8] = float[8](sc_lo.x, sc_lo.y, sc_lo.z, sc_lo.w, sc_hi.x, sc_hi.y, sc_hi.z, sc_hi.w);         \
        float mn[8] = float[8](m_lo.x, m_lo.y, m_lo.z, m_lo.w, m_hi.x, m_hi.y, m_hi.z, m_hi.w);                 \
        uint qh = WTYPE == 8 ? LD##_u32(blk + 16u + 4u * s) : 0u;                                               \
        uint qs = blk + (WTYPE == 8 ? 48u : 16u) + 4u * s;                                                      \
        float sq = 0.0, sm = 0.0;                                                                               \
        for (uint p = 0u; p < 4u; ++p) {                                                                        \
            uint q = LD##_u32(qs + 32u * p);                                                                    \
            uint q0 = (q & 0x0f0f0f0fu) | (((qh >> (2u * p)) & 0x01010101u) << 4);                              \
            uint q1 = ((q >> 4) & 0x0f0f0f0fu) | (((qh >> (2u * p + 1u)) & 0x01010101u) << 4);                  \
            sq += sc[2u * p] * dot(vec4(bytes4(q0)), xv[2u * p]) + sc[2u * p + 1u] * dot(vec4(bytes4(q1)), xv[2u * p + 1u]); \
            sm += mn[2u * p] * xsum[2u * p] + mn[2u * p + 1u] * xsum[2u * p + 1u];                              \
        }                                                                                                       \
        vec2 dm = unpackHalf2x16(LD##_u32(blk));                                                                \
        return dm.x * sq - dm.y * sm;                                                                           \
    }
#endif

const uint KQ_BYTES = WTYPE == 7 ? Q4_K_BYTES : WTYPE == 8 ? Q5_K_BYTES : WTYPE == 9 ? Q6_K_BYTES : WTYPE == 14 ? Q2_K_BYTES : Q3_K_BYTES;

// Named as the Q4_0/Q8_0 functions, so main() picks them alike.
#define DEFINE_KQ_PARTIALS(SFX)                                                                            \
    void quant_partials##SFX(uint row0, uint M, uint K, uint wbase, uint xb, inout float part[NP]) {      \
        uint nb = K / 256u;                                                                                \
        for (uint v = gl_LocalInvocationID.x; v < nb * 8u; v += WG) {                                      \
            uint b = v >> 3, s = v & 7u;                                                                   \
            vec4 xv[8];                                                                                    \
            float xsum[8];                                                                                 \
            load_x_part(xb, b, s, xv, xsum);                                                               \
            for (uint r = 0u; r < NR; ++r)                                                                 \
                if (row0 + r < M) part[r] += kq_part_dot##SFX(wbase + ((row0 + r) * nb + b) * KQ_BYTES, s, xv, xsum); \
        }                                                                                                  \
    }
#if MULTI
DEFINE_KQ_DOT(_0, w0)
DEFINE_KQ_DOT(_1, w1)
DEFINE_KQ_DOT(_2, w2)
DEFINE_KQ_PARTIALS(_0)
DEFINE_KQ_PARTIALS(_1)
DEFINE_KQ_PARTIALS(_2)
#if SWIGLU
// The same rows of W0 and W1, x's part loaded once for both.
void quant_partials_pair(uint row0, uint M, uint K, uint xb, inout float part[NP]) {
    uint nb = K / 256u;
    for (uint v = gl_LocalInvocationID.x; v < nb * 8u; v += WG) {
        uint b = v >> 3, s = v & 7u;
        vec4 xv[8];
        float xsum[8];
        load_x_part(xb, b, s, xv, xsum);
        for (uint r = 0u; r < NR; ++r)
            if (row0 + r < M) {
                uint at = ((row0 + r) * nb + b) * KQ_BYTES;
                part[r] += kq_part_dot_0(pc.t1 + at, s, xv, xsum);
                part[NR + r] += kq_part_dot_1(pc.t2 + at, s, xv, xsum);
            }
    }
}
#endif
#else
DEFINE_KQ_DOT(_w, w)
DEFINE_KQ_PARTIALS(_w)
#endif
#else
// Partial dot product of one row of W with x over this invocation's chunks.
float row_partial(uint row, uint K, uint wbase, uint xb) {
    uint t = gl_LocalInvocationID.x;
    float sum = 0.0;
#if WTYPE == 0
    uint rb = (wbase >> 2) + row * K;
    for (uint k = t; k < K; k += WG) sum += uintBitsToFloat(ww[rb + k]) * x[xb + k];
#elif WTYPE == 1
    uint rb = wbase + row * K * 2u;
    for (uint k = t; k < K; k += WG) sum += unpackHalf2x16(w_u16(rb + 2u * k)).x * x[xb + k];
#else
    uint rb = wbase + row * K * 2u;
    for (uint k = t; k < K; k += WG) sum += uintBitsToFloat(w_u16(rb + 2u * k) << 16) * x[xb + k];
#endif
    return sum;
}
#endif

#if MULTI
void store(uint i, float s) {
    if (g_mat == 0u) o[(pc.t4 >> 2) + i] = s;
    else if (g_mat == 1u) o1[(pc.t5 >> 2) + i] = s;
    else o2[(pc.t6 >> 2) + i] = s;
}
#else
void store(uint i, float s) { o[(pc.t4 >> 2) + i] = s; }
#endif

void main() {
    uint N = pc.u[0], M = pc.u[1], K = pc.u[2];
    uint n = gl_WorkGroupID.z;
    uint row0 = flat_group() * NR;
    uint wbase = pc.t1;
#if MULTI && !SWIGLU
    uint g0 = (M + NR - 1u) / NR, g1 = (pc.u[4] + NR - 1u) / NR;
    if (flat_group() >= g0 + g1) {
        g_mat = 2u;
        row0 -= (g0 + g1) * NR;
        M = pc.u[5];
        wbase = pc.t3;
    } else if (flat_group() >= g0) {
        g_mat = 1u;
        row0 -= g0 * NR;
        M = pc.u[4];
        wbase = pc.t2;
    }
#endif
    if (row0 >= M) return;
    uint t = gl_LocalInvocationID.x;
    uint xb = (pc.t0 >> 2) + n * K;
    float part[NP];
#if Q32 || KQ
    for (uint r = 0u; r < NP; ++r) part[r] = 0.0;
#if SWIGLU
    quant_partials_pair(row0, M, K, xb, part);
#elif MULTI
    if (g_mat == 0u) quant_partials_0(row0, M, K, wbase, xb, part);
    else if (g_mat == 1u) quant_partials_1(row0, M, K, wbase, xb, part);
    else quant_partials_2(row0, M, K, wbase, xb, part);
#else
    quant_partials_w(row0, M, K, wbase, xb, part);
#endif
#else
    for (uint r = 0u; r < NR; ++r) part[r] = row0 + r < M ? row_partial(row0 + r, K, wbase, xb) : 0.0;
#endif
#if SUBGROUP
    for (uint r = 0u; r < NP; ++r) {
        float s = subgroupAdd(part[r]);
        if (subgroupElect()) red[r * 32u + gl_SubgroupID] = s;
    }
#if NORM
    float ss = subgroupAdd(g_ss);
    if (subgroupElect()) ss_red[gl_SubgroupID] = ss;
#endif
    barrier();
    if (t < NR && row0 + t < M) {
        float s = 0.0;
        for (uint i = 0u; i < gl_NumSubgroups; ++i) s += red[t * 32u + i];
#if SWIGLU
        float su = 0.0;
        for (uint i = 0u; i < gl_NumSubgroups; ++i) su += red[(NR + t) * 32u + i];
#endif
#if NORM
        float sq = 0.0;
        for (uint i = 0u; i < gl_NumSubgroups; ++i) sq += ss_red[i];
        float rn = inversesqrt(sq / float(K) + pc.f[0]);
        s *= rn;
#if SWIGLU
        su *= rn;
#endif
#endif
#if SWIGLU
        s = s / (1.0 + exp(-s)) * su;
#endif
#if !MULTI
        if (pc.u[3] != 0u) s += bias[(pc.t2 >> 2) + (pc.u[3] == 2u ? n * M : 0u) + row0 + t];
#endif
        store(n * M + row0 + t, s);
    }
#else
    for (uint r = 0u; r < NP; ++r) red[r * WG + t] = part[r];
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k)
            for (uint r = 0u; r < NP; ++r) red[r * WG + t] += red[r * WG + t + k];
        barrier();
    }
    if (t < NR && row0 + t < M) {
        float s = red[t * WG];
#if SWIGLU
        s = s / (1.0 + exp(-s)) * red[(NR + t) * WG];
#endif
#if !MULTI
        if (pc.u[3] != 0u) s += bias[(pc.t2 >> 2) + (pc.u[3] == 2u ? n * M : 0u) + row0 + t];
#endif
        store(n * M + row0 + t, s);
    }
#endif
}
