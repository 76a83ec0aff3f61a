// Byte-addressed reads of every storage dtype out of a uint[] view. GGUF
// blocks have even sizes (18, 34, 84, 110 ... bytes), so block starts are
// only 2-byte aligned: 16-bit pieces are extracted from 32-bit words by shifts.
// Dtype codes follow hetero_dtype.
#define DT_F32 0u
#define DT_F16 1u
#define DT_BF16 2u
#define DT_Q8_0 3u
#define DT_Q4_0 4u
#define DT_Q4_K 7u
#define DT_Q5_K 8u
#define DT_Q6_K 9u
#define DT_Q4_1 10u
#define DT_Q5_0 11u
#define DT_Q5_1 12u
#define DT_IQ4_NL 13u
#define DT_Q2_K 14u
#define DT_Q3_K 15u
#define DT_E0M4 16u

// The other 32-element blocks (Q4_1, Q5_0, Q5_1, IQ4_NL, E0M4): f16 d, f16 m
// (Q4_1, Q5_1; E0M4's bias b), a 32-bit qh of fifth bits (Q5_0, Q5_1; bit e
// is element e's), then 16 bytes of nibbles laid out as Q4_0's (element
// j < 16 in the low nibble of byte j, j + 16 in its high nibble).
uint q32_bytes(uint dt) {
    return dt == DT_Q4_1 ? Q4_1_BYTES : dt == DT_Q5_0 ? Q5_0_BYTES : dt == DT_Q5_1 ? Q5_1_BYTES : dt == DT_E0M4 ? E0M4_BYTES : Q4_0_BYTES;
}
uint q32_qs(uint dt) { return dt == DT_Q4_1 || dt == DT_E0M4 ? 4u : dt == DT_Q5_0 ? 6u : dt == DT_Q5_1 ? 8u : 2u; }
uint q32_qh(uint dt) { return dt == DT_Q5_0 ? 2u : 4u; }
bool q32_has_m(uint dt) { return dt == DT_Q4_1 || dt == DT_Q5_1 || dt == DT_E0M4; }
const float IQ4NL_VALUES[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
// E0M4's code q as the float 2 + q / 8: its top fraction bits, by a shift and an OR.
float e0m4_fraction(uint q) { return uintBitsToFloat(HETERO_E0M4_F32_BITS | (q << HETERO_E0M4_F32_SHIFT)); }
// The value of code q (4 bits, or 5 with the fifth bit) of such a block.
float q32_value(uint dt, uint q, float d, float m) {
    if (dt == DT_IQ4_NL) return d * IQ4NL_VALUES[q];
    if (dt == DT_E0M4) return d * (e0m4_fraction(q) - m);
    if (dt == DT_Q5_0) return d * float(int(q) - 16);
    return d * float(q) + m;
}

// K-quant super-blocks (256 elements; 144, 176 or 210 bytes) likewise; _u32
// reads 4 bytes at an even offset. A Q4_K/Q5_K sub-block j (0..7) has a 6-bit
// scale and min: for j < 4 the low 6 bits of scale bytes j and j + 4; for
// j >= 4 the nibbles of byte j + 4 (scale low, min high) topped by the top
// 2 bits of bytes j - 4 (scale) and j (min).
// Q2_K (84 bytes) and Q3_K (110) keep element e = 128n + 32j + l's low 2 bits
// at bits 2j of byte 32n + l of their quants; its sub-block of 16 is
// s = e / 16 (% 256). Q2_K: scales[s] has the 4-bit scale (low) and min;
// f16 d and dmin at byte 80. Q3_K: hmask[l] bit 4n + j is the third bit
// (clear: subtract 4); the 6-bit scale s (- 32) has its low 4 bits in nibble
// s / 8 of scales[s % 8] and its top 2 at bits 2 (s / 4) of scales[8 + s % 4]
// (scales at byte 96); f16 d at byte 108.
#define DEFINE_LOADERS(NAME, ARR)                                                          \
    uint NAME##_u16(uint byte_off) { return (ARR[byte_off >> 2] >> ((byte_off & 2u) * 8u)) & 0xffffu; } \
    uint NAME##_u8(uint byte_off) { return (ARR[byte_off >> 2] >> ((byte_off & 3u) * 8u)) & 0xffu; }    \
    uint NAME##_u32(uint byte_off) {                                                       \
        uint w_ = byte_off >> 2;                                                           \
        return (byte_off & 2u) == 0u ? ARR[w_] : (ARR[w_] >> 16) | (ARR[w_ + 1u] << 16);   \
    }                                                                                      \
    float NAME##_kq_elem(uint dtype, uint base, uint e) {                                  \
        uint r = e & 255u, j = r >> 5, l = e & 31u;                                        \
        if (dtype == DT_Q6_K) {                                                            \
            uint blk = base + (e >> 8) * Q6_K_BYTES, h = r >> 7, c = j & 3u;                     \
            uint lo = NAME##_u8(blk + 64u * h + 32u * (c & 1u) + l) >> (4u * (c >> 1));     \
            uint hi = NAME##_u8(blk + 128u + 32u * h + l) >> (2u * c);                     \
            float d = unpackHalf2x16(NAME##_u16(blk + 208u)).x;                            \
            int sc = int(NAME##_u8(blk + 192u + (r >> 4)) << 24) >> 24;                    \
            return d * float(sc) * float(int((lo & 15u) | ((hi & 3u) << 4)) - 32);          \
        }                                                                                  \
        bool q5 = dtype == DT_Q5_K;                                                        \
        uint blk = base + (e >> 8) * (q5 ? Q5_K_BYTES : Q4_K_BYTES);                                   \
        uint q = (NAME##_u8(blk + (q5 ? 48u : 16u) + 32u * (j >> 1) + l) >> (4u * (j & 1u))) & 15u; \
        if (q5) q |= ((NAME##_u8(blk + 16u + l) >> j) & 1u) << 4;                          \
        uint a = NAME##_u8(blk + 4u + (j & 3u)), b = NAME##_u8(blk + 8u + (j & 3u)), c = NAME##_u8(blk + 12u + (j & 3u)); \
        uint sc = HETERO_KQ_SCALE(a, c, j), mn = HETERO_KQ_MIN(b, c, j);                    \
        vec2 dm = unpackHalf2x16(NAME##_u32(blk));                                         \
        return dm.x * float(sc) * float(q) - dm.y * float(mn);                             \
    }                                                                                      \
    int NAME##_q3k_scale(uint blk, uint s) {                                               \
        uint lo = (NAME##_u8(blk + 96u + (s & 7u)) >> (4u * (s >> 3))) & 15u;               \
        uint hi = (NAME##_u8(blk + 104u + (s & 3u)) >> (2u * (s >> 2))) & 3u;               \
        return int(lo | (hi << 4)) - 32;                                                   \
    }                                                                                      \
    float NAME##_klow_elem(uint dtype, uint base, uint e) {                                \
        uint r = e & 255u, n = r >> 7, j = (r >> 5) & 3u, l = e & 31u;                     \
        bool q3 = dtype == DT_Q3_K;                                                        \
        uint blk = base + (e >> 8) * (q3 ? Q3_K_BYTES : Q2_K_BYTES);                                    \
        uint q = (NAME##_u8(blk + (q3 ? 32u : 16u) + 32u * n + l) >> (2u * j)) & 3u;       \
        if (q3) {                                                                          \
            int qq = int(q) - (((NAME##_u8(blk + l) >> (4u * n + j)) & 1u) != 0u ? 0 : 4); \
            return unpackHalf2x16(NAME##_u16(blk + 108u)).x * float(NAME##_q3k_scale(blk, r >> 4)) * float(qq); \
        }                                                                                  \
        uint sc = NAME##_u8(blk + (r >> 4));                                               \
        vec2 dm = unpackHalf2x16(NAME##_u32(blk + 80u));                                   \
        return dm.x * float(sc & 15u) * float(q) - dm.y * float(sc >> 4);                  \
    }                                                                                      \
    float NAME##_q32_elem(uint dtype, uint base, uint e) {                                 \
        uint j = e & 31u, blk = base + (e >> 5) * q32_bytes(dtype);                        \
        uint b = NAME##_u8(blk + q32_qs(dtype) + (j & 15u));                               \
        uint q = j < 16u ? (b & 15u) : (b >> 4);                                           \
        if (dtype == DT_Q5_0 || dtype == DT_Q5_1) q |= ((NAME##_u32(blk + q32_qh(dtype)) >> j) & 1u) << 4; \
        float m = q32_has_m(dtype) ? unpackHalf2x16(NAME##_u16(blk + 2u)).x : 0.0;         \
        return q32_value(dtype, q, unpackHalf2x16(NAME##_u16(blk)).x, m);                  \
    }                                                                                      \
    float NAME##_elem(uint dtype, uint base, uint e) {                                     \
        if (dtype == DT_F32) return uintBitsToFloat(ARR[(base >> 2) + e]);                 \
        if (dtype == DT_F16) return unpackHalf2x16(NAME##_u16(base + 2u * e)).x;          \
        if (dtype == DT_BF16) return uintBitsToFloat(NAME##_u16(base + 2u * e) << 16);    \
        if (dtype == DT_E0M4) return NAME##_q32_elem(dtype, base, e);                     \
        if (dtype >= DT_Q2_K) return NAME##_klow_elem(dtype, base, e);                    \
        if (dtype >= DT_Q4_1) return NAME##_q32_elem(dtype, base, e);                     \
        if (dtype >= DT_Q4_K) return NAME##_kq_elem(dtype, base, e);                      \
        uint j = e & 31u;                                                                  \
        if (dtype == DT_Q8_0) {                                                            \
            uint blk = base + (e >> 5) * Q8_0_BYTES;                                              \
            float d = unpackHalf2x16(NAME##_u16(blk)).x;                                   \
            int q = int(NAME##_u8(blk + 2u + j) << 24) >> 24;                              \
            return d * float(q);                                                           \
        }                                                                                  \
        uint blk = base + (e >> 5) * Q4_0_BYTES;                                                  \
        float d = unpackHalf2x16(NAME##_u16(blk)).x;                                       \
        uint b = NAME##_u8(blk + 2u + (j & 15u));                                          \
        uint q = j < 16u ? (b & 15u) : (b >> 4);                                           \
        return d * float(int(q) - 8);                                                      \
    }
