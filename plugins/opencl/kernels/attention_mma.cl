// Prefill attention on tensor cores, flash-attention style (see mma_common.cl
// for the mma helpers and where they run): a work-group of AM_ROWS / 16
// warps per (AM_ROWS query rows, head) walks the keys in tiles of AM_KEYS up
// to the block's last position.
//
// One program per padded head dim AM_HD (a multiple of 16), built when an
// executable first needs it: the host passes AM_HD, the query rows per
// work-group AM_ROWS and the keys per tile AM_KEYS as build options
// (kMmaAttentionKernels in src/cl_device.hpp), and the kernel is named
// attention_mma_hd<AM_HD>. The instance for head dims 32, 64, 96, 128 and
// 256 takes every head dim up to it (the host picks the smallest that fits):
// the real head dim `Hd` comes at run time, Q, K and V tiles hold zeros in
// the columns past it, 16-column steps past it are skipped and those output
// columns are never written.
//
// Per key tile, each warp keeps its 16 rows in registers throughout: S = Q K^T
// by mma (Q's fragments loaded once), masked causally and by the window,
// soft-capped; the online softmax (running max in base 2, running sum) on
// the accumulators themselves, the four lanes sharing a row reducing by
// shuffles; P converted to f16 in place as the a fragment of O += P V (the
// accumulator layout of two 8-key tiles is the a layout of one 16-key step),
// V's fragments read transposed by ldmatrix. K and V tiles are copied into
// local memory asynchronously (cp.async; where rows are 16-byte aligned:
// head dims that are multiples of 8), the next tile while this one is used,
// in two buffers. Q, K, V and P are f16 (Q pre-scaled); products and sums
// are f32.
//
// In emulation (no NV_PTX) the same steps run with P passing through local
// memory and shuffles through a local scratch array.
#ifdef MMA_KERNELS
// Local row stride in 32-bit words of a row of `hd` halves + 8: an odd number
// of 16-byte units, so the 8 rows of an ldmatrix fall in 8 bank groups.
#define AM_ROW_WORDS(hd) ((hd) / 2 + 4)

// Halves i and i + 1 of `s` as one word (i first), zeros from half n on.
inline uint am_pair(global const ushort* s, int i, int n) {
    return (i < n ? (uint)s[i] : 0u) | (i + 1 < n ? (uint)s[i + 1] << 16 : 0u);
}

// K and V rows c0.. c0 + keys - 1 of KV head hk (f16 cache of head dim hd,
// row stride `stride` halves) into local tiles of head dim pd >= hd (rows of
// AM_ROW_WORDS(pd) words). Columns hd.. pd - 1 are zeros; rows past the
// block's last position may be unwritten, even NaN: they are never read,
// their tile rows are zeros. `async` needs 16-byte aligned rows (hd a
// multiple of 8), so the partial piece at a row's end (hd % 8 halves) is
// only ever copied on the spot.
inline void am_stage_kv(local uint* Ks, local uint* Vs, global const uchar* kbase, global const uchar* vbase, int c0, int last,
                        ulong stride, int hk, int hd, int pd, int keys, int wg, bool async) {
    const int words = AM_ROW_WORDS(pd), pieces = pd / 8;
    for (int u = get_local_id(0); u < keys * pieces; u += wg) {
        const int key = u / pieces, d = 8 * (u % pieces);
        const bool valid = c0 + key <= last && d < hd;
        const ulong at = valid ? 2 * ((ulong)(c0 + key) * stride + (ulong)hk * hd + d) : 0;
        local uint* kd = Ks + key * words + d / 2;
        local uint* vd = Vs + key * words + d / 2;
        if (valid && d + 8 > hd) {
            global const ushort* ks = (global const ushort*)(kbase + at);
            global const ushort* vs = (global const ushort*)(vbase + at);
            const int n = hd - d;
            *(local uint4*)kd = (uint4)(am_pair(ks, 0, n), am_pair(ks, 2, n), am_pair(ks, 4, n), am_pair(ks, 6, n));
            *(local uint4*)vd = (uint4)(am_pair(vs, 0, n), am_pair(vs, 2, n), am_pair(vs, 4, n), am_pair(vs, 6, n));
        } else {
            copy16_async(kd, kbase + at, valid, async);
            copy16_async(vd, vbase + at, valid, async);
        }
    }
}

// The maximum / sum over the four lanes of a quad (the lanes holding one
// row of an mma accumulator). Emulation exchanges through `red` (a float per
// work-item) between barriers, so every work-item must call it.
inline float am_quad_max(float v, local float* red) {
#ifdef NV_PTX
    v = fmax(v, shuffle_xor(v, 1));
    return fmax(v, shuffle_xor(v, 2));
#else
    const int lid = get_local_id(0), q = lid & ~3;
    barrier(CLK_LOCAL_MEM_FENCE);
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return fmax(fmax(red[q], red[q + 1]), fmax(red[q + 2], red[q + 3]));
#endif
}

inline float am_quad_sum(float v, local float* red) {
#ifdef NV_PTX
    v += shuffle_xor(v, 1);
    return v + shuffle_xor(v, 2);
#else
    const int lid = get_local_id(0), q = lid & ~3;
    barrier(CLK_LOCAL_MEM_FENCE);
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return (red[q] + red[q + 1]) + (red[q + 2] + red[q + 3]);
#endif
}

// The instance: its kernel's name is attention_mma_hd<AM_HD>.
#if !defined(AM_HD) || !defined(AM_ROWS) || !defined(AM_KEYS) || AM_HD <= 0 || AM_ROWS <= 0 || AM_KEYS <= 0
#error "the host passes AM_HD, AM_ROWS and AM_KEYS (all positive) for the instance it builds"
#endif
#define AM_PASTE2(a, b) a##b
#define AM_PASTE(a, b) AM_PASTE2(a, b)
#define AM_NAME AM_PASTE(attention_mma_hd, AM_HD)
#if AM_HD % 16 != 0 || AM_KEYS % 16 != 0 || AM_ROWS % 16 != 0
#error "head dim, keys per tile and rows per work-group are whole mma steps (16)"
#endif
#define AM_WG (32 * AM_ROWS / 16)
#define AM_W AM_ROW_WORDS(AM_HD)
#define AM_STAGE (2 * AM_KEYS * AM_W)  // words of one buffer: K tile, then V tile
#if AM_ROWS > 2 * AM_KEYS
#error "Q staging shares a K/V buffer: AM_ROWS must be at most 2 * AM_KEYS"
#endif

__attribute__((reqd_work_group_size(AM_WG, 1, 1))) kernel void AM_NAME(
    global const uchar* qb, ulong qoff, global const uchar* kb, ulong koff, global const uchar* vb, ulong voff,
    global const uchar* pb, ulong poff, global uchar* yb, ulong yoff, int N, int H, int Hkv, int Hd, int C, float scale,
    int kv_f16, global int* err, int node, int window, float cap) {
    local uint4 buffers4[2 * AM_STAGE / 4];  // uint4: ldmatrix and cp.async need 16-byte rows
    local uint* buffers = (local uint*)buffers4;
#ifdef NV_PTX
    local uint* Qs = buffers + AM_STAGE;  // until Q's fragments are registers
    local float* const red = 0;           // unused: quads reduce by shuffles
#else
    local uint Qs[AM_ROWS * AM_W];
    local uint Ps[AM_ROWS * AM_ROW_WORDS(AM_KEYS)];
    local float red[AM_WG];
#endif
    local int row_pos[AM_ROWS];
    local int row_first[AM_ROWS];  // first key of the row's window
    local int block_last, block_first;

    const int lid = get_local_id(0);
    const int h = get_group_id(0), hk = h / (H / Hkv);
    const int n0 = get_group_id(1) * AM_ROWS;
    const int warp = lid / 32, lane = lid % 32, g = lane / 4, t = lane % 4;

    // Positions: -1 for rows past N and for bad positions (reported; their
    // output is zero, like the other attention kernels).
    if (lid == 0) {
        block_last = -1;
        block_first = INT_MAX;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < AM_ROWS) {
        int p = -1;
        if (n0 + lid < N) {
            p = CPTR(int, pb, poff)[n0 + lid];
            if (p < 0 || p >= C) {
                report_error(err, ERR_POS_RANGE, node);
                p = -1;
            }
        }
        row_pos[lid] = p;
        row_first[lid] = p >= 0 ? window_first(p, window) : 0;
        if (p >= 0) {
            atomic_max(&block_last, p);
            atomic_min(&block_first, row_first[lid]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int last = block_last;
    const int start = block_first == INT_MAX ? 0 : block_first;
    // The real head dim (1.. AM_HD): its 16-column steps, and cache rows.
    const int hd = Hd, steps = (Hd + 15) / 16;
    const ulong stride = (ulong)Hkv * hd;
    global const uchar* kbase = kb + koff;
    global const uchar* vbase = vb + voff;
    const bool async = aligned16(kbase) && aligned16(vbase) && hd % 8 == 0;
    if (start <= last) am_stage_kv(buffers, buffers + AM_KEYS * AM_W, kbase, vbase, start, last, stride, hk, hd, AM_HD, AM_KEYS, AM_WG, async);
    copy_async_commit();

    // Q, scaled so that scores come out in base 2; zeros past the head dim.
    const float qscale = scale * M_LOG2E_F;
    for (int u = lid; u < AM_ROWS * AM_HD / 4; u += AM_WG) {
        const int r = u / (AM_HD / 4), d = 4 * (u % (AM_HD / 4));
        float4 v = (float4)(0.f);
        if (n0 + r < N && d < hd) {
            global const float* src = CPTR(float, qb, qoff) + ((ulong)(n0 + r) * H + h) * hd + d;
            if (d + 4 <= hd) {
                v = vload4(0, src);
            } else {
                v.x = src[0];
                if (d + 1 < hd) v.y = src[1];
                if (d + 2 < hd) v.z = src[2];
            }
        }
        vstore_half4(v * qscale, 0, (local half*)(Qs + r * AM_W) + d);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    local const uint* q_tile = Qs + 16 * warp * AM_W;
#ifdef NV_PTX
    uint4 qf[AM_HD / 16];
    MMA_UNROLL
    for (int k = 0; k < AM_HD / 16; ++k) qf[k] = ldmatrix_a(q_tile + 8 * k, AM_W);
    barrier(CLK_LOCAL_MEM_FENCE);  // the second buffer is Q's until here
#endif

    // This lane's two rows (g and g + 8 of the warp's 16): what they may see.
    const int r_lo = 16 * warp + g, r_hi = r_lo + 8;
    const int pos_lo = row_pos[r_lo], pos_hi = row_pos[r_hi];
    const int first_lo = row_first[r_lo], first_hi = row_first[r_hi];
    const float cap2 = cap * M_LOG2E_F;  // the soft-cap in base-2 score units
    float m_lo = -INFINITY, m_hi = -INFINITY;  // running row maxima
    float l_lo = 0.f, l_hi = 0.f;              // this lane's part of the running row sums
    float o[AM_HD / 8][4];
    MMA_UNROLL
    for (int j = 0; j < AM_HD / 8; ++j)
        MMA_UNROLL
        for (int e = 0; e < 4; ++e) o[j][e] = 0.f;

    for (int c0 = start, tile = 0; c0 <= last; c0 += AM_KEYS, ++tile) {
        local uint* Ks = buffers + (tile % 2) * AM_STAGE;
        local uint* Vs = Ks + AM_KEYS * AM_W;
        // The next tile into the other buffer, while this one is used.
        if (c0 + AM_KEYS <= last) {
            local uint* next = buffers + ((tile + 1) % 2) * AM_STAGE;
            am_stage_kv(next, next + AM_KEYS * AM_W, kbase, vbase, c0 + AM_KEYS, last, stride, hk, hd, AM_HD, AM_KEYS, AM_WG, async);
        }
        copy_async_commit();
        copy_async_wait_previous();
        barrier(CLK_LOCAL_MEM_FENCE);

        // Scores of the warp's 16 rows (steps past the head dim add zeros:
        // skipped).
        float s[AM_KEYS / 8][4];
        MMA_UNROLL
        for (int j = 0; j < AM_KEYS / 8; ++j)
            MMA_UNROLL
            for (int e = 0; e < 4; ++e) s[j][e] = 0.f;
        MMA_UNROLL
        for (int j = 0; j < AM_KEYS / 8; j += 2)
            MMA_UNROLL
            for (int k = 0; k < AM_HD / 16; ++k) {
                if (k >= steps) continue;
#ifdef NV_PTX
                const uint4 b = ldmatrix_b2(Ks + 8 * j * AM_W + 8 * k, AM_W);
                mma_sync(s[j], qf[k], b.xy);
                mma_sync(s[j + 1], qf[k], b.zw);
#else
                mma_emulate(s[j], q_tile + 8 * k, AM_W, Ks + 8 * j * AM_W + 8 * k, AM_W);
                mma_emulate(s[j + 1], q_tile + 8 * k, AM_W, Ks + 8 * (j + 1) * AM_W + 8 * k, AM_W);
#endif
            }

        // Masked (causally and by the window), soft-capped; the tile's row maxima.
        float tmax_lo = -INFINITY, tmax_hi = -INFINITY;
        MMA_UNROLL
        for (int j = 0; j < AM_KEYS / 8; ++j)
            MMA_UNROLL
            for (int e = 0; e < 4; ++e) {
                const int key = c0 + 8 * j + 2 * t + e % 2;
                const bool hi = e >= 2;
                const bool seen = hi ? key <= pos_hi && key >= first_hi : key <= pos_lo && key >= first_lo;
                const float v = seen ? soft_cap(s[j][e], cap2) : -INFINITY;
                s[j][e] = v;
                if (hi)
                    tmax_hi = fmax(tmax_hi, v);
                else
                    tmax_lo = fmax(tmax_lo, v);
            }
        tmax_lo = am_quad_max(tmax_lo, red);
        tmax_hi = am_quad_max(tmax_hi, red);

        // Online softmax on the accumulators. A row with nothing to attend
        // to yet keeps p = 0 (no inf - inf).
        const float mnew_lo = fmax(m_lo, tmax_lo), mnew_hi = fmax(m_hi, tmax_hi);
        const float corr_lo = mnew_lo == -INFINITY ? 1.f : exp2(m_lo - mnew_lo);
        const float corr_hi = mnew_hi == -INFINITY ? 1.f : exp2(m_hi - mnew_hi);
        m_lo = mnew_lo;
        m_hi = mnew_hi;
        float sum_lo = 0.f, sum_hi = 0.f;
        MMA_UNROLL
        for (int j = 0; j < AM_KEYS / 8; ++j)
            MMA_UNROLL
            for (int e = 0; e < 4; ++e) {
                const bool hi = e >= 2;
                const float m = hi ? mnew_hi : mnew_lo;
                const float p = m == -INFINITY ? 0.f : exp2(s[j][e] - m);
                s[j][e] = p;
                if (hi)
                    sum_hi += p;
                else
                    sum_lo += p;
            }
        l_lo = l_lo * corr_lo + sum_lo;
        l_hi = l_hi * corr_hi + sum_hi;
        MMA_UNROLL
        for (int j = 0; j < AM_HD / 8; ++j) {
            o[j][0] *= corr_lo;
            o[j][1] *= corr_lo;
            o[j][2] *= corr_hi;
            o[j][3] *= corr_hi;
        }

        // O += P V, 16 keys a step; output columns past the head dim's last
        // 16-column step are skipped (they stay zero and are not written).
#ifndef NV_PTX
        local uint* p_tile = Ps + 16 * warp * AM_ROW_WORDS(AM_KEYS);
        for (int j = 0; j < AM_KEYS / 8; ++j)
            for (int e = 0; e < 4; ++e)
                vstore_half(s[j][e], 8 * j + 2 * t + e % 2, (local half*)(p_tile + (g + (e / 2) * 8) * AM_ROW_WORDS(AM_KEYS)));
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
        MMA_UNROLL
        for (int k = 0; k < AM_KEYS / 16; ++k) {
#ifdef NV_PTX
            const uint4 a = (uint4)(pack_f16x2(s[2 * k][0], s[2 * k][1]), pack_f16x2(s[2 * k][2], s[2 * k][3]),
                                    pack_f16x2(s[2 * k + 1][0], s[2 * k + 1][1]), pack_f16x2(s[2 * k + 1][2], s[2 * k + 1][3]));
            MMA_UNROLL
            for (int j = 0; j < AM_HD / 8; j += 2) {
                if (j >= 2 * steps) continue;
                const uint4 b = ldmatrix_b2_trans(Vs + 16 * k * AM_W + 4 * j, AM_W);
                mma_sync(o[j], a, b.xy);
                mma_sync(o[j + 1], a, b.zw);
            }
#else
            for (int j = 0; j < 2 * steps; ++j)
                mma_emulate_strided(o[j], p_tile + 8 * k, AM_ROW_WORDS(AM_KEYS), Vs + 16 * k * AM_W + 4 * j, 1, 2 * AM_W);
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // the next tile's copies overwrite this buffer
    }

    // Row sums over the quad; rows with a bad position come out zero. Only
    // the head dim's columns are written: pairs, and a last single column
    // where it is odd.
    l_lo = am_quad_sum(l_lo, red);
    l_hi = am_quad_sum(l_hi, red);
    const float inv_lo = pos_lo < 0 ? 0.f : 1.f / l_lo, inv_hi = pos_hi < 0 ? 0.f : 1.f / l_hi;
    global float* y = PTR(float, yb, yoff);
    const int n_lo = n0 + r_lo, n_hi = n0 + r_hi;
    MMA_UNROLL
    for (int j = 0; j < AM_HD / 8; ++j) {
        const int d = 8 * j + 2 * t;
        if (d >= hd) continue;
        global float* y_lo = y + ((ulong)n_lo * H + h) * hd + d;
        global float* y_hi = y + ((ulong)n_hi * H + h) * hd + d;
        if (d + 1 < hd) {
            if (n_lo < N) vstore2((float2)(o[j][0], o[j][1]) * inv_lo, 0, y_lo);
            if (n_hi < N) vstore2((float2)(o[j][2], o[j][3]) * inv_hi, 0, y_hi);
        } else {
            if (n_lo < N) *y_lo = o[j][0] * inv_lo;
            if (n_hi < N) *y_hi = o[j][2] * inv_hi;
        }
    }
}
#endif  // MMA_KERNELS
