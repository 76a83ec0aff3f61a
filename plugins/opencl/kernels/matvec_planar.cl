// Decode matvec over quantized weights in the planar layout, with x
// quantized to int8 per 32-element block (as the CPU provider does).
//
// GGUF blocks (18 or 34 bytes, 2-byte aligned) only allow 2-byte loads, and
// a decode matvec issuing those cannot keep enough bytes in flight to stream
// the weights at the memory's rate. The provider therefore rewrites each
// constant Q4_0/Q8_0 matrix once, on the device, into two planes (in place,
// or into a copy where the device reads host memory; planar_weights.hpp):
//   quants  M * nb blocks of QB bytes (16 for Q4_0, 32 for Q8_0), row-major,
//           in GGUF's byte order;
//   scales  M * nb f16 scales, right after the quants;
// so a block's quants are one aligned 16-byte (Q4_0) or two (Q8_0) loads.
// The blocks stay quantized: the copy has exactly the bytes of the original.
//
// Each work-group first quantizes x (RMS-normalised first in the NORM
// kernels) into local memory: int8 values, one f32 step per block and the
// sums of the int8 values. Its work-items then form groups of PQ_LANES
// lanes, each group a tile of PQ_ROWS rows (with SwiGLU PQ_ROWS gate and as
// many up rows); lane l takes blocks l, l + PQ_LANES, ... of its rows. A
// block's dot product is integer (four int8 products per dp4a instruction on
// NVIDIA): x per block is read once for all rows of the tile, and the float
// work per block is one multiply-add per row. Float dequantization was the
// limit before: an H100 decode matvec spent 4-5 integer and float operations
// per weight element.
// Mirrored by kPlanarRows and kPlanarLanes in cl_executable.cpp.
#define PQ_ROWS 2
#define PQ_LANES 32
// Blocks per lane and row whose loads are issued together.
#define PQ_UNROLL 2

// Block i of a GGUF matrix (BYTES per block: an f16 scale, then PLANE
// bytes of quants) to the planes; one work-item per block.
inline void repack_block(global const uchar* src, global uchar* dst, long blocks, long i, int bytes, int plane) {
    global const ushort* blk = (global const ushort*)(src + i * bytes);
    global uint* q = (global uint*)(dst + i * plane);
    for (int j = 0; j < plane / 4; ++j) q[j] = blk[1 + 2 * j] | ((uint)blk[2 + 2 * j] << 16);
    ((global ushort*)(dst + blocks * plane))[i] = blk[0];
}

kernel void repack_planar_q4_0(global const uchar* src, ulong src_off, global uchar* dst, long blocks) {
    const long i = get_global_id(0);
    if (i < blocks) repack_block(src + src_off, dst, blocks, i, Q4_BYTES, Q4_PLANE_BYTES);
}

kernel void repack_planar_q8_0(global const uchar* src, ulong src_off, global uchar* dst, long blocks) {
    const long i = get_global_id(0);
    if (i < blocks) repack_block(src + src_off, dst, blocks, i, Q8_BYTES, Q8_PLANE_BYTES);
}

// The inverse, for reads of rewritten weights: block i from the planes at
// src to GGUF bytes at dst.
inline void unpack_block(global const uchar* src, global uchar* dst, long blocks, long i, int bytes, int plane) {
    global const uint* q = (global const uint*)(src + i * plane);
    global ushort* blk = (global ushort*)(dst + i * bytes);
    blk[0] = ((global const ushort*)(src + blocks * plane))[i];
    for (int j = 0; j < plane / 4; ++j) {
        blk[1 + 2 * j] = (ushort)(q[j] & 0xffffu);
        blk[2 + 2 * j] = (ushort)(q[j] >> 16);
    }
}

kernel void unpack_planar_q4_0(global const uchar* src, ulong src_off, global uchar* dst, long blocks) {
    const long i = get_global_id(0);
    if (i < blocks) unpack_block(src + src_off, dst, blocks, i, Q4_BYTES, Q4_PLANE_BYTES);
}

kernel void unpack_planar_q8_0(global const uchar* src, ulong src_off, global uchar* dst, long blocks) {
    const long i = get_global_id(0);
    if (i < blocks) unpack_block(src + src_off, dst, blocks, i, Q8_BYTES, Q8_PLANE_BYTES);
}

// c + the dot product of a's and b's four signed bytes.
#ifdef NV_PTX
inline int dp4a(uint a, uint b, int c) {
    int d;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
#else
inline int dp4a(uint a, uint b, int c) {
    const char4 u = as_char4(a), v = as_char4(b);
    return c + (int)u.x * v.x + (int)u.y * v.y + (int)u.z * v.z + (int)u.w * v.w;
}
#endif

// A block's quants (Q4_0: one uint4; Q8_0: two) and their integer dot with
// x's int8 values x0 (elements 0-15) and x1 (16-31). Q4_0 byte j holds
// elements j (low nibble) and j + 16 (high); the nibbles are 0..15, so the
// result is sum(nibble * x), and the caller subtracts 8 * sum(x).
typedef uint4 Q4_UNIT;
typedef uint8 Q8_UNIT;
#define Q4_LOAD(p, b) (((global const uint4*)(p))[b])
#define Q8_LOAD(p, b) (((global const uint8*)(p))[b])
inline int q4_dot(Q4_UNIT w, uint4 x0, uint4 x1) {
    const uint m = 0x0F0F0F0Fu;
    int s = dp4a(w.x & m, x0.x, 0);
    s = dp4a(w.y & m, x0.y, s);
    s = dp4a(w.z & m, x0.z, s);
    s = dp4a(w.w & m, x0.w, s);
    s = dp4a((w.x >> 4) & m, x1.x, s);
    s = dp4a((w.y >> 4) & m, x1.y, s);
    s = dp4a((w.z >> 4) & m, x1.z, s);
    return dp4a((w.w >> 4) & m, x1.w, s);
}
inline int q8_dot(Q8_UNIT w, uint4 x0, uint4 x1) {
    int s = dp4a(w.s0, x0.x, 0);
    s = dp4a(w.s1, x0.y, s);
    s = dp4a(w.s2, x0.z, s);
    s = dp4a(w.s3, x0.w, s);
    s = dp4a(w.s4, x1.x, s);
    s = dp4a(w.s5, x1.y, s);
    s = dp4a(w.s6, x1.z, s);
    return dp4a(w.s7, x1.w, s);
}
#define Q4_DOT(w, x0, x1, xsum) (q4_dot(w, x0, x1) - 8 * (xsum))
#define Q8_DOT(w, x0, x1, xsum) q8_dot(w, x0, x1)

// Local memory of a work-group (the `red` argument), for a row width K:
//   xq    K int8 values of x, block by block;
//   xd    K / 32 f32 steps (x ~= xd[b] * xq of block b), padded to a
//         multiple of 4 so that what follows is 16-byte aligned;
//   xsb   K / 32 block sums of the int8 values (padded likewise);
//   amax8, xs8: K / 8 maxima of |x| and sums of int8 values over 8 values
//         (devices without warp shuffles combine a block's four through these);
//   sums  PQ_ROWS * 2 floats per work-item, for the lanes' reductions.
// The host sizes it with the same formula (planar_local_floats), plus 16
// bytes: NVIDIA's runtime aligns a local argument to 4 bytes only, and xq is
// read with 16-byte loads (misaligned, they fault), so the layout starts at
// the first 16-byte boundary.
inline local float* pq_align(local float* red) { return red + (4 - (uint)(size_t)red / 4 % 4) % 4; }
#define PQ_NB4(K) (((K) / 32 + 3) & ~3)
#define PQ_XQ(red) ((local uint*)(red))
#define PQ_XD(red, K) ((local float*)(red) + (K) / 4)
#define PQ_XSB(red, K) ((local int*)(red) + (K) / 4 + PQ_NB4(K))
#define PQ_AMAX8(red, K) ((local float*)(red) + (K) / 4 + 2 * PQ_NB4(K))
#define PQ_XS8(red, K) ((local int*)(red) + (K) / 4 + 2 * PQ_NB4(K) + (K) / 8)
#define PQ_SUMS(red, K) ((local float*)(red) + (K) / 4 + 2 * PQ_NB4(K) + (K) / 4)

// Chunks of 8 values of x each work-item loads before working on them.
#define PQ_STAGE 4

inline uint pack_char4(int4 q) { return (q.x & 255) | ((q.y & 255) << 8) | ((q.z & 255) << 16) | ((uint)(q.w & 255) << 24); }

// Quantizes x (width K, a multiple of 32) into the work-group's local
// memory. With `nw`, x is first RMS-normalised with weights nw and epsilon
// eps, as the RMSNORM before the matmul would. Steps and rounding follow the
// CPU provider: step = max|x| / 127, q = rint(x / step). Work-item t takes
// chunks of 8 values t, t + size, ...: four neighbours make a block.
inline void pq_quantize_x(global const float* xg, global const float* nw, float eps, int K, local float* red) {
    const int lid = get_local_id(0), wg = get_local_size(0), chunks = K / 8;
    float scale = 1.f;
    if (nw) {
        float ss = 0.f;
        for (int i = lid; i < K / 4; i += wg) {
            const float4 v = vload4(i, xg);
            ss += dot(v, v);
        }
        scale = 1.f / sqrt(group_sum(ss, PQ_SUMS(red, K)) / (float)K + eps);
    }
    local uint* xq = PQ_XQ(red);
    local float* xd = PQ_XD(red, K);
    local int* xsb = PQ_XSB(red, K);
    // Every work-item runs the same steps (the test that ends a batch early
    // does not depend on the item), so warps stay whole for the shuffles;
    // chunks past the end repeat the last one and are stored nowhere.
    for (int base = 0; base < chunks; base += PQ_STAGE * wg) {
        float4 a[PQ_STAGE], b[PQ_STAGE];
        for (int i = 0; i < PQ_STAGE; ++i) {
            if (base + i * wg >= chunks) break;
            const int c = min(base + i * wg + lid, chunks - 1);
            a[i] = vload4(2 * c, xg);
            b[i] = vload4(2 * c + 1, xg);
            if (nw) {
                a[i] *= scale * vload4(2 * c, nw);
                b[i] *= scale * vload4(2 * c + 1, nw);
            }
        }
        for (int i = 0; i < PQ_STAGE; ++i) {
            if (base + i * wg >= chunks) break;
            const int c = base + i * wg + lid;
            const float4 m4 = fmax(fabs(a[i]), fabs(b[i]));
            float m = fmax(fmax(m4.x, m4.y), fmax(m4.z, m4.w));
#ifdef NV_PTX
            m = fmax(m, shuffle_xor(m, 1));
            m = fmax(m, shuffle_xor(m, 2));
#else
            if (c < chunks) PQ_AMAX8(red, K)[c] = m;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (c < chunks) {
                local const float* am = PQ_AMAX8(red, K) + (c & ~3);
                m = fmax(fmax(am[0], am[1]), fmax(am[2], am[3]));
            }
#endif
            const float d = m / 127.f, id = d != 0.f ? 1.f / d : 0.f;
            const int4 qa = convert_int4(rint(a[i] * id)), qb = convert_int4(rint(b[i] * id));
            const int4 q = qa + qb;
            int sum = q.x + q.y + q.z + q.w;
#ifdef NV_PTX
            sum += as_int(shuffle_xor(as_float(sum), 1));
            sum += as_int(shuffle_xor(as_float(sum), 2));
#else
            if (c < chunks) PQ_XS8(red, K)[c] = sum;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (c < chunks) {
                local const int* s8 = PQ_XS8(red, K) + (c & ~3);
                sum = s8[0] + s8[1] + s8[2] + s8[3];
            }
            barrier(CLK_LOCAL_MEM_FENCE);  // amax8 and xs8 are rewritten next step
#endif
            if (c < chunks) {
                xq[2 * c] = pack_char4(qa);
                xq[2 * c + 1] = pack_char4(qb);
                if (c % 4 == 0) {
                    xd[c / 4] = d;
                    xsb[c / 4] = sum;
                }
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

// acc[r] += this lane's share of row (row0 + r % PQ_ROWS) . x of matrix W0
// (r < PQ_ROWS) or W1 (r >= PQ_ROWS), for the PQ_ROWS * NMAT rows of the
// tile (matrices of M rows, planes of QB bytes per block). Each step issues
// the loads of PQ_UNROLL blocks of every row before their math. Rows past M
// repeat the last row; their sums are never written. The clamped load index
// and the guard on the math are redundant with the loop bound, but kept
// loads unconditional, which NVIDIA's compiler schedules better.
#define PLANAR_ROWS(Q, QB, W0, W1, M, acc, NMAT)                                           \
    {                                                                                      \
        global const uchar* q_[PQ_ROWS * (NMAT)];                                          \
        global const half* s_[PQ_ROWS * (NMAT)];                                           \
        for (int r = 0; r < PQ_ROWS * (NMAT); ++r) {                                       \
            global const uchar* w_ = r < PQ_ROWS ? (W0) : (W1);                            \
            const ulong row_ = (ulong)min(row0 + r % PQ_ROWS, (M) - 1);                    \
            q_[r] = w_ + row_ * nb * (QB);                                                 \
            s_[r] = (global const half*)(w_ + (ulong)(M) * nb * (QB)) + row_ * nb;         \
        }                                                                                  \
        local const uint4* xq_ = (local const uint4*)PQ_XQ(red);                          \
        local const float* xd_ = PQ_XD(red, K);                                            \
        local const int* xs_ = PQ_XSB(red, K);                                             \
        for (int b0 = lane; b0 < nb; b0 += PQ_LANES * PQ_UNROLL) {                         \
            Q##_UNIT wv_[PQ_UNROLL][PQ_ROWS * (NMAT)];                                     \
            float dv_[PQ_UNROLL][PQ_ROWS * (NMAT)];                                        \
            for (int u = 0; u < PQ_UNROLL; ++u) {                                          \
                const int b = min(b0 + u * PQ_LANES, nb - 1);                              \
                for (int r = 0; r < PQ_ROWS * (NMAT); ++r) {                               \
                    wv_[u][r] = Q##_LOAD(q_[r], b);                                        \
                    dv_[u][r] = vload_half(b, s_[r]);                                      \
                }                                                                          \
            }                                                                              \
            for (int u = 0; u < PQ_UNROLL; ++u) {                                          \
                const int b = b0 + u * PQ_LANES;                                           \
                if (b < nb) {                                                              \
                    const uint4 x0 = xq_[2 * b], x1 = xq_[2 * b + 1];                     \
                    const int xsum = xs_[b];                                               \
                    const float dx = xd_[b];                                               \
                    for (int r = 0; r < PQ_ROWS * (NMAT); ++r)                             \
                        acc[r] = fma(dv_[u][r] * dx, small_int_to_float(Q##_DOT(wv_[u][r], x0, x1, xsum)), acc[r]); \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

// The kernels below take their row walk by the unit's name (Q##_ROWS): the
// planar blocks here, the in-place K-quant super-blocks in kquant.cl.
#define Q4_ROWS PLANAR_ROWS
#define Q8_ROWS PLANAR_ROWS

// Sums each of the group's n values per lane over its PQ_LANES lanes; lane
// 0 gets the totals in v. With NV_PTX a group is a warp and shuffles do it.
#ifdef NV_PTX
#define LANES_REDUCE(v, n) \
    for (int r = 0; r < (n); ++r) v[r] = warp_sum(v[r]);
#else
#define LANES_REDUCE(v, n)                                                                        \
    {                                                                                             \
        local float* red_ = PQ_SUMS(red, K) + (get_local_id(0) / PQ_LANES) * PQ_LANES * (n);     \
        for (int r = 0; r < (n); ++r) red_[r * PQ_LANES + lane] = v[r];                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        for (int s = PQ_LANES / 2; s > 0; s >>= 1) {                                              \
            if (lane < s)                                                                         \
                for (int r = 0; r < (n); ++r) red_[r * PQ_LANES + lane] += red_[r * PQ_LANES + lane + s]; \
            barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        }                                                                                         \
        for (int r = 0; r < (n); ++r) v[r] = red_[r * PQ_LANES];                                  \
    }
#endif

// The scalars of a planar launch travel as one by-value argument: NVIDIA's
// OpenCL spends host time per kernel argument at every enqueue (H100, empty
// kernels: 9 buffers + 27 scalars 9.7 us, the same with the scalars in one
// struct 8.2 us; bench_opencl_stream_floor), and a decode step is a hundred
// enqueues. Buffers cannot be struct members, so they stay arguments.
// Mirrored by PlanarParams in cl_executable.cpp.
typedef struct {
    ulong xoff, w0off, y0off, w1off, y1off, w2off, y2off, boff, nwoff, poff, b1off, b2off;
    int M0, M1, M2, has_bias, K, Hd, rot, C, cache_f16, node;
    float eps, base;
} PlanarParams;

#define PQ_ARGS                                                                                      \
    global const uchar *xb, global const uchar *w0b, global uchar *y0b, global const uchar *w1b,      \
        global uchar *y1b, global const uchar *w2b, global uchar *y2b, global const uchar *bb,        \
        PlanarParams prm, local float *red
// Token n = work-group row n of a batched decode step (see MATVEC_TOKEN_ROW).
#define PQ_UNPACK                                                                                    \
    const int M0 = prm.M0, M1 = prm.M1, M2 = prm.M2, has_bias = prm.has_bias, K = prm.K;           \
    const ulong token = get_group_id(1);                                                             \
    const ulong xoff = prm.xoff + token * (ulong)K * 4, w0off = prm.w0off, y0off = prm.y0off + token * (ulong)M0 * 4, \
                w1off = prm.w1off, y1off = prm.y1off + token * (ulong)M1 * 4, w2off = prm.w2off,      \
                y2off = prm.y2off + token * (ulong)M2 * 4, boff = prm.boff + (has_bias == 2 ? token * (ulong)M0 * 4 : 0);

#define PQ_NORM_ARGS , global const uchar *nwb
#define PQ_X_GLOBAL red = pq_align(red); pq_quantize_x(CPTR(float, xb, xoff), 0, 0.f, K, red);
#define PQ_X_NORMED red = pq_align(red); pq_quantize_x(CPTR(float, xb, xoff), CPTR(float, nwb, prm.nwoff), prm.eps, K, red);

// This group's tile of PQ_ROWS rows, counted across the matrices; `mat` is
// the tile's matrix.
#define PLANAR_SELECT_TILE                                                               \
    const int lane = get_local_id(0) & (PQ_LANES - 1);                                   \
    int tile = get_group_id(0) * (get_local_size(0) / PQ_LANES) + get_local_id(0) / PQ_LANES; \
    const int tiles0 = (M0 + PQ_ROWS - 1) / PQ_ROWS, tiles1 = (M1 + PQ_ROWS - 1) / PQ_ROWS; \
    const int mat = tile < tiles0 ? 0 : tile < tiles0 + tiles1 ? 1 : 2;                  \
    SELECT_MATRIX(tile, tiles0, tiles1)                                                  \
    const int nb = K / QK;                                                               \
    const int row0 = tile * PQ_ROWS;

// What is added to row `row` of the tile's matrix: has_bias 1 (a MATMUL's
// bias) and 2 (a fused residual) to matrix 0, 3 a bias per matrix (a Q/K/V
// group with biases, all in bb).
#define PQ_BIAS(row)                                                                     \
    (has_bias == 3 ? CPTR(float, bb, mat == 0 ? boff : mat == 1 ? prm.b1off : prm.b2off)[row] \
                   : has_bias && first ? CPTR(float, bb, boff)[row] : 0.f)

#define MATVEC_PLANAR_KERNEL(NAME, Q, QB, EXTRA_ARGS, X_SETUP)                           \
    kernel void NAME(PQ_ARGS EXTRA_ARGS) {                                               \
        PQ_UNPACK                                                                        \
        X_SETUP                                                                          \
        PLANAR_SELECT_TILE                                                               \
        float acc[PQ_ROWS];                                                              \
        for (int r = 0; r < PQ_ROWS; ++r) acc[r] = 0.f;                                  \
        if (row0 < M) Q##_ROWS(Q, QB, w, w, M, acc, 1)                                   \
        LANES_REDUCE(acc, PQ_ROWS)                                                       \
        if (lane == 0)                                                                   \
            for (int r = 0; r < PQ_ROWS && row0 + r < M; ++r)                            \
                y[row0 + r] = acc[r] + PQ_BIAS(row0 + r);                                \
    }

// Gate (matrix 0) and up (matrix 1) rows of one tile, writing silu(gate) * up.
#define MATVEC_PLANAR_SWIGLU_KERNEL(NAME, Q, QB, EXTRA_ARGS, X_SETUP)                    \
    kernel void NAME(PQ_ARGS EXTRA_ARGS) {                                               \
        PQ_UNPACK                                                                        \
        X_SETUP                                                                          \
        const int lane = get_local_id(0) & (PQ_LANES - 1);                               \
        const int tile = get_group_id(0) * (get_local_size(0) / PQ_LANES) + get_local_id(0) / PQ_LANES; \
        const int nb = K / QK;                                                           \
        const int row0 = tile * PQ_ROWS;                                                 \
        float acc[2 * PQ_ROWS];                                                          \
        for (int r = 0; r < 2 * PQ_ROWS; ++r) acc[r] = 0.f;                              \
        if (row0 < M0) Q##_ROWS(Q, QB, w0b + w0off, w1b + w1off, M0, acc, 2)             \
        LANES_REDUCE(acc, 2 * PQ_ROWS)                                                   \
        if (lane == 0)                                                                   \
            for (int r = 0; r < PQ_ROWS && row0 + r < M0; ++r) {                         \
                const float g = acc[r];                                                  \
                PTR(float, y0b, y0off)[row0 + r] = g / (1.f + exp(-g)) * acc[PQ_ROWS + r]; \
            }                                                                            \
    }

// Decode Q/K/V (matrices 0, 1, 2 over the normalised x) with the ROPE of q
// and k and the cache stores of k and v after them, as rope_store does
// (kernels/elementwise.cl, same rounding): q rotated to y0, k rotated and v
// into the caches at y1 and y2 (row `pos` of [C, M1] and [C, M2], f16 or
// f32). Rotated pairs are neighbours (2i, 2i + 1) within a head of Hd, so a
// tile's two rows are one pair; dims from `rot` on are copied.
#if PQ_ROWS != 2
#error "matvec_norm_planar_rope needs tiles of one rotated pair"
#endif
#define PQ_ROPE_ARGS , global const uchar *pb, global int *err

#define MATVEC_PLANAR_ROPE_KERNEL(NAME, Q, QB)                                           \
    kernel void NAME(PQ_ARGS PQ_NORM_ARGS PQ_ROPE_ARGS) {                                \
        PQ_UNPACK                                                                        \
        const int Hd = prm.Hd, rot = prm.rot, C = prm.C, cache_f16 = prm.cache_f16;      \
        const float base = prm.base;                                                     \
        PLANAR_SELECT_TILE                                                               \
        PQ_X_NORMED                                                                      \
        float acc[PQ_ROWS] = {0.f, 0.f};                                                 \
        if (row0 < M) Q##_ROWS(Q, QB, w, w, M, acc, 1)                                   \
        LANES_REDUCE(acc, PQ_ROWS)                                                       \
        if (lane == 0 && row0 < M) {                                                     \
            const int p = CPTR(int, pb, prm.poff)[0];                                    \
            const int d = row0 % Hd;                                                     \
            float2 v = (float2)(acc[0] + PQ_BIAS(row0), acc[1] + PQ_BIAS(row0 + 1));     \
            if (mat < 2 && d < rot) v = rope_pair(v.x, v.y, (float)p, d / 2, rot, base); \
            if (mat == 0) {                                                              \
                y[row0] = v.x;                                                           \
                y[row0 + 1] = v.y;                                                       \
            } else if (p < 0 || p >= C) {                                                \
                if (mat == 1 && row0 == 0) report_error(err, ERR_POS_RANGE, prm.node);   \
            } else {                                                                     \
                global uchar* cb = mat == 1 ? y1b : y2b;                                 \
                const ulong at = (ulong)p * M + row0;                                    \
                cache_put(cb, mat == 1 ? y1off : y2off, cache_f16, at, v.x);             \
                cache_put(cb, mat == 1 ? y1off : y2off, cache_f16, at + 1, v.y);         \
            }                                                                            \
        }                                                                                \
    }

MATVEC_PLANAR_KERNEL(matvec_planar_q4_0, Q4, Q4_PLANE_BYTES, , PQ_X_GLOBAL)
MATVEC_PLANAR_KERNEL(matvec_planar_q8_0, Q8, Q8_PLANE_BYTES, , PQ_X_GLOBAL)
MATVEC_PLANAR_KERNEL(matvec_norm_planar_q4_0, Q4, Q4_PLANE_BYTES, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_KERNEL(matvec_norm_planar_q8_0, Q8, Q8_PLANE_BYTES, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_planar_q4_0, Q4, Q4_PLANE_BYTES, , PQ_X_GLOBAL)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_planar_q8_0, Q8, Q8_PLANE_BYTES, , PQ_X_GLOBAL)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_norm_planar_q4_0, Q4, Q4_PLANE_BYTES, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_SWIGLU_KERNEL(matvec_swiglu_norm_planar_q8_0, Q8, Q8_PLANE_BYTES, PQ_NORM_ARGS, PQ_X_NORMED)
MATVEC_PLANAR_ROPE_KERNEL(matvec_norm_planar_rope_q4_0, Q4, Q4_PLANE_BYTES)
MATVEC_PLANAR_ROPE_KERNEL(matvec_norm_planar_rope_q8_0, Q8, Q8_PLANE_BYTES)
