// Prefill attention on tensor cores (see gemm_mma.cl for the mma helper and
// where it runs): a work-group of AM_ROWS / 16 warps per (AM_ROWS query rows,
// head), walking the keys in tiles of 32 up to the block's last position.
// One kernel per head dim: attention_mma_kernel.cl follows this file and
// attention_mma_hd128.cl in the program, so it is compiled once for head dim
// 64 (attention_mma_hd64) and once for 128 (attention_mma_hd128). The query
// rows per work-group of each come from the host (AM_ROWS_HD64,
// AM_ROWS_HD128): at head dim 128, 64 rows would need more than the 48 KiB
// of local memory NVIDIA's OpenCL allows a work-group.
//
// Per key tile: S = Q K^T by mma (each warp its 16 rows x 32 keys), masked
// causally and written to local memory; one work-item per row then does the
// online softmax (running max and sum, in base 2) and writes P as f16; the
// warps rescale their output accumulators and add P V by mma. Q, K and V are
// staged as f16 (Q pre-scaled), products and sums are f32.
// Compiled with the GEMM's tensor-core kernels (MMA_KERNELS).
#ifdef MMA_KERNELS
#define AM_KEYS 32
// Local row stride in 32-bit words of a row of 32 halves + 8.
#define AM_NARROW 20
#define AM_S (AM_KEYS + 1)

inline float4 kv_load4(global const uchar* base, int f16, ulong i) {
    return f16 ? vload_half4(0, (global const half*)base + i) : vload4(0, (global const float*)base + i);
}

#ifndef AM_ROWS_HD64
#define AM_ROWS_HD64 64
#endif
#ifndef AM_ROWS_HD128
#define AM_ROWS_HD128 32
#endif
// The head dim 64 kernel: attention_mma_kernel.cl comes next.
#define AM_HD 64
#define AM_ROWS AM_ROWS_HD64
#define AM_NAME attention_mma_hd64
#endif  // MMA_KERNELS
