// Matmuls over GGUF's other block types (dtypes.cl's quads: Q4_1, Q5_0,
// Q5_1, IQ4_NL, Q2_K, Q3_K) and hetero's E0M4, with the weights dequantized quad by quad as
// they are read: the decode matvec (matvec.cl's MATVEC_KERNEL, also grouped
// with the RMSNORM before it and the SwiGLU after a gate/up pair, as
// llama-quantize's fallbacks for widths that are not multiples of 256 sit
// where Q4_K would) and the prefill GEMM (gemm.cl's GEMM_KERNEL; gemm_mma.cl's
// on tensor cores).

// This lane's share of row . x (x in address space AS): lanes take
// neighbouring quads (neighbouring bytes), four in flight a step.
#define QUAD_DOT(NAME, QUAD, AS)                                                          \
    inline float NAME(global const uchar* wrow, AS const float* x, int K, int lane, int lanes) { \
        const int quads = K / 4;                                                          \
        float acc = 0.f;                                                                  \
        int v = lane;                                                                     \
        for (; v + 3 * lanes < quads; v += 4 * lanes) {                                   \
            const float4 w0 = QUAD(wrow, v), w1 = QUAD(wrow, v + lanes);                  \
            const float4 w2 = QUAD(wrow, v + 2 * lanes), w3 = QUAD(wrow, v + 3 * lanes);  \
            acc += dot(w0, vload4(v, x)) + dot(w1, vload4(v + lanes, x)) +                \
                   dot(w2, vload4(v + 2 * lanes, x)) + dot(w3, vload4(v + 3 * lanes, x)); \
        }                                                                                 \
        for (; v < quads; v += lanes) acc += dot(QUAD(wrow, v), vload4(v, x));           \
        return acc;                                                                       \
    }

// Weights of a GEMM K step (32 elements, 8 quads a row) for a tile of BM
// rows and a group of WG work-items: quad t is quad t % 8 of row t / 8,
// fetched already dequantized (as float bits); rows past M read as zero.
#define QUAD_FETCH(NAME, QUAD, ROW_BYTES, COUNT, BM, WG)                                      \
    inline void NAME(global const uchar* w, int M, int K, int m0, int k0, uint* r) {           \
        for (int i = 0; i < (COUNT); ++i) {                                                     \
            const int t = get_local_id(0) + i * (WG);                                           \
            const int m = m0 + t / 8;                                                           \
            const float4 v = (t < (BM) * 8 && m < M) ? QUAD(w + (ulong)m * ROW_BYTES(K), k0 / 4 + t % 8) : (float4)(0.f); \
            r[4 * i] = as_uint(v.x);                                                            \
            r[4 * i + 1] = as_uint(v.y);                                                        \
            r[4 * i + 2] = as_uint(v.z);                                                        \
            r[4 * i + 3] = as_uint(v.w);                                                        \
        }                                                                                       \
    }
#define GEMM_QR GEMM_CEIL(GEMM_BM * 8)

// The f32 tiled GEMM puts them into k-major Bs.
inline void gemm_put_w_quads(const uint* r, local float* Bs) {
    for (int i = 0; i < GEMM_QR; ++i) {
        const int t = get_local_id(0) + i * GEMM_WG;
        if (t >= GEMM_BM * 8) break;
        local float* dst = Bs + 4 * (t % 8) * GEMM_SB + t / 8;
        for (int e = 0; e < 4; ++e) dst[e * GEMM_SB] = as_float(r[4 * i + e]);
    }
}

// Per type T (blocks of ELEMS elements in BYTES bytes): its row size, dot,
// matvec, GEMM fetch and GEMM.
#define OTHER_QUANT_KERNELS(T, BYTES, ELEMS)                                                   \
    inline ulong row_bytes_##T(int K) { return (ulong)(K / (ELEMS)) * (BYTES); }             \
    QUAD_DOT(dot_##T, quad_##T, global)                                                        \
    QUAD_DOT(dot_##T##_l, quad_##T, local)                                                     \
    MATVEC_KERNEL(matvec_##T, dot_##T, row_bytes_##T, , X_GLOBAL)                             \
    MATVEC_KERNEL(matvec_norm_##T, dot_##T##_l, row_bytes_##T, NORM_ARGS, X_NORMED)           \
    MATVEC_SWIGLU_KERNEL(matvec_swiglu_##T, dot_##T, row_bytes_##T, , X_GLOBAL)               \
    MATVEC_SWIGLU_KERNEL(matvec_swiglu_norm_##T, dot_##T##_l, row_bytes_##T, NORM_ARGS, X_NORMED) \
    QUAD_FETCH(gemm_fetch_w_##T, quad_##T, row_bytes_##T, GEMM_QR, GEMM_BM, GEMM_WG)          \
    GEMM_KERNEL(gemm_##T, gemm_fetch_w_##T, gemm_put_w_quads, 4 * GEMM_QR)

OTHER_QUANT_KERNELS(q4_1, Q4_1_BYTES, QK)
OTHER_QUANT_KERNELS(q5_0, Q5_0_BYTES, QK)
OTHER_QUANT_KERNELS(q5_1, Q5_1_BYTES, QK)
OTHER_QUANT_KERNELS(iq4_nl, IQ4_NL_BYTES, QK)
OTHER_QUANT_KERNELS(q2_k, Q2K_BYTES, QKK)
OTHER_QUANT_KERNELS(q3_k, Q3K_BYTES, QKK)
OTHER_QUANT_KERNELS(e0m4, E0M4_BYTES, QK)

#ifdef MMA_KERNELS
// Tensor cores (gemm_mma.cl): the same quads, dequantized as they are
// fetched and written to the weight row's halves as f16 pairs.
#define MMA_QR ((MMA_BM * 8 + MMA_WG - 1) / MMA_WG)
inline void mma_put_w_quads(const uint* r, local uint* Bs, int step) {
    for (int i = 0; i < MMA_QR; ++i) {
        const int t = get_local_id(0) + i * MMA_WG;
        if (t >= MMA_BM * 8) break;
        local uint* dst = Bs + (t / 8) * MMA_ROW_WORDS + 2 * (t % 8);
#ifdef NV_PTX
        *(local uint2*)dst = (uint2)(pack_f16x2(as_float(r[4 * i]), as_float(r[4 * i + 1])), pack_f16x2(as_float(r[4 * i + 2]), as_float(r[4 * i + 3])));
#else
        vstore_half4((float4)(as_float(r[4 * i]), as_float(r[4 * i + 1]), as_float(r[4 * i + 2]), as_float(r[4 * i + 3])), 0, (local half*)dst);
#endif
    }
}

#define OTHER_QUANT_MMA_KERNEL(T)                                                              \
    QUAD_FETCH(mma_fetch_w_##T, quad_##T, row_bytes_##T, MMA_QR, MMA_BM, MMA_WG)              \
    GEMM_MMA_KERNEL(gemm_mma_##T, mma_fetch_w_##T, mma_put_w_quads, 4 * MMA_QR, 0, MMA_STEP_IN_ORDER)
OTHER_QUANT_MMA_KERNEL(q4_1)
OTHER_QUANT_MMA_KERNEL(q5_0)
OTHER_QUANT_MMA_KERNEL(q5_1)
OTHER_QUANT_MMA_KERNEL(iq4_nl)
OTHER_QUANT_MMA_KERNEL(q2_k)
OTHER_QUANT_MMA_KERNEL(q3_k)
OTHER_QUANT_MMA_KERNEL(e0m4)
#endif
