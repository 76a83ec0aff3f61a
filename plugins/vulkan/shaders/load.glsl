// Byte-addressed reads of every storage dtype out of a uint[] view. GGUF
// blocks are 18 or 34 bytes, so block starts are only 2-byte aligned: 16-bit
// pieces are extracted from 32-bit words by shifts.
// Dtype codes follow hetero_dtype.
#define DT_F32 0u
#define DT_F16 1u
#define DT_BF16 2u
#define DT_Q8_0 3u
#define DT_Q4_0 4u
#define DT_Q4_K 7u
#define DT_Q5_K 8u
#define DT_Q6_K 9u

// K-quant super-blocks (256 elements; 144, 176 or 210 bytes) likewise; _u32
// reads 4 bytes at an even offset. A Q4_K/Q5_K sub-block j (0..7) has a 6-bit
// scale and min: for j < 4 the low 6 bits of scale bytes j and j + 4; for
// j >= 4 the nibbles of byte j + 4 (scale low, min high) topped by the top
// 2 bits of bytes j - 4 (scale) and j (min).
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
            uint blk = base + (e >> 8) * 210u, h = r >> 7, c = j & 3u;                     \
            uint lo = NAME##_u8(blk + 64u * h + 32u * (c & 1u) + l) >> (4u * (c >> 1));     \
            uint hi = NAME##_u8(blk + 128u + 32u * h + l) >> (2u * c);                     \
            float d = unpackHalf2x16(NAME##_u16(blk + 208u)).x;                            \
            int sc = int(NAME##_u8(blk + 192u + (r >> 4)) << 24) >> 24;                    \
            return d * float(sc) * float(int((lo & 15u) | ((hi & 3u) << 4)) - 32);          \
        }                                                                                  \
        bool q5 = dtype == DT_Q5_K;                                                        \
        uint blk = base + (e >> 8) * (q5 ? 176u : 144u);                                   \
        uint q = (NAME##_u8(blk + (q5 ? 48u : 16u) + 32u * (j >> 1) + l) >> (4u * (j & 1u))) & 15u; \
        if (q5) q |= ((NAME##_u8(blk + 16u + l) >> j) & 1u) << 4;                          \
        uint a = NAME##_u8(blk + 4u + (j & 3u)), b = NAME##_u8(blk + 8u + (j & 3u)), c = NAME##_u8(blk + 12u + (j & 3u)); \
        uint sc = j < 4u ? (a & 63u) : ((c & 15u) | ((a >> 6) << 4));                      \
        uint mn = j < 4u ? (b & 63u) : ((c >> 4) | ((b >> 6) << 4));                       \
        vec2 dm = unpackHalf2x16(NAME##_u32(blk));                                         \
        return dm.x * float(sc) * float(q) - dm.y * float(mn);                             \
    }                                                                                      \
    float NAME##_elem(uint dtype, uint base, uint e) {                                     \
        if (dtype == DT_F32) return uintBitsToFloat(ARR[(base >> 2) + e]);                 \
        if (dtype == DT_F16) return unpackHalf2x16(NAME##_u16(base + 2u * e)).x;          \
        if (dtype == DT_BF16) return uintBitsToFloat(NAME##_u16(base + 2u * e) << 16);    \
        if (dtype >= DT_Q4_K) return NAME##_kq_elem(dtype, base, e);                      \
        uint j = e & 31u;                                                                  \
        if (dtype == DT_Q8_0) {                                                            \
            uint blk = base + (e >> 5) * 34u;                                              \
            float d = unpackHalf2x16(NAME##_u16(blk)).x;                                   \
            int q = int(NAME##_u8(blk + 2u + j) << 24) >> 24;                              \
            return d * float(q);                                                           \
        }                                                                                  \
        uint blk = base + (e >> 5) * 18u;                                                  \
        float d = unpackHalf2x16(NAME##_u16(blk)).x;                                       \
        uint b = NAME##_u8(blk + 2u + (j & 15u));                                          \
        uint q = j < 16u ? (b & 15u) : (b >> 4);                                           \
        return d * float(int(q) - 8);                                                      \
    }
