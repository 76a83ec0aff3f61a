// The head dim 128 kernel (Llama-7B-class models): attention_mma_kernel.cl
// comes next. See attention_mma.cl.
#ifdef MMA_KERNELS
#define AM_HD 128
#define AM_KEYS 32
#define AM_ROWS AM_ROWS_HD128
#define AM_NAME attention_mma_hd128
#endif  // MMA_KERNELS
