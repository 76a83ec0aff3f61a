// Prefill attention on tensor cores, flash-attention style (see gemm_mma.cl
// for the mma helpers and where they run): a work-group of AM_ROWS / 16
// warps per (AM_ROWS query rows, head) walks the keys in tiles of AM_KEYS up
// to the block's last position. One kernel per head dim:
// attention_mma_kernel.cl follows this file and attention_mma_hd128.cl in the
// program, so it is compiled once for head dim 64 (attention_mma_hd64) and
// once for 128 (attention_mma_hd128), with the query rows per work-group from
// the host (AM_ROWS_HD64, AM_ROWS_HD128).
//
// Per key tile, each warp keeps its 16 rows in registers throughout: S = Q K^T
// by mma (Q's fragments loaded once), masked causally and by the window,
// soft-capped; the online softmax (running max in base 2, running sum) on
// the accumulators themselves, the four lanes sharing a row reducing by
// shuffles; P converted to f16 in place as the a fragment of O += P V (the
// accumulator layout of two 8-key tiles is the a layout of one 16-key step),
// V's fragments read transposed by ldmatrix. K and V tiles are copied into
// local memory asynchronously (cp.async), the next tile while this one is
// used, in two buffers. Q, K, V and P are f16 (Q pre-scaled); products and
// sums are f32.
//
// In emulation (no NV_PTX) the same steps run with P passing through local
// memory and shuffles through a local scratch array.
#ifdef MMA_KERNELS
// Local row stride in 32-bit words of a row of `hd` halves + 8: an odd number
// of 16-byte units, so the 8 rows of an ldmatrix fall in 8 bank groups.
#define AM_ROW_WORDS(hd) ((hd) / 2 + 4)

// K and V rows c0.. c0 + keys - 1 of KV head hk (f16 cache, row stride
// `stride` halves) into local tiles with rows of AM_ROW_WORDS(hd) words.
// Rows past the block's last position may be unwritten, even NaN: they are
// never read, their tile rows are zeros.
inline void am_stage_kv(local uint* Ks, local uint* Vs, global const uchar* kbase, global const uchar* vbase, int c0, int last,
                        ulong stride, int hk, int hd, int keys, int wg, bool async) {
    const int words = AM_ROW_WORDS(hd);
    for (int u = get_local_id(0); u < keys * hd / 8; u += wg) {
        const int key = u / (hd / 8), d = 8 * (u % (hd / 8));
        const bool valid = c0 + key <= last;
        const ulong at = valid ? 2 * ((ulong)(c0 + key) * stride + (ulong)hk * hd + d) : 0;
        copy16_async(Ks + key * words + d / 2, kbase + at, valid, async);
        copy16_async(Vs + key * words + d / 2, vbase + at, valid, async);
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

#ifndef AM_ROWS_HD64
#define AM_ROWS_HD64 64
#endif
#ifndef AM_ROWS_HD128
#define AM_ROWS_HD128 64
#endif
// The head dim 64 kernel: attention_mma_kernel.cl comes next. Keys per tile:
// two buffers of K and V tiles must stay within NVIDIA's 48 KiB of local
// memory per work-group (36 KiB here, 34 KiB at head dim 128 with 32 keys).
#define AM_HD 64
#define AM_KEYS 64
#define AM_ROWS AM_ROWS_HD64
#define AM_NAME attention_mma_hd64
#endif  // MMA_KERNELS
