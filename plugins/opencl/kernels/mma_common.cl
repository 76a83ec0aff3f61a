// What the tensor-core kernels share (the GEMMs of gemm_mma.cl and the
// prefill attention of attention_mma.cl, which is built as programs of its
// own): copies into local memory by cp.async, and the mma.m16n8k16
// fragments, loads and products, as inline PTX (NV_PTX) or the same
// arithmetic in plain OpenCL C (emulation).
#ifdef MMA_KERNELS
// Loops over fragments and tiles are unrolled on NVIDIA, so that
// accumulators and fragments stay registers. Emulation keeps them rolled:
// the work-item loops an OpenCL CPU compiler builds around barriers grow
// with unrolled code, and PoCL took minutes to build the program.
#ifdef NV_PTX
#define MMA_UNROLL _Pragma("unroll")
#else
#define MMA_UNROLL _Pragma("unroll 1")
#endif

// 16 bytes from global to local memory, zeros where !valid. With NV_PTX
// and `async` (16-byte aligned source) by cp.async, which needs no
// registers and does not wait: copy_async_commit closes the group of copies
// issued since the last one, copy_async_wait_previous waits until all but
// the latest group have landed (this work-item's copies; a barrier after it
// makes every work-item's visible). Elsewhere the copy is done on the spot
// (halves: any 2-byte aligned source) and the two calls do nothing.
inline void copy16_async(local uint* dst, global const uchar* src, bool valid, bool async) {
#ifdef NV_PTX
    if (async) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"((uint)(uintptr_t)dst), "l"(src), "r"(valid ? 16 : 0)
                     : "memory");
        return;
    }
#endif
    *(local uint4*)dst = valid ? as_uint4(vload8(0, (global const ushort*)src)) : (uint4)(0u);
}

inline void copy_async_commit(void) {
#ifdef NV_PTX
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

inline void copy_async_wait_previous(void) {
#ifdef NV_PTX
    asm volatile("cp.async.wait_group 1;" ::: "memory");
#endif
}

#ifdef NV_PTX
// An f16 pair (lo in the low half), each rounded to nearest-even as
// vstore_half does, by one instruction.
inline uint pack_f16x2(float lo, float hi) {
    uint r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#endif

// Fragment layout of mma.m16n8k16 (PTX ISA): lane = 4 g + t; a0..a3 hold
// (row g, k 2t..2t+1), (g+8, 2t), (g, 2t+8), (g+8, 2t+8); b0, b1 hold (col g,
// k 2t), (g, 2t+8); c0..c3 are (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
// A tile argument below is the 32-bit word of its row 0, k 0 in local
// memory, with rows `words` apart.
#ifdef NV_PTX
// This lane's words of the 16 x 16 a fragment / of the 8 x 16 b fragment.
inline uint4 mma_words_a(local const uint* tile, int words) {
    const int lane = get_local_id(0) % 32;
    local const uint* a = tile + (lane / 4) * words + lane % 4;
    return (uint4)(a[0], a[8 * words], a[4], a[8 * words + 4]);
}

inline uint2 mma_words_b(local const uint* tile, int words) {
    const int lane = get_local_id(0) % 32;
    local const uint* b = tile + (lane / 4) * words + lane % 4;
    return (uint2)(b[0], b[4]);
}

// c += a b^T on the fragments.
inline void mma_sync(float* c, uint4 a, uint2 b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y));
}

// Four 8 x 8 f16 matrices: lanes 8i..8i+7 give the rows of matrix i; lane
// 4g + t receives word t of row g of each (.trans: halves 2t and 2t+1 of
// column g, i.e. of rows 2t and 2t+1).
#define LDMATRIX_X4(NAME, VARIANT)                                                                \
    inline uint4 NAME(local const uint* row) {                                                    \
        uint4 r;                                                                                  \
        asm volatile("ldmatrix.sync.aligned.m8n8.x4" VARIANT ".shared.b16 {%0,%1,%2,%3}, [%4];"   \
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)                                 \
                     : "r"((uint)(uintptr_t)row));                                                \
        return r;                                                                                 \
    }
LDMATRIX_X4(ldmatrix_x4, "")
LDMATRIX_X4(ldmatrix_x4_trans, ".trans")

// Fragments from local tiles whose rows are `words` 32-bit words apart (16
// bytes a multiple, for ldmatrix). The 16 x 16 a fragment at `tile`:
// matrices (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) are
// a0..a3.
inline uint4 ldmatrix_a(local const uint* tile, int words) {
    const int lane = get_local_id(0) % 32;
    return ldmatrix_x4(tile + ((lane % 8) + 8 * ((lane / 8) % 2)) * words + 4 * (lane / 16));
}

// The b fragments of two 8-row tiles (rows 0-7: .xy, rows 8-15: .zw) over
// k 0-15, rows being the n of the product.
inline uint4 ldmatrix_b2(local const uint* tile, int words) {
    const int lane = get_local_id(0) % 32;
    return ldmatrix_x4(tile + ((lane % 8) + 8 * (lane / 16)) * words + 4 * ((lane / 8) % 2));
}

// The same from a tile stored k-major (16 rows of k, n along the row): the
// b fragments of n 0-7 (.xy) and 8-15 (.zw).
inline uint4 ldmatrix_b2_trans(local const uint* tile, int words) {
    const int lane = get_local_id(0) % 32;
    return ldmatrix_x4_trans(tile + ((lane % 8) + 8 * ((lane / 8) % 2)) * words + 4 * (lane / 16));
}
#else
// The same arithmetic in plain OpenCL C, reading the tiles: b's element
// (n, k) is half n * b_n + k * b_k of b_tile (a k-major tile has b_n = 1).
inline void mma_emulate_strided(float* c, local const uint* a_tile, int a_words, local const uint* b_tile, int b_n, int b_k) {
    const int lane = get_local_id(0) % 32, g = lane / 4, t = lane % 4;
    for (int e = 0; e < 4; ++e) {
        local const half* a = (local const half*)(a_tile + (g + (e / 2) * 8) * a_words);
        local const half* b = (local const half*)b_tile + (2 * t + e % 2) * b_n;
        float s = c[e];
        for (int k = 0; k < 16; ++k) s = fma(vload_half(k, a), vload_half(k * b_k, b), s);
        c[e] = s;
    }
}

inline void mma_emulate(float* c, local const uint* a_tile, int a_words, local const uint* b_tile, int b_words) {
    mma_emulate_strided(c, a_tile, a_words, b_tile, 2 * b_words, 1);
}
#endif

#endif  // MMA_KERNELS
