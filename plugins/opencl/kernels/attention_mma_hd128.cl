// The tensor-core prefill attention for head dims 97 to 128 (112, 128):
// attention_mma_kernel.cl comes next and compiles attention_mma_hd128 (see
// attention_mma.cl).
#ifdef MMA_KERNELS
#define AM_HD 128
#endif  // MMA_KERNELS
