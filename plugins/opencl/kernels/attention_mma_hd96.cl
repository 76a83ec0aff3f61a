// The tensor-core prefill attention for head dims 65 to 96 (72, 80, 96):
// attention_mma_kernel.cl comes next and compiles attention_mma_hd96 (see
// attention_mma.cl).
#ifdef MMA_KERNELS
#define AM_HD 96
#endif  // MMA_KERNELS
