// The tensor-core prefill attention for head dims 33 to 64 (48, 64):
// attention_mma_kernel.cl comes next and compiles attention_mma_hd64 (see
// attention_mma.cl).
#ifdef MMA_KERNELS
#define AM_HD 64
#endif  // MMA_KERNELS
