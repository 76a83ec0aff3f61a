// The tensor-core prefill attention for head dims 1 to 32:
// attention_mma_kernel.cl comes next and compiles attention_mma_hd32 (see
// attention_mma.cl).
#ifdef MMA_KERNELS
#define AM_HD 32
#endif  // MMA_KERNELS
