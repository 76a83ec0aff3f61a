// K-quant weights (Q4_K, Q5_K, Q6_K; GGUF super-blocks of 256 elements, read
// in place from the GGUF bytes): the decode matvecs and the prefill GEMMs.
// Uses matvec.cl's MATVEC_KERNEL and gemm.cl's GEMM_KERNEL.

// ---- decode: y = W x, one activation row
//
// A super-block is cut into 8 parts of 32 elements such that every weight
// byte belongs to exactly one part: part s takes bytes 4s..4s+3 of each
// 32-byte run of quants (Q4_K/Q5_K: 4 elements of each of the 8 sub-blocks;
// Q5_K's fifth bits of those 32 elements are qh[4s..4s+3]) and, for Q6_K,
// bytes 8(s%4)..+8 of each run of half s/4 (8 elements of each of its 4
// sub-block pairs). The `lanes` work-items of a row walk the parts as the
// Q4_0 kernels do (neighbouring lanes, neighbouring bytes), so a row's bytes
// are each loaded once; only the few scale bytes are shared by the 8 parts.

// The 16 six-bit scales and mins of a Q4_K/Q5_K block, unpacked four at a
// time from its 12 scale bytes A = s[0..3], B = s[4..7], C = s[8..11]:
// sub-blocks 0-3 are the low 6 bits of A (scales) and B (mins); sub-blocks
// 4-7 take their low 4 bits from C's nibbles and their top 2 from the top
// bits of A and B.
// KQ_SCALES_OF takes the bytes as uint4 values (one byte each).
#define KQ_SCALES_OF(A, B, C, sc_lo, m_lo, sc_hi, m_hi)                   \
    const uint4 sc_lo##_a = (A), sc_lo##_b = (B), sc_lo##_c = (C);        \
    const float4 sc_lo = convert_float4(HETERO_KQ_SCALE_LO(sc_lo##_a));   \
    const float4 m_lo = convert_float4(HETERO_KQ_MIN_LO(sc_lo##_b));      \
    const float4 sc_hi = convert_float4(HETERO_KQ_SCALE_HI(sc_lo##_a, sc_lo##_c)); \
    const float4 m_hi = convert_float4(HETERO_KQ_MIN_HI(sc_lo##_b, sc_lo##_c));
#define KQ_UNPACK_SCALES(blk, sc_lo, m_lo, sc_hi, m_hi)                   \
    KQ_SCALES_OF(convert_uint4(vload4(0, (blk) + 4)), convert_uint4(vload4(0, (blk) + 8)), \
                 convert_uint4(vload4(0, (blk) + 12)), sc_lo, m_lo, sc_hi, m_hi)

inline float kq_hsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }

// Q4_K / Q5_K part v of a row: for pair p, 4 quant bytes hold sub-block 2p
// (low nibbles) and 2p+1 (high nibbles). Sum d * sc * q . x - dmin * m * sum(x).
#define KQ45_PART(NAME, AS, Q5)                                                                  \
    inline float NAME(global const uchar* wrow, AS const float* x, int v) {                     \
        const int b = v >> 3, s = v & 7;                                                         \
        global const uchar* blk = wrow + b * (Q5 ? Q5K_BYTES : Q4K_BYTES);                       \
        const float2 dm = vload_half2(0, (global const half*)blk);                              \
        KQ_UNPACK_SCALES(blk, sc_lo, m_lo, sc_hi, m_hi)                                          \
        const float sc[8] = {sc_lo.x, sc_lo.y, sc_lo.z, sc_lo.w, sc_hi.x, sc_hi.y, sc_hi.z, sc_hi.w}; \
        const float mn[8] = {m_lo.x, m_lo.y, m_lo.z, m_lo.w, m_hi.x, m_hi.y, m_hi.z, m_hi.w};   \
        global const uchar* qs = blk + (Q5 ? 48 : 16) + 4 * s;                                   \
        const uchar4 qh = Q5 ? vload4(0, blk + 16 + 4 * s) : (uchar4)(0);                        \
        AS const float* xp = x + b * QKK + 4 * s;                                                \
        float sq = 0.f, sm = 0.f;                                                                \
        for (int p = 0; p < 4; ++p) {                                                            \
            const uchar4 q = vload4(0, qs + 32 * p);                                             \
            const uchar4 h0 = ((qh >> (uchar)(2 * p)) & (uchar)1) << (uchar)4;                   \
            const uchar4 h1 = ((qh >> (uchar)(2 * p + 1)) & (uchar)1) << (uchar)4;               \
            const float4 x0 = vload4(0, xp + 64 * p), x1 = vload4(0, xp + 64 * p + 32);          \
            sq = fma(sc[2 * p], dot(convert_float4((q & (uchar)15) | h0), x0), sq);              \
            sq = fma(sc[2 * p + 1], dot(convert_float4((q >> (uchar)4) | h1), x1), sq);          \
            sm = fma(mn[2 * p], kq_hsum(x0), sm);                                                \
            sm = fma(mn[2 * p + 1], kq_hsum(x1), sm);                                            \
        }                                                                                        \
        return dm.x * sq - dm.y * sm;                                                            \
    }

// Q6_K part v of a row: half h, element columns l0..l0+7 of its four runs
// c = 0..3 (elements 128h + 32c + l): low 4 bits from ql (runs 0, 1 low
// nibbles, runs 2, 3 high nibbles of the same bytes), top 2 from bits 2c of
// qh; one int8 scale per run (columns l0..l0+7 share a 16-element sub-block).
#define KQ6_PART(NAME, AS)                                                                       \
    inline float NAME(global const uchar* wrow, AS const float* x, int v) {                     \
        const int b = v >> 3, s = v & 7, h = s >> 2, l0 = 8 * (s & 3);                           \
        global const uchar* blk = wrow + b * Q6K_BYTES;                                          \
        const uchar8 qa = vload8(0, blk + 64 * h + l0), qb = vload8(0, blk + 64 * h + 32 + l0);  \
        const uchar8 qh = vload8(0, blk + 128 + 32 * h + l0);                                    \
        global const char* sc = (global const char*)(blk + 192 + 8 * h + (l0 >> 4));             \
        const float d = vload_half(0, (global const half*)(blk + 208));                         \
        const uchar8 q[4] = {(qa & (uchar)15) | ((qh & (uchar)3) << (uchar)4),                   \
                             (qb & (uchar)15) | (((qh >> (uchar)2) & (uchar)3) << (uchar)4),     \
                             (qa >> (uchar)4) | (((qh >> (uchar)4) & (uchar)3) << (uchar)4),     \
                             (qb >> (uchar)4) | ((qh >> (uchar)6) << (uchar)4)};                 \
        AS const float* xp = x + b * QKK + 128 * h + l0;                                         \
        float sum = 0.f;                                                                         \
        for (int c = 0; c < 4; ++c) {                                                            \
            const float8 w = convert_float8(q[c]) - 32.f;                                        \
            const float8 xv = vload8(0, xp + 32 * c);                                            \
            sum = fma((float)sc[2 * c], dot(w.lo, xv.lo) + dot(w.hi, xv.hi), sum);               \
        }                                                                                        \
        return d * sum;                                                                          \
    }

// This lane's share of row . x over the row's K / 256 * 8 parts.
#define KQUANT_DOT(NAME, PART, AS)                                                   \
    inline float NAME(global const uchar* wrow, AS const float* x, int K, int lane, int lanes) { \
        const int parts = (K / QKK) * 8;                                             \
        float acc = 0.f;                                                             \
        int v = lane;                                                                \
        for (; v + 3 * lanes < parts; v += 4 * lanes) {                              \
            const float p0 = PART(wrow, x, v), p1 = PART(wrow, x, v + lanes);        \
            const float p2 = PART(wrow, x, v + 2 * lanes), p3 = PART(wrow, x, v + 3 * lanes); \
            acc += (p0 + p1) + (p2 + p3);                                            \
        }                                                                            \
        for (; v < parts; v += lanes) acc += PART(wrow, x, v);                       \
        return acc;                                                                  \
    }

// x in global memory, and (the norm-fused kernels) in local memory.
KQ45_PART(q4k_part, global, 0)
KQ45_PART(q5k_part, global, 1)
KQ6_PART(q6k_part, global)
KQ45_PART(q4k_part_l, local, 0)
KQ45_PART(q5k_part_l, local, 1)
KQ6_PART(q6k_part_l, local)
KQUANT_DOT(dot_q4_k, q4k_part, global)
KQUANT_DOT(dot_q5_k, q5k_part, global)
KQUANT_DOT(dot_q6_k, q6k_part, global)
KQUANT_DOT(dot_q4_k_l, q4k_part_l, local)
KQUANT_DOT(dot_q5_k_l, q5k_part_l, local)
KQUANT_DOT(dot_q6_k_l, q6k_part_l, local)

#define ROW_BYTES_Q4_K(K) ((ulong)((K) / QKK) * Q4K_BYTES)
#define ROW_BYTES_Q5_K(K) ((ulong)((K) / QKK) * Q5K_BYTES)
#define ROW_BYTES_Q6_K(K) ((ulong)((K) / QKK) * Q6K_BYTES)

// The fusions of the Q4_0/Q8_0 matvecs (matvec.cl): up to three matrices a
// launch, SwiGLU after gate/up, the RMSNORM before.
MATVEC_KERNEL(matvec_q4_k, dot_q4_k, ROW_BYTES_Q4_K, , X_GLOBAL)
MATVEC_KERNEL(matvec_q5_k, dot_q5_k, ROW_BYTES_Q5_K, , X_GLOBAL)
MATVEC_KERNEL(matvec_q6_k, dot_q6_k, ROW_BYTES_Q6_K, , X_GLOBAL)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_q4_k, dot_q4_k, ROW_BYTES_Q4_K, , X_GLOBAL)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_q5_k, dot_q5_k, ROW_BYTES_Q5_K, , X_GLOBAL)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_q6_k, dot_q6_k, ROW_BYTES_Q6_K, , X_GLOBAL)
MATVEC_KERNEL(matvec_norm_q4_k, dot_q4_k_l, ROW_BYTES_Q4_K, NORM_ARGS, X_NORMED)
MATVEC_KERNEL(matvec_norm_q5_k, dot_q5_k_l, ROW_BYTES_Q5_K, NORM_ARGS, X_NORMED)
MATVEC_KERNEL(matvec_norm_q6_k, dot_q6_k_l, ROW_BYTES_Q6_K, NORM_ARGS, X_NORMED)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_norm_q4_k, dot_q4_k_l, ROW_BYTES_Q4_K, NORM_ARGS, X_NORMED)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_norm_q5_k, dot_q5_k_l, ROW_BYTES_Q5_K, NORM_ARGS, X_NORMED)
MATVEC_SWIGLU_KERNEL(matvec_swiglu_norm_q6_k, dot_q6_k_l, ROW_BYTES_Q6_K, NORM_ARGS, X_NORMED)

// ---- decode with int8 activations: Q4_K and Q5_K read in place
//
// The planar matvec kernels (matvec_planar.cl: x quantized to int8 per 32
// values in local memory, integer dot products by dp4a, tiles of PQ_ROWS
// rows over PQ_LANES lanes) over Q4_K / Q5_K super-blocks as the file has
// them: 144 / 176 bytes, 16-byte aligned where the matrix starts on a
// 16-byte boundary (the host checks), so a block's header (d, dmin, 12 scale
// bytes) is one 16-byte load and its quants and fifth bits 16-byte chunks.
// Sub-block j of a block is one 32-value block of x:
//   sum_j d * sc_j * dx_j * (q_j . xq_j) - dmin * m_j * dx_j * sum(xq_j).
// x is read as int8 (a quarter of the float bytes the kernels above load per
// weight byte, the limit there) and the math per weight is integer.

// The four 6-bit scales (or mins) of sub-blocks 4h..4h+3 of a Q4_K/Q5_K
// block, a byte each, from scale bytes A = s[0..3] (B = s[4..7] for the
// mins) and the low nibbles of C = s[8..11] (C >> 4 for the mins); see
// KQ_UNPACK_SCALES.
inline uint kq_half_scales(uint a, uint c, int h) {
    return h ? (c & 0x0F0F0F0Fu) | ((a >> 2) & 0x30303030u) : a & 0x3F3F3F3Fu;
}

// The first super-block of each of the tile's PQ_ROWS * NMAT rows (as
// PLANAR_ROWS: rows past M repeat the last, W0 rows then W1 rows) as b_,
// super-blocks of BYTES bytes, sbs_ of them a row; and x's int8 values and
// steps as xq_, xd_.
#define KQ_TILE_ROWS(BYTES, W0, W1, M, NMAT)                                                   \
    global const uint4* b_[PQ_ROWS * (NMAT)];                                                  \
    const int sbs_ = nb / 8;                                                                   \
    for (int r = 0; r < PQ_ROWS * (NMAT); ++r) {                                               \
        global const uchar* w_ = r < PQ_ROWS ? (W0) : (W1);                                    \
        const ulong row_ = (ulong)min(row0 + r % PQ_ROWS, (M) - 1);                            \
        b_[r] = (global const uint4*)(w_ + row_ * (ulong)sbs_ * (BYTES));                      \
    }                                                                                          \
    local const uint4* xq_ = (local const uint4*)PQ_XQ(red);                                  \
    local const float* xd_ = PQ_XD(red, K);

// The fifth bits (Q5_K; zero for Q4_K) of sub-block j over four quant bytes
// under the nibbles at bit `shift` of q.
inline uint kq45_quants(uint q, uint qh, int shift, int j) {
    return ((q >> shift) & 0x0F0F0F0Fu) | (((qh >> j) & 0x01010101u) << 4);
}

// The integer dots of a chunk of 16 quant bytes q (fifth bits qh) with x's
// int8 values xa (under the low nibbles, sub-block j) and xb (the high
// ones, sub-block j + 1).
inline int2 kq45_chunk_dot(uint4 q, uint4 qh, int j, uint4 xa, uint4 xb) {
    int lo = dp4a(kq45_quants(q.x, qh.x, 0, j), xa.x, 0);
    int hi = dp4a(kq45_quants(q.x, qh.x, 4, j + 1), xb.x, 0);
    lo = dp4a(kq45_quants(q.y, qh.y, 0, j), xa.y, lo);
    hi = dp4a(kq45_quants(q.y, qh.y, 4, j + 1), xb.y, hi);
    lo = dp4a(kq45_quants(q.z, qh.z, 0, j), xa.z, lo);
    hi = dp4a(kq45_quants(q.z, qh.z, 4, j + 1), xb.z, hi);
    lo = dp4a(kq45_quants(q.w, qh.w, 0, j), xa.w, lo);
    hi = dp4a(kq45_quants(q.w, qh.w, 4, j + 1), xb.w, hi);
    return (int2)(lo, hi);
}

// Chunks per lane and row whose loads are issued together (Q4_K, Q5_K and
// Q6_K decode). On an H100, 7B decode: 1 and 2 within noise of each other
// for Q4_K, Q5_K and Q4_K_M, 4 slower; for all-Q6_K 1 was 10 % faster than
// 2. HETERO_CL_BUILD_OPTIONS=-DKQ_UNROLL=N tries others.
#ifndef KQ_UNROLL
#define KQ_UNROLL 1
#endif

// acc[r] += this lane's share of the PQ_ROWS * NMAT rows of the tile. A lane
// takes 16-byte chunks of quants: chunk c (0..7) of a super-block holds
// elements 16 (c % 2) .. + 15 of sub-blocks 2p and 2p + 1 (p = c / 2; low
// and high nibbles), and the fifth bits of those elements are the 16 bytes
// at 16 (1 + c % 2) (Q5_K). Neighbouring lanes load neighbouring chunks, so a
// warp's load covers whole runs of memory; each lane also loads its block's
// 16-byte header, which the 8 lanes of a block share. Lanes step by
// PQ_LANES * KQ_UNROLL chunks, issuing the loads of KQ_UNROLL chunks of every
// row before their math (as PLANAR_ROWS does); the loops over chunks and rows
// are unrolled so that the loaded chunks stay registers. A sub-block's min
// term takes x's sum over all its 32 values, so only the even chunk's lane
// adds it.
#define KQ45_INT8_ROWS(Q5, W0, W1, M, acc, NMAT)                                               \
    {                                                                                          \
        KQ_TILE_ROWS((Q5) ? Q5K_BYTES : Q4K_BYTES, W0, W1, M, NMAT)                            \
        local const int* xs_ = PQ_XSB(red, K);                                                 \
        const int chunks_ = 8 * sbs_;                                                          \
        for (int v0 = lane; v0 < chunks_; v0 += PQ_LANES * KQ_UNROLL) {                        \
            uint4 hd_[KQ_UNROLL][PQ_ROWS * (NMAT)], q_[KQ_UNROLL][PQ_ROWS * (NMAT)];            \
            uint4 qh_[KQ_UNROLL][PQ_ROWS * (NMAT)];                                            \
            NV_UNROLL                                                                          \
            for (int u = 0; u < KQ_UNROLL; ++u) {                                              \
                const int v = min(v0 + u * PQ_LANES, chunks_ - 1);                             \
                NV_UNROLL                                                                      \
                for (int r = 0; r < PQ_ROWS * (NMAT); ++r) {                                   \
                    global const uint4* blk_ = b_[r] + (v >> 3) * (((Q5) ? Q5K_BYTES : Q4K_BYTES) / 16); \
                    hd_[u][r] = blk_[0];                                                       \
                    q_[u][r] = blk_[((Q5) ? 3 : 1) + (v & 7)];                                 \
                    qh_[u][r] = (Q5) ? blk_[1 + (v & 1)] : (uint4)(0);                         \
                }                                                                              \
            }                                                                                  \
            NV_UNROLL                                                                          \
            for (int u = 0; u < KQ_UNROLL; ++u) {                                              \
                const int v = v0 + u * PQ_LANES;                                               \
                if (v < chunks_) {                                                             \
                    const int p = (v & 7) >> 1, odd = v & 1;                                  \
                    const int xb = 8 * (v >> 3) + 2 * p; /* x block of sub-block 2p */         \
                    const uint4 xa = xq_[2 * xb + odd], xc = xq_[2 * xb + 2 + odd];          \
                    const float dxa = xd_[xb], dxc = xd_[xb + 1];                              \
                    const float xsa = odd ? 0.f : small_int_to_float(xs_[xb]) * dxa;          \
                    const float xsc = odd ? 0.f : small_int_to_float(xs_[xb + 1]) * dxc;      \
                    NV_UNROLL                                                                  \
                    for (int r = 0; r < PQ_ROWS * (NMAT); ++r) {                               \
                        const uint4 hd = hd_[u][r];                                            \
                        const int shift = 16 * (p & 1); /* scale bytes of 2p, 2p + 1 */        \
                        const float4 sc = bytes_as_float4(kq_half_scales(hd.y, hd.w, p >> 1) >> shift, 0.f); \
                        const float4 mn = bytes_as_float4(kq_half_scales(hd.z, hd.w >> 4, p >> 1) >> shift, 0.f); \
                        const int2 s = kq45_chunk_dot(q_[u][r], qh_[u][r], 2 * p, xa, xc);    \
                        const float sq = fma(sc.x * dxa, small_int_to_float(s.x), sc.y * dxc * small_int_to_float(s.y)); \
                        const float sm = fma(mn.x, xsa, mn.y * xsc);                           \
                        acc[r] += half_reg_to_float(hd.x) * sq - half_reg_to_float(hd.x >> 16) * sm; \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

#define Q4K_ROWS(Q, QB, W0, W1, M, acc, NMAT) KQ45_INT8_ROWS(0, W0, W1, M, acc, NMAT)
#define Q5K_ROWS(Q, QB, W0, W1, M, acc, NMAT) KQ45_INT8_ROWS(1, W0, W1, M, acc, NMAT)

MATVEC_PLANAR_KERNEL(matvec_planar_q4_k, Q4K, 0, , PQ_X_GLOBAL)
MATVEC_PLANAR_KERNEL(matvec_norm_planar_q4_k, Q4K, 0, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_planar_q4_k, Q4K, 0, , PQ_X_GLOBAL)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_norm_planar_q4_k, Q4K, 0, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_ROPE_KERNEL(matvec_norm_planar_rope_q4_k, Q4K, 0)
MATVEC_PLANAR_KERNEL(matvec_planar_q5_k, Q5K, 0, , PQ_X_GLOBAL)
MATVEC_PLANAR_KERNEL(matvec_norm_planar_q5_k, Q5K, 0, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_planar_q5_k, Q5K, 0, , PQ_X_GLOBAL)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_norm_planar_q5_k, Q5K, 0, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_ROPE_KERNEL(matvec_norm_planar_rope_q5_k, Q5K, 0)

// ---- decode with int8 activations: Q6_K in an aligned copy
//
// Q6_K super-blocks are 210 bytes, so most start 2 bytes off a 4-byte
// boundary; the provider copies each constant Q6_K matrix once into blocks
// of 224 bytes (the same 210, then zeros: 16-byte aligned) and the planar
// kernels read those. Each 16 elements have their own scale:
//   d * sum_k sc_k * dx_(k/2) * (w . xq)_k over the 16 runs k of 16, w = q - 32.
#define Q6K_ALIGNED_BYTES 224

kernel void repack_aligned_q6_k(global const uchar* src, ulong src_off, global uchar* dst, long blocks) {
    const long i = get_global_id(0);
    if (i >= blocks) return;
    global const ushort* in = (global const ushort*)(src + src_off + i * Q6K_BYTES);
    global ushort* out = (global ushort*)(dst + i * Q6K_ALIGNED_BYTES);
    for (int j = 0; j < Q6K_BYTES / 2; ++j) out[j] = in[j];
    for (int j = Q6K_BYTES / 2; j < Q6K_ALIGNED_BYTES / 2; ++j) out[j] = 0;
}

inline uint u4_word(uint4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// Scale byte k (0..15) of a block's 16 int8 scales.
inline int q6_scale(uint4 sc, int k) { return (int)(char)(u4_word(sc, k >> 2) >> (8 * (k & 3))); }

// Four 6-bit weights of run c (0..3) of a half, as stored (0..63, so the
// same as signed bytes for dp4a): low 4 bits from the low (runs 0, 1) or high
// (2, 3) nibbles of ql, top 2 from bits 2c of qh, moved to bits 4-5.
inline uint q6_unsigned(uint ql, uint qh, int c) {
    const uint lo = (ql >> (4 * (c >> 1))) & 0x0F0F0F0Fu;
    const uint hi = (c < 2 ? qh << (4 - 2 * c) : qh >> (2 * c - 4)) & 0x30303030u;
    return lo | hi;
}

// 32 * the sum of x's 16 int8 values: the offset of 32 of every weight of a
// chunk, taken off through x (one dp4a by 0x20 bytes a word) once for all
// rows of the tile.
inline int q6_offset(uint4 x) {
    return dp4a(0x20202020u, x.x, dp4a(0x20202020u, x.y, dp4a(0x20202020u, x.z, dp4a(0x20202020u, x.w, 0))));
}

// The dot of the four words of a chunk of weights (q6_unsigned) with x's
// int8 values, less `offset` (q6_offset of x).
inline int q6_chunk_dot(uint4 ql, uint4 qh, int run, uint4 x, int offset) {
    int s = dp4a(q6_unsigned(ql.x, qh.x, run), x.x, -offset);
    s = dp4a(q6_unsigned(ql.y, qh.y, run), x.y, s);
    s = dp4a(q6_unsigned(ql.z, qh.z, run), x.z, s);
    return dp4a(q6_unsigned(ql.w, qh.w, run), x.w, s);
}

// As KQ45_INT8_ROWS, a lane takes 16-byte chunks of low bits: chunk c (0..7)
// of a block is ql bytes 16c..16c + 15 of half h = c / 4, holding 16
// elements of run `lo` (c % 4 < 2: run 0, else run 1; low nibbles) and of
// run lo + 2 (high nibbles), whose top bits are qh chunk 8 + 2h + c % 2 (bits
// 2 lo and 2 lo + 4). Each run's 16 elements have one scale (16 scale bytes
// in chunk 12, d in chunk 13, shared by the block's 8 lanes). Neighbouring
// lanes load neighbouring chunks, KQ_UNROLL of them a row in flight.
#define Q6K_ROWS(Q, QB, W0, W1, M, acc, NMAT)                                                  \
    {                                                                                          \
        KQ_TILE_ROWS(Q6K_ALIGNED_BYTES, W0, W1, M, NMAT)                                       \
        const int chunks_ = 8 * sbs_;                                                          \
        for (int v0 = lane; v0 < chunks_; v0 += PQ_LANES * KQ_UNROLL) {                        \
            uint4 ql_[KQ_UNROLL][PQ_ROWS * (NMAT)], qh_[KQ_UNROLL][PQ_ROWS * (NMAT)];          \
            uint4 sc_[KQ_UNROLL][PQ_ROWS * (NMAT)];                                            \
            uint dw_[KQ_UNROLL][PQ_ROWS * (NMAT)];                                             \
            NV_UNROLL                                                                          \
            for (int u = 0; u < KQ_UNROLL; ++u) {                                              \
                const int v = min(v0 + u * PQ_LANES, chunks_ - 1), c = v & 7;                  \
                NV_UNROLL                                                                      \
                for (int r = 0; r < PQ_ROWS * (NMAT); ++r) {                                   \
                    global const uint4* blk_ = b_[r] + (v >> 3) * (Q6K_ALIGNED_BYTES / 16);    \
                    ql_[u][r] = blk_[c];                                                       \
                    qh_[u][r] = blk_[8 + 2 * (c >> 2) + (c & 1)];                              \
                    sc_[u][r] = blk_[12];                                                      \
                    dw_[u][r] = blk_[13].x;                                                    \
                }                                                                              \
            }                                                                                  \
            NV_UNROLL                                                                          \
            for (int u = 0; u < KQ_UNROLL; ++u) {                                              \
                const int v = v0 + u * PQ_LANES;                                               \
                if (v < chunks_) {                                                             \
                    const int c = v & 7, h = c >> 2, lo = (c >> 1) & 1, odd = c & 1;           \
                    const int xb = 8 * (v >> 3) + 4 * h + lo; /* x block of run lo; lo + 2: xb + 2 */ \
                    const uint4 xl = xq_[2 * xb + odd], xh = xq_[2 * xb + 4 + odd];            \
                    const float dxl = xd_[xb], dxh = xd_[xb + 2];                              \
                    const int ol = q6_offset(xl), oh = q6_offset(xh);                          \
                    const int k_ = 8 * h + 2 * lo + odd; /* scale of run lo; lo + 2: k_ + 4 */ \
                    NV_UNROLL                                                                  \
                    for (int r = 0; r < PQ_ROWS * (NMAT); ++r) {                               \
                        const float sl = small_int_to_float(q6_scale(sc_[u][r], k_)) * dxl;   \
                        const float sh = small_int_to_float(q6_scale(sc_[u][r], k_ + 4)) * dxh; \
                        const float s = fma(sl, small_int_to_float(q6_chunk_dot(ql_[u][r], qh_[u][r], lo, xl, ol)), \
                                            sh * small_int_to_float(q6_chunk_dot(ql_[u][r], qh_[u][r], lo + 2, xh, oh))); \
                        acc[r] = fma(half_reg_to_float(dw_[u][r]), s, acc[r]);                 \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

MATVEC_PLANAR_KERNEL(matvec_planar_q6_k, Q6K, 0, , PQ_X_GLOBAL)
MATVEC_PLANAR_KERNEL(matvec_norm_planar_q6_k, Q6K, 0, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_planar_q6_k, Q6K, 0, , PQ_X_GLOBAL)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_norm_planar_q6_k, Q6K, 0, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_ROPE_KERNEL(matvec_norm_planar_rope_q6_k, Q6K, 0)

// ---- prefill: the register-tiled GEMM of gemm.cl (and gemm_mma.cl's)
//
// Their K step of 32 is one K-quant sub-block (two Q6_K sub-blocks), the same
// for all rows of the tile. Part t of a step is elements 8p..8p+7 (p = t % 4)
// of row t / 4: fetched raw as the block's f16 scale(s), the bytes that hold
// this sub-block's scale and min, and 8 quant bytes (plus 8 fifth-bit or
// high-bit bytes), dequantized as they are written to local memory. Rows
// past M read as zero (scales 0). A work-item of a `group` fetches parts
// t = id + i * group, i < count, t < parts, into KQ45_REGS / KQ6_REGS
// registers each.
#define KQ45_REGS(Q5) ((Q5) ? 6 : 4)
#define KQ6_REGS 5

// Block of row m holding K step k0.
inline global const uchar* kq_gemm_block(global const uchar* w, int K, int m, int k0, int bytes) {
    return w + (ulong)m * (ulong)(K / QKK) * bytes + (ulong)(k0 / QKK) * bytes;
}

// 8 bytes at p, by one load where `aligned` says p is 8-byte aligned.
inline uint2 load_bytes8(global const uchar* p, bool aligned) {
    return aligned ? *(global const uint2*)p : as_uint2(vload8(0, p));
}

// Q4_K/Q5_K sub-block j: r = {d | dmin, scale bytes (j & 3), (j & 3) + 4,
// (j & 3) + 8 and j, quants 8p.., (Q5_K) qh 8p..}. Blocks (144 and 176
// bytes) of a 16-byte aligned matrix are read by 16- and 8-byte loads: the
// header (d, dmin, the 12 scale bytes) at once. Byte loads elsewhere.
inline void fetch_parts_q45_k(global const uchar* w, int M, int K, int m0, int k0, int parts, int group, int count, bool q5, uint* r) {
    const int R = KQ45_REGS(q5), j = (k0 / QK) & 7;
    const bool wide = aligned16(w);
    for (int i = 0; i < count; ++i) {
        const int t = get_local_id(0) + i * group;
        const int m = m0 + t / 4, p = t % 4;
        for (int e = 0; e < R; ++e) r[R * i + e] = 0u;
        if (t < parts && m < M) {
            global const uchar* blk = kq_gemm_block(w, K, m, k0, q5 ? Q5K_BYTES : Q4K_BYTES);
            if (wide) {
                const uint4 hdr = *(global const uint4*)blk;
                const int sh = 8 * (j & 3);
                r[R * i] = hdr.x;
                r[R * i + 1] = ((hdr.y >> sh) & 0xffu) | (((hdr.z >> sh) & 0xffu) << 8) | (((hdr.w >> sh) & 0xffu) << 16) | ((uint)j << 24);
            } else {
                r[R * i] = as_uint(vload2(0, (global const ushort*)blk));
                r[R * i + 1] = (uint)blk[4 + (j & 3)] | ((uint)blk[8 + (j & 3)] << 8) | ((uint)blk[12 + (j & 3)] << 16) | ((uint)j << 24);
            }
            const uint2 q = load_bytes8(blk + (q5 ? 48 : 16) + 32 * (j >> 1) + 8 * p, wide);
            r[R * i + 2] = q.x;
            r[R * i + 3] = q.y;
            if (q5) {
                const uint2 h = load_bytes8(blk + 16 + 8 * p, wide);
                r[R * i + 4] = h.x;
                r[R * i + R - 1] = h.y;
            }
        }
    }
}

// Sub-block j's 6-bit scale and min from its three scale bytes a = s[j & 3],
// b = s[(j & 3) + 4], c = s[(j & 3) + 8] (see KQ_UNPACK_SCALES) and the
// block's d | dmin << 16, as (d * sc, dmin * m), both exact in float.
inline float2 kq45_scale_min(uint dm, uint a, uint b, uint c, int j) {
    const uint sc = HETERO_KQ_SCALE(a, c, (uint)j), mn = HETERO_KQ_MIN(b, c, (uint)j);
    return (float2)(half_reg_to_float(dm) * small_int_to_float((int)sc), half_reg_to_float(dm >> 16) * small_int_to_float((int)mn));
}

// The same for a part (r[1]: a | b << 8 | c << 16 | j << 24).
inline float2 kq45_part_scales(const uint* r) {
    const uint s = r[1];
    return kq45_scale_min(r[0], s & 0xffu, (s >> 8) & 0xffu, (s >> 16) & 0xffu, (int)(s >> 24));
}

// A part's 8 quants (Q5_K: with their fifth bits), a byte each: the nibbles
// (and fifth bits) are picked four bytes at a time.
inline uint2 kq45_part_bytes(const uint* r, bool q5) {
    const int j = (int)(r[1] >> 24);
    const uint shift = 4u * (uint)(j & 1);
    uint q0 = (r[2] >> shift) & 0x0f0f0f0fu, q1 = (r[3] >> shift) & 0x0f0f0f0fu;
    if (q5) {
        q0 |= ((r[4] >> j) & 0x01010101u) << 4;
        q1 |= ((r[5] >> j) & 0x01010101u) << 4;
    }
    return (uint2)(q0, q1);
}

// The 8 values of one part: d * sc * q - dmin * m.
inline float8 dequant_part_q45_k(const uint* r, bool q5) {
    const float2 dm = kq45_part_scales(r);
    const uint2 q = kq45_part_bytes(r, q5);
    return dm.x * (float8)(bytes_as_float4(q.x, 0.f), bytes_as_float4(q.y, 0.f)) - dm.y;
}

// 8 bytes at a 2-byte aligned p (Q6_K blocks are 210 bytes, so every other
// one starts 2 bytes off a 4-byte boundary) by three aligned 4-byte loads
// and funnel shifts: one code path for both parities, as neighbouring rows
// of an odd number of blocks have different ones. Reads up to 4 bytes past
// the 8.
inline uint2 load_bytes8_even(global const uchar* p) {
    const uint sh = ((uint)(uintptr_t)p & 2u) * 8u;
    global const uint* a = (global const uint*)(p - sh / 8u);
    const ulong w0 = a[0], w1 = a[1], w2 = a[2];
    return (uint2)((uint)((w1 << 32 | w0) >> sh), (uint)((w2 << 32 | w1) >> sh));
}

// Q6_K step j = half j / 4, run c = j % 4: r = {d | scale byte << 16 | c << 24,
// ql 8p.. of the run's bytes, qh 8p..}. Elements 8p.. share scale 2c + p / 2
// of the half. Blocks of a 4-byte aligned matrix are read by aligned words
// (load_bytes8_even: 3 loads for 8 bytes, and the 4 past them stay inside
// the block); byte loads elsewhere.
inline void fetch_parts_q6_k(global const uchar* w, int M, int K, int m0, int k0, int parts, int group, int count, uint* r) {
    const int j = (k0 / QK) & 7, h = j >> 2, c = j & 3;
    const bool words = ((uint)(uintptr_t)w & 3u) == 0;
    for (int i = 0; i < count; ++i) {
        const int t = get_local_id(0) + i * group;
        const int m = m0 + t / 4, p = t % 4;
        for (int e = 0; e < KQ6_REGS; ++e) r[KQ6_REGS * i + e] = 0u;
        if (t < parts && m < M) {
            global const uchar* blk = kq_gemm_block(w, K, m, k0, Q6K_BYTES);
            r[KQ6_REGS * i] = (uint)((global const ushort*)(blk + 208))[0] | ((uint)blk[192 + 8 * h + 2 * c + (p >> 1)] << 16) | ((uint)c << 24);
            global const uchar* ql = blk + 64 * h + 32 * (c & 1) + 8 * p;
            global const uchar* qh = blk + 128 + 32 * h + 8 * p;
            const uint2 q = words ? load_bytes8_even(ql) : as_uint2(vload8(0, ql));
            const uint2 hb = words ? load_bytes8_even(qh) : as_uint2(vload8(0, qh));
            r[KQ6_REGS * i + 1] = q.x;
            r[KQ6_REGS * i + 2] = q.y;
            r[KQ6_REGS * i + 3] = hb.x;
            r[KQ6_REGS * i + 4] = hb.y;
        }
    }
}

// A part's d * scale, exact in float.
inline float kq6_part_scale(const uint* r) { return half_reg_to_float(r[0]) * small_int_to_float((char)(uchar)(r[0] >> 16)); }

// A part's 8 six-bit quants, a byte each: low nibbles (runs 0, 1) or high
// (runs 2, 3) with the run's two high bits on top.
inline uint2 kq6_part_bytes(const uint* r) {
    const uint c = r[0] >> 24, ls = 4u * (c >> 1), hs = 2u * c;
    return (uint2)(((r[1] >> ls) & 0x0f0f0f0fu) | (((r[3] >> hs) & 0x03030303u) << 4),
                   ((r[2] >> ls) & 0x0f0f0f0fu) | (((r[4] >> hs) & 0x03030303u) << 4));
}

// The 8 values of one part: d * scale * (q - 32).
inline float8 dequant_part_q6_k(const uint* r) {
    const uint2 q = kq6_part_bytes(r);
    return kq6_part_scale(r) * (float8)(bytes_as_float4(q.x, 32.f), bytes_as_float4(q.y, 32.f));
}

#define gemm_fetch_w_q4_k(w, M, K, m0, k0, r) fetch_parts_q45_k(w, M, K, m0, k0, GEMM_BM * 4, GEMM_WG, GEMM_PR, false, r)
#define gemm_fetch_w_q5_k(w, M, K, m0, k0, r) fetch_parts_q45_k(w, M, K, m0, k0, GEMM_BM * 4, GEMM_WG, GEMM_PR, true, r)
#define gemm_fetch_w_q6_k(w, M, K, m0, k0, r) fetch_parts_q6_k(w, M, K, m0, k0, GEMM_BM * 4, GEMM_WG, GEMM_PR, r)

// A part's 8 values go to column `row` of k-major Bs (gemm.cl's layout).
#define KQ_GEMM_PUT(NAME, DEQUANT)                                                                        \
    inline void NAME(const uint* r, local float* Bs) {                                                   \
        for (int i = 0; i < GEMM_PR; ++i) {                                                               \
            const int t = get_local_id(0) + i * GEMM_WG;                                                  \
            if (t >= GEMM_BM * 4) break;                                                                  \
            const float8 v = DEQUANT;                                                                     \
            local float* dst = Bs + 8 * (t % 4) * GEMM_SB + t / 4;                                        \
            dst[0 * GEMM_SB] = v.s0; dst[1 * GEMM_SB] = v.s1; dst[2 * GEMM_SB] = v.s2; dst[3 * GEMM_SB] = v.s3; \
            dst[4 * GEMM_SB] = v.s4; dst[5 * GEMM_SB] = v.s5; dst[6 * GEMM_SB] = v.s6; dst[7 * GEMM_SB] = v.s7; \
        }                                                                                                 \
    }
KQ_GEMM_PUT(gemm_put_w_q4_k, dequant_part_q45_k(r + KQ45_REGS(false) * i, false))
KQ_GEMM_PUT(gemm_put_w_q5_k, dequant_part_q45_k(r + KQ45_REGS(true) * i, true))
KQ_GEMM_PUT(gemm_put_w_q6_k, dequant_part_q6_k(r + KQ6_REGS * i))

GEMM_KERNEL(gemm_q4_k, gemm_fetch_w_q4_k, gemm_put_w_q4_k, KQ45_REGS(false) * GEMM_PR)
GEMM_KERNEL(gemm_q5_k, gemm_fetch_w_q5_k, gemm_put_w_q5_k, KQ45_REGS(true) * GEMM_PR)
GEMM_KERNEL(gemm_q6_k, gemm_fetch_w_q6_k, gemm_put_w_q6_k, KQ6_REGS * GEMM_PR)

#ifdef MMA_KERNELS
// ---- prefill on tensor cores (gemm_mma.cl)
//
// Parts of 16 elements: part t of a K step is elements 16 (t % 2) .. + 15 of
// row t / 2's 32, so a work-item works out one scale (and min) per 16
// weights. The fetch only loads, raw (arithmetic on the loaded words would
// wait for them there, where the loads are meant to fly across a step's
// mma instructions): Q4_K/Q5_K the block's 16-byte header and the part's 16
// quant bytes (Q5_K: its 16 fifth-bit bytes), which hold sub-blocks j and
// j + 1 (low and high nibbles; fifth bits j and j + 1), so odd steps reuse
// the even step's registers (GEMM_MMA_KERNEL's PAIRED). Q6_K takes the runs
// of each half in the order 0, 2, 1, 3 (kq6_mma_step) for the same reason:
// runs c and c + 2 are the low and high nibbles of the same ql bytes, and
// all runs of a half take their top bits from the same qh bytes.
#define KQ_MMA_PARTS ((MMA_BM * 2 + MMA_WG - 1) / MMA_WG)
#define KQ45_MMA_REGS(Q5) ((Q5) ? 12 : 8)
#define KQ6_MMA_REGS 11

inline uint4 load16(global const uchar* p, bool aligned) { return aligned ? *(global const uint4*)p : as_uint4(vload16(0, p)); }

inline void put4(uint* r, uint4 v) {
    r[0] = v.x;
    r[1] = v.y;
    r[2] = v.z;
    r[3] = v.w;
}

inline uint4 get4(const uint* r) { return (uint4)(r[0], r[1], r[2], r[3]); }

// r: {header, quants[, fifth bits]} of each part; zeros past M.
inline void fetch_mma_q45_k(global const uchar* w, int M, int K, int m0, int k0, bool q5, uint* r) {
    const int R = KQ45_MMA_REGS(q5), j = (k0 / QK) & 7;
    const bool wide = aligned16(w);
    for (int i = 0; i < KQ_MMA_PARTS; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        const int m = m0 + t / 2, p = t % 2;
        uint4 hdr = (uint4)(0u), q = (uint4)(0u), qh = (uint4)(0u);
        if (t < MMA_BM * 2 && m < M) {
            global const uchar* blk = kq_gemm_block(w, K, m, k0, q5 ? Q5K_BYTES : Q4K_BYTES);
            hdr = load16(blk, wide);
            q = load16(blk + (q5 ? 48 : 16) + 32 * (j >> 1) + 16 * p, wide);
            if (q5) qh = load16(blk + 16 + 16 * p, wide);
        }
        put4(r + R * i, hdr);
        put4(r + R * i + 4, q);
        if (q5) put4(r + R * i + 8, qh);
    }
}

// Q6_K (GGUF's 210-byte blocks, or the 224-byte aligned copy when `bytes` is
// Q6K_ALIGNED_BYTES) run c of half h (step j = 4h + c; c < 2 for the even
// steps this is called for): r = {ql bytes of runs c and c + 2, qh bytes of
// the half, the half's 8 scale bytes, d}. GGUF's blocks are read by aligned
// words where the matrix is 4-byte aligned (load_bytes8_even), else by bytes.
inline void fetch_mma_q6_k(global const uchar* w, int M, int K, int m0, int k0, int bytes, uint* r) {
    const int j = (k0 / QK) & 7, h = j >> 2, c = j & 3;
    const bool aligned = bytes == Q6K_ALIGNED_BYTES, words = ((uint)(uintptr_t)w & 3u) == 0;
    for (int i = 0; i < KQ_MMA_PARTS; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        const int m = m0 + t / 2, p = t % 2;
        uint4 ql = (uint4)(0u), qh = (uint4)(0u);
        uint2 sc = (uint2)(0u);
        uint d = 0u;
        if (t < MMA_BM * 2 && m < M) {
            global const uchar* blk = kq_gemm_block(w, K, m, k0, bytes);
            global const uchar* lo = blk + 64 * h + 32 * (c & 1) + 16 * p;
            global const uchar* hi = blk + 128 + 32 * h + 16 * p;
            if (aligned) {
                ql = *(global const uint4*)lo;
                qh = *(global const uint4*)hi;
                sc = *(global const uint2*)(blk + 192 + 8 * h);
                d = *(global const uint*)(blk + 208);
            } else if (words) {
                /* the 4 bytes these read past the 8 stay inside the block */
                ql = (uint4)(load_bytes8_even(lo), load_bytes8_even(lo + 8));
                qh = (uint4)(load_bytes8_even(hi), load_bytes8_even(hi + 8));
                sc = as_uint2(vload4(0, (global const ushort*)(blk + 192 + 8 * h)));
                d = ((global const ushort*)(blk + 208))[0];
            } else {
                ql = as_uint4(vload16(0, lo));
                qh = as_uint4(vload16(0, hi));
                sc = as_uint2(vload8(0, blk + 192 + 8 * h));
                d = (uint)blk[208] | ((uint)blk[209] << 8);
            }
        }
        put4(r + KQ6_MMA_REGS * i, ql);
        put4(r + KQ6_MMA_REGS * i + 4, qh);
        r[KQ6_MMA_REGS * i + 8] = sc.x;
        r[KQ6_MMA_REGS * i + 9] = sc.y;
        r[KQ6_MMA_REGS * i + 10] = d;
    }
}

// Runs 0, 2, 1, 3 of each half: loop step s covers K step kq6_mma_step(s).
#define kq6_mma_step(s) (((s) & ~3) | (((s) & 1) << 1) | (((s) >> 1) & 1))

#if defined(NV_PTX) && !defined(KQ_F32_DEQUANT)
// q * s + o on four bytes of each word of q (s, o: one f16 in both halves).
inline uint4 fma_bytes_f16x2(uint2 q, uint minus, uint s2, uint o2) {
    const uint2 a = bytes_f16x2(q.x, minus), b = bytes_f16x2(q.y, minus);
    return (uint4)(fma_f16x2(a.x, s2, o2), fma_f16x2(a.y, s2, o2), fma_f16x2(b.x, s2, o2), fma_f16x2(b.y, s2, o2));
}
#endif

// 16 weights as f16 into a local row: (q - offset) * s + o, q a byte each.
inline void kq_mma_store16(local uint* dst, uint4 q, float s, float o, float offset) {
#if defined(NV_PTX) && !defined(KQ_F32_DEQUANT)
    // f16x2 arithmetic (as dequant_bytes_f16 for Q4_0): s and o rounded to
    // f16 once each, quants made exact f16 by prmt (less `offset`), then one
    // fma a pair rounds once. Fewer instructions a weight than float math and
    // a conversion a pair (7B Q4_K pp512 +6 %, Q4_K_M +5 % on an H100). The
    // rounding of s and o adds up to an f16 step of s * q and of o, inside
    // the conformance bound; HETERO_CL_BUILD_OPTIONS=-DKQ_F32_DEQUANT takes
    // the float path below. (bytes_f16x2 and fma_f16x2 are gemm_mma.cl's.)
    const uint so = pack_f16x2(s, o), s2 = (so & 0xffffu) * 0x10001u, o2 = (so >> 16) * 0x10001u;
    const uint minus = 0x64006400u + (uint)offset * 0x10001u; /* 1024 + offset */
    *(local uint4*)dst = fma_bytes_f16x2(q.xy, minus, s2, o2);
    *(local uint4*)(dst + 4) = fma_bytes_f16x2(q.zw, minus, s2, o2);
#else
    const float8 a = s * (float8)(bytes_as_float4(q.x, offset), bytes_as_float4(q.y, offset)) + o;
    const float8 b = s * (float8)(bytes_as_float4(q.z, offset), bytes_as_float4(q.w, offset)) + o;
    vstore_half8(a, 0, (local half*)dst);
    vstore_half8(b, 0, (local half*)dst + 8);
#endif
}

// Sub-block j (= step & 7) of each part: d * sc * q - dmin * m.
inline void put_mma_q45_k(const uint* r, local uint* Bs, int step, bool q5) {
    const int R = KQ45_MMA_REGS(q5), j = step & 7, sh = 8 * (j & 3);
    for (int i = 0; i < KQ_MMA_PARTS; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        if (t >= MMA_BM * 2) break;
        const uint4 hdr = get4(r + R * i);
        const float2 dm = kq45_scale_min(hdr.x, (hdr.y >> sh) & 0xffu, (hdr.z >> sh) & 0xffu, (hdr.w >> sh) & 0xffu, j);
        uint4 q = (get4(r + R * i + 4) >> (uint)(4 * (j & 1))) & 0x0f0f0f0fu;
        if (q5) q |= ((get4(r + R * i + 8) >> (uint)j) & 0x01010101u) << 4;
        kq_mma_store16(Bs + (t / 2) * MMA_ROW_WORDS + 8 * (t % 2), q, dm.x, -dm.y, 0.f);
    }
}

// Run c (step & 3) of the half: d * scale * (q - 32), one scale a part.
inline void put_mma_q6_k(const uint* r, local uint* Bs, int step) {
    const int c = step & 3;
    for (int i = 0; i < KQ_MMA_PARTS; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        if (t >= MMA_BM * 2) break;
        const uint* ri = r + KQ6_MMA_REGS * i;
        const int k = 2 * c + t % 2;  // the part's scale byte: runs 2, 3 in the second word
        const float s = half_reg_to_float(ri[10]) * small_int_to_float((char)(uchar)((c < 2 ? ri[8] : ri[9]) >> (8 * (k & 3))));
        const uint4 q = ((get4(ri) >> (uint)(4 * (c >> 1))) & 0x0f0f0f0fu) | (((get4(ri + 4) >> (uint)(2 * c)) & 0x03030303u) << 4);
        kq_mma_store16(Bs + (t / 2) * MMA_ROW_WORDS + 8 * (t % 2), q, s, 0.f, 32.f);
    }
}

#define mma_fetch_w_q4_k(w, M, K, m0, k0, r) fetch_mma_q45_k(w, M, K, m0, k0, false, r)
#define mma_fetch_w_q5_k(w, M, K, m0, k0, r) fetch_mma_q45_k(w, M, K, m0, k0, true, r)
#define mma_fetch_w_q6_k(w, M, K, m0, k0, r) fetch_mma_q6_k(w, M, K, m0, k0, Q6K_BYTES, r)
#define mma_fetch_w_aligned_q6_k(w, M, K, m0, k0, r) fetch_mma_q6_k(w, M, K, m0, k0, Q6K_ALIGNED_BYTES, r)
#define mma_put_w_q4_k(r, Bs, step) put_mma_q45_k(r, Bs, step, false)
#define mma_put_w_q5_k(r, Bs, step) put_mma_q45_k(r, Bs, step, true)
GEMM_MMA_KERNEL(gemm_mma_q4_k, mma_fetch_w_q4_k, mma_put_w_q4_k, KQ45_MMA_REGS(false) * KQ_MMA_PARTS, 1, MMA_STEP_IN_ORDER)
GEMM_MMA_KERNEL(gemm_mma_q5_k, mma_fetch_w_q5_k, mma_put_w_q5_k, KQ45_MMA_REGS(true) * KQ_MMA_PARTS, 1, MMA_STEP_IN_ORDER)
GEMM_MMA_KERNEL(gemm_mma_q6_k, mma_fetch_w_q6_k, put_mma_q6_k, KQ6_MMA_REGS * KQ_MMA_PARTS, 1, kq6_mma_step)
GEMM_MMA_KERNEL(gemm_mma_aligned_q6_k, mma_fetch_w_aligned_q6_k, put_mma_q6_k, KQ6_MMA_REGS * KQ_MMA_PARTS, 1, kq6_mma_step)
#endif
