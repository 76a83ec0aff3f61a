// Byte-addressed reads of every storage dtype out of a uint[] view. GGUF
// blocks are 18 or 34 bytes, so block starts are only 2-byte aligned: 16-bit
// pieces are extracted from 32-bit words by shifts.
// Dtype codes follow hetero_dtype.
#define DT_F32 0u
#define DT_F16 1u
#define DT_BF16 2u
#define DT_Q8_0 3u
#define DT_Q4_0 4u

#define DEFINE_LOADERS(NAME, ARR)                                                          \
    uint NAME##_u16(uint byte_off) { return (ARR[byte_off >> 2] >> ((byte_off & 2u) * 8u)) & 0xffffu; } \
    uint NAME##_u8(uint byte_off) { return (ARR[byte_off >> 2] >> ((byte_off & 3u) * 8u)) & 0xffu; }    \
    float NAME##_elem(uint dtype, uint base, uint e) {                                     \
        if (dtype == DT_F32) return uintBitsToFloat(ARR[(base >> 2) + e]);                 \
        if (dtype == DT_F16) return unpackHalf2x16(NAME##_u16(base + 2u * e)).x;          \
        if (dtype == DT_BF16) return uintBitsToFloat(NAME##_u16(base + 2u * e) << 16);    \
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
