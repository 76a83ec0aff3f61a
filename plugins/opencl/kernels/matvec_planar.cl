// Decode matvec over quantized weights in the planar layout.
//
// GGUF blocks (18 or 34 bytes, 2-byte aligned) only allow 2-byte loads, and
// a decode matvec issuing those cannot keep enough bytes in flight to stream
// the weights at the memory's rate. The provider therefore copies each
// constant Q4_0/Q8_0 matrix once, on the device, into two planes:
//   quants  M * nb blocks of QB bytes (16 for Q4_0, 32 for Q8_0), row-major;
//   scales  M * nb f16 scales, right after the quants;
// and the kernels below read a 16-element unit of a block with one aligned
// 8-byte (Q4_0) or 16-byte (Q8_0) load. Q4_0 nibbles are reordered so that
// nibble i of a unit's 64 bits is element i; Q8_0 bytes keep their order.
// The blocks stay quantized: the copy has exactly the bytes of the original.

// A group of PL_LANES work-items computes a tile of PL_ROWS rows (with
// SwiGLU, PL_SWIGLU_ROWS gate and as many up rows): its lanes walk the
// 16-element units of the rows, loading the x values of a unit once for all
// rows of the tile. On an H100 (TinyLlama 1.1B Q4_0 decode, tokens/s) 8 rows
// and 128 lanes (503-517) beat 4 x 128 (497), 8 x 64 (497), 4 x 32 (345),
// 2 x 32 (381) and 16 x 128 (383): more rows spread x loads over more weight
// bytes, more lanes give more work-groups. Issuing two units' loads per step
// was slower (413-444).
// Mirrored by kPlanarRows, kPlanarSwigluRows and kPlanarLanes in
// cl_executable.cpp.
#define PL_ROWS 8
#define PL_SWIGLU_ROWS 4
#define PL_LANES 128

#define Q4_PLANE_BYTES 16
#define Q8_PLANE_BYTES 32

// One work-item per block: block i of the GGUF matrix to the planes.
kernel void repack_planar_q4_0(global const uchar* src, ulong src_off, global uchar* dst, long blocks) {
    const long i = get_global_id(0);
    if (i >= blocks) return;
    global const uchar* blk = src + src_off + i * Q4_BYTES;
    uint word[4];
    for (int w = 0; w < 4; ++w) {
        uint v = 0;
        for (int j = 0; j < 8; ++j) {
            const int e = 8 * w + j;  // element e: low nibble of byte e, or high nibble of byte e - 16
            const uint nib = e < 16 ? (blk[2 + e] & 15u) : (blk[2 + e - 16] >> 4);
            v |= nib << (4 * j);
        }
        word[w] = v;
    }
    vstore4((uint4)(word[0], word[1], word[2], word[3]), 0, (global uint*)(dst + i * Q4_PLANE_BYTES));
    ((global ushort*)(dst + blocks * Q4_PLANE_BYTES))[i] = (ushort)(blk[0] | (blk[1] << 8));
}

kernel void repack_planar_q8_0(global const uchar* src, ulong src_off, global uchar* dst, long blocks) {
    const long i = get_global_id(0);
    if (i >= blocks) return;
    global const uchar* blk = src + src_off + i * Q8_BYTES;
    global uchar* q = dst + i * Q8_PLANE_BYTES;
    for (int j = 0; j < 32; ++j) q[j] = blk[2 + j];
    ((global ushort*)(dst + blocks * Q8_PLANE_BYTES))[i] = (ushort)(blk[0] | (blk[1] << 8));
}

// Small integers to float without a (slower) integer conversion: the bits
// 0x4B000000 | n are the float 2^23 + n, exactly.
#define NIB(w, s) (as_float(0x4B000000u | (((w) >> (s)) & 15u)) - 8388616.f)              /* nibble - 8 */
#define SBYTE(w, s) (as_float(0x4B000000u | ((((w) >> (s)) & 255u) ^ 0x80u)) - 8388736.f) /* int8 */

inline float nib_dot8(uint w, float4 a, float4 b) {
    float s = NIB(w, 0) * a.x;
    s = fma(NIB(w, 4), a.y, s);
    s = fma(NIB(w, 8), a.z, s);
    s = fma(NIB(w, 12), a.w, s);
    s = fma(NIB(w, 16), b.x, s);
    s = fma(NIB(w, 20), b.y, s);
    s = fma(NIB(w, 24), b.z, s);
    return fma(NIB(w, 28), b.w, s);
}

inline float byte_dot4(uint w, float4 a) {
    float s = SBYTE(w, 0) * a.x;
    s = fma(SBYTE(w, 8), a.y, s);
    s = fma(SBYTE(w, 16), a.z, s);
    return fma(SBYTE(w, 24), a.w, s);
}

// A unit's weights (one aligned load) and its dot product with x0..x3.
#define Q4_UNIT uint2
#define Q8_UNIT uint4
#define Q4_UNIT_DOT(q, x0, x1, x2, x3) (nib_dot8((q).x, x0, x1) + nib_dot8((q).y, x2, x3))
#define Q8_UNIT_DOT(q, x0, x1, x2, x3) \
    ((byte_dot4((q).x, x0) + byte_dot4((q).y, x1)) + (byte_dot4((q).z, x2) + byte_dot4((q).w, x3)))

// acc[r] += this lane's share of row (row0 + r % ROWS) . x of matrix W0
// (r < ROWS) or W1 (r >= ROWS), for the ROWS * NMAT rows of the tile
// (matrices of M rows, planes of QB bytes per block). All rows' loads of a
// unit are issued before its math. Rows past M repeat the last row; their
// sums are never written.
// The clamped load index and the guard on the math are redundant with the
// loop bound, but this form measured a third faster than the plain loop on
// NVIDIA's compiler (H100 Q4_0 decode 496-505 vs 373-379 tok/s, same run).
#define PLANAR_ROWS(UNIT, UNIT_DOT, QB, W0, W1, M, acc, ROWS, NMAT)                      \
    {                                                                                   \
        global const UNIT* q_[(ROWS) * (NMAT)];                                         \
        global const half* s_[(ROWS) * (NMAT)];                                         \
        for (int r = 0; r < (ROWS) * (NMAT); ++r) {                                     \
            global const uchar* w_ = r < (ROWS) ? (W0) : (W1);                          \
            const ulong row_ = (ulong)min(row0 + r % (ROWS), (M) - 1);                  \
            q_[r] = (global const UNIT*)(w_ + row_ * nb * (QB));                        \
            s_[r] = (global const half*)(w_ + (ulong)(M) * nb * (QB)) + row_ * nb;      \
        }                                                                               \
        const int units_ = 2 * nb;                                                      \
        for (int u0 = lane; u0 < units_; u0 += PL_LANES) {                              \
            UNIT wv_[(ROWS) * (NMAT)];                                                  \
            float dv_[(ROWS) * (NMAT)];                                                 \
            {                                                                           \
                const int u = min(u0, units_ - 1);                                      \
                for (int r = 0; r < (ROWS) * (NMAT); ++r) {                             \
                    wv_[r] = q_[r][u];                                                  \
                    dv_[r] = vload_half(u >> 1, s_[r]);                                 \
                }                                                                       \
            }                                                                           \
            const int u = u0;                                                           \
            if (u < units_) {                                                           \
                const float4 x0 = vload4(0, x + 16 * u), x1 = vload4(1, x + 16 * u);   \
                const float4 x2 = vload4(2, x + 16 * u), x3 = vload4(3, x + 16 * u);   \
                for (int r = 0; r < (ROWS) * (NMAT); ++r)                               \
                    acc[r] = fma(dv_[r], UNIT_DOT(wv_[r], x0, x1, x2, x3), acc[r]);    \
            }                                                                           \
        }                                                                               \
    }

// Sums each of the group's n values per lane over its PL_LANES lanes; lane
// 0 gets the totals in v. `red` holds PL_LANES * n floats per group. With
// NV_PTX each warp sums by shuffles first, so one barrier does.
#ifdef NV_PTX
#define LANES_REDUCE(v, n)                                                               \
    {                                                                                    \
        local float* red_ = red + (get_local_id(0) / PL_LANES) * PL_LANES * (n);        \
        for (int r = 0; r < (n); ++r) v[r] = warp_sum(v[r]);                             \
        if (lane % 32 == 0)                                                              \
            for (int r = 0; r < (n); ++r) red_[r * (PL_LANES / 32) + lane / 32] = v[r]; \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        for (int r = 0; r < (n); ++r) {                                                  \
            float s_ = 0.f;                                                              \
            for (int w = 0; w < PL_LANES / 32; ++w) s_ += red_[r * (PL_LANES / 32) + w]; \
            v[r] = s_;                                                                   \
        }                                                                                \
    }
#else
#define LANES_REDUCE(v, n)                                                               \
    {                                                                                    \
        local float* red_ = red + (get_local_id(0) / PL_LANES) * PL_LANES * (n);        \
        for (int r = 0; r < (n); ++r) red_[r * PL_LANES + lane] = v[r];                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        for (int s = PL_LANES / 2; s > 0; s >>= 1) {                                     \
            if (lane < s)                                                                \
                for (int r = 0; r < (n); ++r) red_[r * PL_LANES + lane] += red_[r * PL_LANES + lane + s]; \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
        }                                                                                \
        for (int r = 0; r < (n); ++r) v[r] = red_[r * PL_LANES];                         \
    }
#endif

// This group's tile of PL_ROWS rows, counted across the matrices.
#define PLANAR_SELECT_TILE                                                               \
    const int lane = get_local_id(0) & (PL_LANES - 1);                                   \
    int tile = get_group_id(0) * (get_local_size(0) / PL_LANES) + get_local_id(0) / PL_LANES; \
    SELECT_MATRIX(tile, (M0 + PL_ROWS - 1) / PL_ROWS, (M1 + PL_ROWS - 1) / PL_ROWS)      \
    const int nb = K / QK;                                                               \
    const int row0 = tile * PL_ROWS;

#define MATVEC_PLANAR_KERNEL(NAME, Q, QB, EXTRA_ARGS, X_SETUP)                         \
    kernel void NAME(MATVEC_ARGS EXTRA_ARGS) {                                           \
        X_SETUP                                                                          \
        PLANAR_SELECT_TILE                                                               \
        float acc[PL_ROWS];                                                              \
        for (int r = 0; r < PL_ROWS; ++r) acc[r] = 0.f;                                  \
        if (row0 < M) PLANAR_ROWS(Q##_UNIT, Q##_UNIT_DOT, QB, w, w, M, acc, PL_ROWS, 1)                                   \
        LANES_REDUCE(acc, PL_ROWS)                                                       \
        if (lane == 0)                                                                   \
            for (int r = 0; r < PL_ROWS && row0 + r < M; ++r)                            \
                y[row0 + r] = acc[r] + (has_bias && first ? CPTR(float, bb, boff)[row0 + r] : 0.f); \
    }

// Gate (matrix 0) and up (matrix 1) rows of one tile, writing silu(gate) * up.
#define MATVEC_PLANAR_SWIGLU_KERNEL(NAME, Q, QB, EXTRA_ARGS, X_SETUP)                  \
    kernel void NAME(MATVEC_ARGS EXTRA_ARGS) {                                           \
        X_SETUP                                                                          \
        const int lane = get_local_id(0) & (PL_LANES - 1);                               \
        const int tile = get_group_id(0) * (get_local_size(0) / PL_LANES) + get_local_id(0) / PL_LANES; \
        const int nb = K / QK;                                                           \
        const int row0 = tile * PL_SWIGLU_ROWS;                                                 \
        float acc[2 * PL_SWIGLU_ROWS];                                                          \
        for (int r = 0; r < 2 * PL_SWIGLU_ROWS; ++r) acc[r] = 0.f;                              \
        if (row0 < M0) {                                                                 \
            PLANAR_ROWS(Q##_UNIT, Q##_UNIT_DOT, QB, w0b + w0off, w1b + w1off, M0, acc, PL_SWIGLU_ROWS, 2) \
        }                                                                                \
        LANES_REDUCE(acc, 2 * PL_SWIGLU_ROWS)                                                   \
        if (lane == 0)                                                                   \
            for (int r = 0; r < PL_SWIGLU_ROWS && row0 + r < M0; ++r) {                         \
                const float g = acc[r];                                                  \
                PTR(float, y0b, y0off)[row0 + r] = g / (1.f + exp(-g)) * acc[PL_SWIGLU_ROWS + r]; \
            }                                                                            \
    }

MATVEC_PLANAR_KERNEL(matvec_planar_q4_0, Q4, Q4_PLANE_BYTES, , X_GLOBAL)
MATVEC_PLANAR_KERNEL(matvec_planar_q8_0, Q8, Q8_PLANE_BYTES, , X_GLOBAL)
MATVEC_PLANAR_KERNEL(matvec_norm_planar_q4_0, Q4, Q4_PLANE_BYTES, NORM_ARGS, X_NORMED)
MATVEC_PLANAR_KERNEL(matvec_norm_planar_q8_0, Q8, Q8_PLANE_BYTES, NORM_ARGS, X_NORMED)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_planar_q4_0, Q4, Q4_PLANE_BYTES, , X_GLOBAL)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_planar_q8_0, Q8, Q8_PLANE_BYTES, , X_GLOBAL)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_norm_planar_q4_0, Q4, Q4_PLANE_BYTES, NORM_ARGS, X_NORMED)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_norm_planar_q8_0, Q8, Q8_PLANE_BYTES, NORM_ARGS, X_NORMED)
