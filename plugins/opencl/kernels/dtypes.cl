// Element access of every storage dtype (embedding, conversion to f32), and
// GGUF's other block types read by the matmuls of quant_other.cl: Q4_1, Q5_0,
// Q5_1, IQ4_NL, E0M4 (32 elements a block) and Q2_K, Q3_K (256 a super-block).
// Their blocks are 18 to 110 bytes, so only 2-byte alignment is assumed: bytes are
// read by vload (any alignment) and f16 fields by vload_half.
#define Q4_1_BYTES HETERO_Q4_1_BYTES
#define Q5_0_BYTES HETERO_Q5_0_BYTES
#define Q5_1_BYTES HETERO_Q5_1_BYTES
#define IQ4_NL_BYTES HETERO_IQ4_NL_BYTES
#define Q2K_BYTES HETERO_Q2_K_BYTES
#define Q3K_BYTES HETERO_Q3_K_BYTES
#define E0M4_BYTES HETERO_E0M4_BYTES

// ---- quads: elements 4v..4v+3 of a row, as floats
//
// Four consecutive elements share their block, scale and bit position, so a
// quad is one 4-byte load of quants plus the block's scale fields.

// Nibbles of a 32-element block whose 16 quant bytes start at qs: elements
// 0-15 are the low nibbles of bytes 0-15, 16-31 the high ones. s: the quad
// within the block (0..7).
inline uint4 nibbles4(global const uchar* qs, int s) {
    const uint4 b = convert_uint4(vload4(0, qs + 4 * (s & 3)));
    return s < 4 ? (b & 15u) : (b >> 4);
}

// Fifth bits of quad s from a block's 32-bit qh field (2-byte aligned), at bit 4.
inline uint4 fifth_bits4(global const uchar* qh, int s) {
    const ushort2 h2 = vload2(0, (global const ushort*)qh);
    const uint h = (uint)h2.x | ((uint)h2.y << 16);
    const uint b = h >> (4 * s);
    return ((uint4)(b, b >> 1, b >> 2, b >> 3) & 1u) << 4;
}

// Q4_1: f16 d, f16 m, 16 nibble bytes: d * q + m.
inline float4 quad_q4_1(global const uchar* row, int v) {
    global const uchar* blk = row + (v >> 3) * Q4_1_BYTES;
    const float2 dm = vload_half2(0, (global const half*)blk);
    return dm.x * convert_float4(nibbles4(blk + 4, v & 7)) + dm.y;
}

// Q5_0: f16 d, 32 fifth bits, 16 nibble bytes: d * (q - 16).
inline float4 quad_q5_0(global const uchar* row, int v) {
    global const uchar* blk = row + (v >> 3) * Q5_0_BYTES;
    const uint4 q = nibbles4(blk + 6, v & 7) | fifth_bits4(blk + 2, v & 7);
    return block_scale(blk) * (convert_float4(q) - 16.f);
}

// Q5_1: f16 d, f16 m, 32 fifth bits, 16 nibble bytes: d * q + m.
inline float4 quad_q5_1(global const uchar* row, int v) {
    global const uchar* blk = row + (v >> 3) * Q5_1_BYTES;
    const float2 dm = vload_half2(0, (global const half*)blk);
    const uint4 q = nibbles4(blk + 8, v & 7) | fifth_bits4(blk + 4, v & 7);
    return dm.x * convert_float4(q) + dm.y;
}

// IQ4_NL: f16 d, 16 nibble bytes indexing the format's 16 levels: d * level.
// The levels are signed bytes held four to a word and picked by selects: a
// table in constant memory, indexed differently by each lane, serializes.
inline float iq4nl_level(uint q) {
    const uint w = (q & 8u) ? ((q & 4u) ? 0x71594535u : 0x26190D01u)  /* 53 69 89 113 | 1 13 25 38 */
                            : ((q & 4u) ? 0xF6EADDCFu : 0xBFAD9881u); /* -49 -35 -22 -10 | -127 -104 -83 -65 */
    return (float)(char)(w >> (8u * (q & 3u)));
}

inline float4 quad_iq4_nl(global const uchar* row, int v) {
    global const uchar* blk = row + (v >> 3) * IQ4_NL_BYTES;
    const uint4 q = nibbles4(blk + 2, v & 7);
    return block_scale(blk) * (float4)(iq4nl_level(q.x), iq4nl_level(q.y), iq4nl_level(q.z), iq4nl_level(q.w));
}

// E0M4: f16 d, f16 b, 16 nibble bytes: d * (w - b), w the float in [2, 4)
// whose top fraction bits are the code, made by a shift and an OR (no
// integer-to-float conversion).
inline float4 quad_e0m4(global const uchar* row, int v) {
    global const uchar* blk = row + (v >> 3) * E0M4_BYTES;
    const float2 db = vload_half2(0, (global const half*)blk);
    const float4 w = as_float4((uint4)(HETERO_E0M4_F32_BITS) | (nibbles4(blk + 4, v & 7) << HETERO_E0M4_F32_SHIFT));
    return db.x * (w - db.y);
}

// A K-quant quad's place in its super-block: half n (128 elements), 2-bit
// plane j (bits 2j..2j+1 of each quant byte), column l (0..28, step 4): the
// quants are bytes 32n + l.. of the 64, and the 16-element scale is 8n + 2j + l / 16.
#define KQ_QUAD_PLACE(v)                                 \
    const int e0 = 4 * ((v) & 63), n = e0 >> 7, j = (e0 >> 5) & 3, l = e0 & 31; \
    const int sub = 8 * n + 2 * j + (l >> 4);

// Q2_K: 16 scale bytes (scale low nibble, min high), 64 quant bytes, f16 d,
// f16 dmin: d * scale * q - dmin * min, q 2 bits.
inline float4 quad_q2_k(global const uchar* row, int v) {
    global const uchar* blk = row + (v >> 6) * Q2K_BYTES;
    KQ_QUAD_PLACE(v)
    const uint4 q = (convert_uint4(vload4(0, blk + 16 + 32 * n + l)) >> (uint)(2 * j)) & 3u;
    const float2 dm = vload_half2(0, (global const half*)(blk + 80));
    const uint sm = blk[sub];
    return dm.x * (float)(sm & 15u) * convert_float4(q) - dm.y * (float)(sm >> 4);
}

// Q3_K: 32 high-bit bytes, 64 quant bytes, 12 bytes of 6-bit scales, f16 d:
// d * (scale - 32) * (q - 4), q's third bit (bit 4n + j of high-bit byte l)
// set meaning no -4. Scale i keeps its low 4 bits in the low (i < 8) or high
// nibble of byte i % 8 and its top 2 bits at bit 2 (i / 4) of byte 8 + i % 4.
inline float4 quad_q3_k(global const uchar* row, int v) {
    global const uchar* blk = row + (v >> 6) * Q3K_BYTES;
    KQ_QUAD_PLACE(v)
    const uint4 lo = (convert_uint4(vload4(0, blk + 32 + 32 * n + l)) >> (uint)(2 * j)) & 3u;
    const uint4 hi = (convert_uint4(vload4(0, blk + l)) >> (uint)(4 * n + j)) & 1u;
    global const uchar* sc = blk + 96;
    const int s6 = (sub < 8 ? (sc[sub] & 15) : (sc[sub - 8] >> 4)) | (((sc[8 + (sub & 3)] >> (2 * (sub >> 2))) & 3) << 4);
    return block_scale(blk + 108) * (float)(s6 - 32) * (convert_float4(lo) - 4.f + 4.f * convert_float4(hi));
}

inline bool is_other_quant(int dtype) { return (dtype >= DT_Q4_1 && dtype <= DT_Q3_K) || dtype == DT_E0M4; }

// Quad v of a row of one of the types above.
inline float4 quad_other(global const uchar* row, int dtype, int v) {
    switch (dtype) {
        case DT_Q4_1: return quad_q4_1(row, v);
        case DT_Q5_0: return quad_q5_0(row, v);
        case DT_Q5_1: return quad_q5_1(row, v);
        case DT_IQ4_NL: return quad_iq4_nl(row, v);
        case DT_Q2_K: return quad_q2_k(row, v);
        case DT_E0M4: return quad_e0m4(row, v);
        default: return quad_q3_k(row, v);
    }
}

// ---- every dtype

// Elements and bytes of one block of `dtype` (1 and the element size for floats).
inline int block_elems(int dtype) {
    return dtype <= DT_BF16 ? 1 : (is_kquant(dtype) || dtype == DT_Q2_K || dtype == DT_Q3_K) ? QKK : QK;
}

inline int block_bytes(int dtype) {
    switch (dtype) {
        case DT_F32: return 4;
        case DT_F16:
        case DT_BF16: return 2;
        case DT_Q8_0: return Q8_BYTES;
        case DT_Q4_0: return Q4_BYTES;
        case DT_Q4_1: return Q4_1_BYTES;
        case DT_Q5_0: return Q5_0_BYTES;
        case DT_Q5_1: return Q5_1_BYTES;
        case DT_IQ4_NL: return IQ4_NL_BYTES;
        case DT_Q2_K: return Q2K_BYTES;
        case DT_Q3_K: return Q3K_BYTES;
        case DT_E0M4: return E0M4_BYTES;
        default: return kquant_bytes(dtype);
    }
}

// Bytes of n elements (a multiple of the block) of `dtype`.
inline ulong row_bytes_of(int dtype, int n) { return (ulong)(n / block_elems(dtype)) * block_bytes(dtype); }

// Element k of a row stored as `dtype` (row points at the row's first byte).
inline float load_elem(global const uchar* row, int dtype, int k) {
    if (is_kquant(dtype)) return kq_elem(row + (k / QKK) * kquant_bytes(dtype), dtype, k % QKK);
    if (is_other_quant(dtype)) {
        const float4 q = quad_other(row, dtype, k >> 2);
        const int i = k & 3;
        return i == 0 ? q.x : i == 1 ? q.y : i == 2 ? q.z : q.w;
    }
    switch (dtype) {
        case DT_F32: return ((global const float*)row)[k];
        case DT_F16: return vload_half(k, (global const half*)row);
        case DT_BF16: return bf16_bits_to_float(((global const ushort*)row)[k]);
        case DT_Q8_0: {
            global const uchar* blk = row + (k / QK) * Q8_BYTES;
            return block_scale(blk) * (float)(char)blk[2 + k % QK];
        }
        default: {
            global const uchar* blk = row + (k / QK) * Q4_BYTES;
            const int j = k % QK;
            const uchar q = blk[2 + (j & 15)];
            const int v = j < 16 ? (q & 0x0f) : (q >> 4);
            return block_scale(blk) * (float)(v - 8);
        }
    }
}

// Element i of a tensor counted flat (rows are whole blocks, so blocks
// never straddle them).
inline float load_elem_flat(global const uchar* x, int dtype, ulong i) {
    const int be = block_elems(dtype);
    return load_elem(x + (i / be) * block_bytes(dtype), dtype, (int)(i % be));
}
