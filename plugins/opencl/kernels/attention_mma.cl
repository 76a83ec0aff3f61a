// Prefill attention on tensor cores, flash-attention style (see gemm_mma.cl
// for the mma helpers and where they run): a work-group of AM_ROWS / 16
// warps per (AM_ROWS query rows, head) walks the keys in tiles of AM_KEYS up
// to the block's last position.
//
// One kernel per padded head dim AM_HD (a multiple of 16): each
// attention_mma_hd<AM_HD>.cl in the program is followed by
// attention_mma_kernel.cl, which compiles attention_mma_hd<AM_HD> with the
// query rows per work-group and the keys per tile the host passes
// (AM_ROWS_HD<AM_HD>, AM_KEYS_HD<AM_HD>; kMmaAttentionKernels in
// src/cl_device.hpp). The instance for head dims 32, 64, 96, 128 and 256
// takes every head dim up to it (the host picks the smallest that fits): the
// real head dim `Hd` comes at run time, Q, K and V tiles hold zeros in the
// columns past it, 16-column steps past it are skipped and those output
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

// An instance's settings by name: AM_PASTE(AM_ROWS_HD, AM_HD) is
// AM_ROWS_HD<AM_HD>.
#define AM_PASTE2(a, b) a##b
#define AM_PASTE(a, b) AM_PASTE2(a, b)
#endif  // MMA_KERNELS
