// The tensor-core prefill attention for head dims 129 to 256 (160, 192, 256):
// attention_mma_kernel.cl comes next and compiles attention_mma_hd256 (see
// attention_mma.cl).
#ifdef MMA_KERNELS
#define AM_HD 256
#endif  // MMA_KERNELS
