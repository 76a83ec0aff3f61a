// Helpers shared by every kernel of the provider.
//
// Tensors reach kernels as (byte base, byte offset) pairs so that bindings at
// any offset work without sub-buffers (whose offsets must meet the device's
// base-address alignment). GGUF blocks are 18 or 34 bytes, so quantized data
// is only ever assumed 2-byte aligned and read with ushort/uchar loads.

#define DT_F32 0
#define DT_F16 1
#define DT_BF16 2
#define DT_Q8_0 3
#define DT_Q4_0 4
#define DT_Q4_K 7
#define DT_Q5_K 8
#define DT_Q6_K 9
#define DT_Q4_1 10
#define DT_Q5_0 11
#define DT_Q5_1 12
#define DT_IQ4_NL 13
#define DT_Q2_K 14
#define DT_Q3_K 15
#define DT_E0M4 16

// Block sizes from hetero/sdk/block_layout.h (embedded ahead of this file).
#define QK HETERO_QK
#define Q8_BYTES HETERO_Q8_0_BYTES
#define Q4_BYTES HETERO_Q4_0_BYTES
// K-quant super-blocks: 256 elements; byte offsets inside a block follow GGUF.
#define QKK HETERO_QK_K
#define Q4K_BYTES HETERO_Q4_K_BYTES
#define Q5K_BYTES HETERO_Q5_K_BYTES
#define Q6K_BYTES HETERO_Q6_K_BYTES

// Bits of the execution error flag (err[0]); err[1] holds the lowest failing node.
#define ERR_ID_RANGE 1
#define ERR_POS_RANGE 2

#define PTR(T, base, off) ((global T*)((global uchar*)(base) + (off)))
#define CPTR(T, base, off) ((global const T*)((global const uchar*)(base) + (off)))

// A loop unrolled on NVIDIA (where arrays indexed by its counter then stay
// registers); elsewhere left to the compiler.
#ifdef NV_PTX
#define NV_UNROLL _Pragma("unroll")
#else
#define NV_UNROLL
#endif

// Whether a global address allows 16-byte vector loads and cp.async.
inline bool aligned16(global const uchar* p) { return ((ulong)(uintptr_t)p & 15) == 0; }

// Multi-matrix launches (matvec, gemm) take up to three (weights, output,
// rows) triples w0b/w0off/y0b/y0off/M0 ... Index `i` (a row, or a tile of
// rows), counted across the matrices, which have n0 and n1 of them, becomes
// an index into matrix 0, 1 or 2, whose `w`, `y` and `M` are selected;
// `first` says it is matrix 0.
#define SELECT_MATRIX(i, n0, n1)              \
    global const uchar* w = w0b + w0off;      \
    global float* y = PTR(float, y0b, y0off); \
    int M = M0;                               \
    const bool first = (i) < (n0);            \
    if (!first) {                             \
        i -= (n0);                            \
        w = w1b + w1off;                      \
        y = PTR(float, y1b, y1off);           \
        M = M1;                               \
        if ((i) >= (n1)) {                    \
            i -= (n1);                        \
            w = w2b + w2off;                  \
            y = PTR(float, y2b, y2off);       \
            M = M2;                           \
        }                                     \
    }

inline void report_error(global int* err, int bit, int node) {
    atomic_or(&err[0], bit);
    atomic_min(&err[1], node);
}

inline float half_bits_to_float(ushort h) {
    const uint sign = (uint)(h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0) {
        if (m == 0) return as_float(sign);
        e = 127 - 15 + 1;
        while ((m & 0x400u) == 0) { m <<= 1; --e; }
        m &= 0x3ffu;
        return as_float(sign | (e << 23) | (m << 13));
    }
    if (e == 31) return as_float(sign | 0x7f800000u | (m << 13));
    return as_float(sign | ((e + 127 - 15) << 23) | (m << 13));
}

// Round-to-nearest-even f32 -> f16 bits, identical to the SDK's reference
// (done in integer math so every device rounds subnormals and NaNs the same).
inline ushort float_to_half_bits(float f) {
    const uint x = as_uint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return (ushort)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
    if (a >= 0x477ff000u) return (ushort)(sign | 0x7c00u);
    if (a < 0x38800000u) {
        if (a < 0x33000000u) return (ushort)sign;
        const uint e = a >> 23;
        const uint m = (a & 0x7fffffu) | 0x800000u;
        const uint shift = 126 - e;
        uint h = m >> shift;
        const uint rem = m & ((1u << shift) - 1u);
        const uint mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (h & 1u))) ++h;
        return (ushort)(sign | h);
    }
    uint h = (a >> 13) - (112u << 10);
    const uint rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return (ushort)(sign | h);
}

// The four bytes of v less `offset` (a small integer) as exact floats,
// without int-to-float conversions (GPUs run those at a fraction of the
// float rate): under the exponent bits of 2^23 a byte b reads as 2^23 + b,
// and subtracting 2^23 + offset is exact. The values of convert_float4, so
// the rounding after is unchanged.
inline float4 bytes_as_float4(uint v, float offset) {
    const uint4 b = (uint4)(v, v >> 8, v >> 16, v >> 24) & 0xffu;
    return as_float4(b | 0x4B000000u) - (8388608.f + offset);
}

// An integer |i| < 2^22 as a float, the same way: i added to the bits of
// 1.5 * 2^23 reads as 1.5 * 2^23 + i, and the subtraction is exact.
inline float small_int_to_float(int i) { return as_float(i + 0x4B400000) - 12582912.f; }

// f16 bits held in a register, converted by the device's own instruction.
inline float half_reg_to_float(uint u) {
    const ushort h = (ushort)u;
    return vload_half(0, (const half*)&h);
}

inline float bf16_bits_to_float(ushort b) { return as_float((uint)b << 16); }

inline ushort float_to_bf16_bits(float f) {
    uint x = as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (ushort)(x >> 16);
}

// f16 scale of a block that is only 2-byte aligned.
inline float block_scale(global const uchar* blk) { return vload_half(0, (global const half*)blk); }

inline bool is_kquant(int dtype) { return dtype == DT_Q4_K || dtype == DT_Q5_K || dtype == DT_Q6_K; }

inline int kquant_bytes(int dtype) { return dtype == DT_Q4_K ? Q4K_BYTES : dtype == DT_Q5_K ? Q5K_BYTES : Q6K_BYTES; }

// 6-bit scale (.x) and min (.y) of sub-block j of a Q4_K/Q5_K block whose 12
// scale bytes start at s: sub-blocks 0-3 keep both in the low 6 bits of bytes
// j and j + 4; sub-blocks 4-7 keep their low 4 bits in byte j + 4 (scale in
// the low nibble, min in the high one) and their top 2 bits in the top bits
// of bytes j - 4 (scale) and j (min).
inline int2 kq_scale_min(global const uchar* s, int j) {
    const uint a = s[j & 3], b = s[(j & 3) + 4], c = s[(j & 3) + 8];
    return (int2)((int)HETERO_KQ_SCALE(a, c, (uint)j), (int)HETERO_KQ_MIN(b, c, (uint)j));
}

// Element e (0..255) of a K-quant super-block, computed as the SDK's decoder does.
inline float kq_elem(global const uchar* blk, int dtype, int e) {
    if (dtype == DT_Q6_K) {
        // Half h = e / 128; within it element l + 32c: low 4 bits in
        // ql[64h + 32(c & 1) + l] (high nibble for c >= 2), top 2 bits at
        // bit 2c of qh[32h + l]; scale e / 16.
        const int h = e >> 7, c = (e >> 5) & 3, l = e & 31;
        const uchar ql = blk[64 * h + 32 * (c & 1) + l];
        const int q = ((c & 2) ? (ql >> 4) : (ql & 15)) | (((blk[128 + 32 * h + l] >> (2 * c)) & 3) << 4);
        const float d = vload_half(0, (global const half*)(blk + 208));
        return d * (float)(char)blk[192 + (e >> 4)] * (float)(q - 32);
    }
    // Q4_K/Q5_K: sub-block j = e / 32 keeps its 4 low bits in the low (even j)
    // or high (odd j) nibbles of qs[32 (j / 2) + e % 32]; Q5_K's fifth bit is
    // bit j of qh[e % 32].
    const int j = e >> 5, l = e & 31;
    const bool q5 = dtype == DT_Q5_K;
    int q = (blk[(q5 ? 48 : 16) + 32 * (j >> 1) + l] >> (4 * (j & 1))) & 15;
    if (q5) q |= ((blk[16 + l] >> j) & 1) << 4;
    const int2 sm = kq_scale_min(blk + 4, j);
    const float2 dm = vload_half2(0, (global const half*)blk);
    return dm.x * (float)sm.x * (float)q - dm.y * (float)sm.y;
}

// Q4_0/Q8_0 weights the provider rewrote in its planar layout (see
// matvec_planar.cl): the quants of all `blocks` blocks (PLANE bytes each),
// then their f16 scales. Element i (flat, row-major) of such a tensor:
#define Q4_PLANE_BYTES 16
#define Q8_PLANE_BYTES 32
inline float planar_elem(global const uchar* base, int dtype, ulong blocks, ulong i) {
    const ulong b = i / QK;
    const int j = (int)(i % QK);
    const int plane = dtype == DT_Q8_0 ? Q8_PLANE_BYTES : Q4_PLANE_BYTES;
    const float d = half_bits_to_float(((global const ushort*)(base + blocks * plane))[b]);
    if (dtype == DT_Q8_0) return d * (float)(char)base[b * plane + j];
    const uchar q = base[b * plane + (j & 15)];
    return d * (float)((j < 16 ? (q & 0x0f) : (q >> 4)) - 8);
}

// NV_PTX (defined by the host for NVIDIA devices of compute capability 8.0+):
// kernels may use inline PTX. Warp reductions by shfl.sync need no barrier.
#ifdef NV_PTX
// v of the lane whose index differs from this one's by the bits of `mask`.
inline float shuffle_xor(float v, int mask) {
    float t;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(t) : "f"(v), "r"(mask));
    return t;
}

inline float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += shuffle_xor(v, o);
    return v;
}

inline float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, shuffle_xor(v, o));
    return v;
}
#endif

// Work-group reductions over local memory; the group size must be a power of
// two. With NV_PTX, groups of whole warps reduce each warp by shuffles and
// the warps' results through local memory: one barrier instead of log2(size).
inline float group_sum(float v, local float* red) {
    const int lid = get_local_id(0);
    const int n = get_local_size(0);
#ifdef NV_PTX
    if (n % 32 == 0) {
        v = warp_sum(v);
        if (lid % 32 == 0) red[lid / 32] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        float r = 0.f;
        for (int w = 0; w < n / 32; ++w) r += red[w];
        barrier(CLK_LOCAL_MEM_FENCE);
        return r;
    }
#endif
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = n / 2; s > 0; s >>= 1) {
        if (lid < s) red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

inline float group_max(float v, local float* red) {
    const int lid = get_local_id(0);
    const int n = get_local_size(0);
#ifdef NV_PTX
    if (n % 32 == 0) {
        v = warp_max(v);
        if (lid % 32 == 0) red[lid / 32] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        float r = -INFINITY;
        for (int w = 0; w < n / 32; ++w) r = fmax(r, red[w]);
        barrier(CLK_LOCAL_MEM_FENCE);
        return r;
    }
#endif
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = n / 2; s > 0; s >>= 1) {
        if (lid < s) red[lid] = fmax(red[lid], red[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
