// The per-ISA kernel table. Each kernels_<isa>.cpp fills one table; the
// provider picks one at instance creation after checking the CPU.
//
// This header is included by generic code and by the ISA files, so it holds
// only plain declarations: no intrinsics and no inline functions (an inline
// function compiled with ISA flags could be the copy the linker keeps for the
// generic code too).
#pragma once

#include <hetero/ep_api.h>

#include <cstddef>
#include <cstdint>

namespace hetero::cpu {

// One Q8_0-quantized block of an activation row: d = amax/127, qs =
// round-to-nearest(x/d); d is held as a float (ops_matmul.cpp rounds it to
// f16 precision, as a GGUF Q8_0 block stores it, under llama_act_grids).
// Unlike the GGUF block, -sum(qs) is kept, so a Q4_0 dot product can use the
// stored nibbles (0..15) directly and fold their offset of 8 in afterwards:
// sum((q - 8) * x) = sum(q * x) - 8 * sum(x); vector kernels add neg_sum to
// each of their eight 32-bit lanes.
struct ActBlock {
    float d;
    int32_t neg_sum;  // -sum(qs)
    int8_t qs[32];
};
static_assert(sizeof(ActBlock) == 40, "ActBlock layout");

// Everything a matmul tile needs; rows of x/xq/y are contiguous.
// How a kernel that reads weights once (decode) asks for them ahead of use:
// not at all (the hardware prefetchers alone), into L1 (prefetcht0), into L2
// (prefetcht1) or non-temporally (prefetchnta). Which is fastest depends on
// the CPU (cpu_provider.cpp's decode_prefetch option).
enum class StreamPrefetch : uint8_t { kNone, kL1, kL2, kNonTemporal };

struct MatmulArgs {
    const uint8_t* w;         // weight rows [M, K] in their dtype
    uint64_t w_row_bytes;     // bytes per weight row
    const float* x;           // activations [N, K] f32 (float-weight paths)
    const ActBlock* xq;       // activations quantized [N, K/32] (block-weight paths)
    const uint8_t* wp;        // weights in the packed layout (packed paths only)
    const float* bias;        // [M] or null
    float* y;                 // output [N, M]
    int64_t k, m;             // row width and output width (y's row stride)
    // K-quant weights: every 32-element block of xq shares its 256-element
    // super-block's scale (llama.cpp's Q8_K grid), so tiles may sum a
    // super-block's products as integers.
    bool act_superblock_scale;
    // Packed decode: groups of 16 rows whose weight streams one thread reads
    // side by side (1, 2 or 4; run_matmul resolves Kernels::decode_streams).
    int decode_streams;
    StreamPrefetch stream_prefetch;  // Kernels::stream_prefetch
};

// Packed layout of Q4_0/Q8_0 weights for the packed matmul kernels: groups of
// kPackRows rows; per group, block by block, the kPackRows f16 scales and then
// the quants transposed in 4-byte slices (slice i of every row, row after
// row), so one vector holds the same four weights of all rows of the group.
// Q4_0 keeps its nibble bytes as stored (slices i = 0..3 of the 16 bytes);
// Q8_0 quants are stored offset by +128 (xor 0x80) so they are unsigned.
constexpr int64_t kPackRows = 16;
constexpr uint64_t kPackScaleBytes = 2 * kPackRows;
constexpr uint64_t kPackGroupBlockQ4 = kPackScaleBytes + 16 * kPackRows;  // 288
constexpr uint64_t kPackGroupBlockQ8 = kPackScaleBytes + 32 * kPackRows;  // 544

// Packed Q4_K: per group of kPackRows rows and 256-element super-block, the
// rows' f16 d, then their f16 dmin, the 6-bit scales and mins as bytes
// (sub-block j of every row: [j][row]), then the quants: for each 32-byte
// chunk p of a row (elements 64p..64p+31 in the low nibbles, 64p+32.. in the
// high ones), its 4-byte slices i = 0..7 of all rows, row after row.
constexpr uint64_t kPackQ4KScalesAt = 2 * kPackScaleBytes;                // 64
constexpr uint64_t kPackQ4KMinsAt = kPackQ4KScalesAt + 8 * kPackRows;     // 192
constexpr uint64_t kPackQ4KQuantsAt = kPackQ4KMinsAt + 8 * kPackRows;     // 320
constexpr uint64_t kPackGroupBlockQ4K = kPackQ4KQuantsAt + 128 * kPackRows;  // 2368

// Packed Q6_K: per group and super-block, ql's 4-byte slices (half h = 0,
// 1; slice i = 0..15 of its 64 bytes; all rows), then qh's (half h; slice i
// = 0..7), the 16 scales as bytes ([group][row]), then the rows' f16 d. The
// quants come first so that they start on a cache line in every other record.
constexpr uint64_t kPackQ6KLowAt = 0;
constexpr uint64_t kPackQ6KHighAt = kPackQ6KLowAt + 128 * kPackRows;     // 2048
constexpr uint64_t kPackQ6KScalesAt = kPackQ6KHighAt + 64 * kPackRows;   // 3072
constexpr uint64_t kPackQ6KScaleAt = kPackQ6KScalesAt + 16 * kPackRows;  // 3328: d
constexpr uint64_t kPackGroupBlockQ6K = kPackQ6KScaleAt + kPackScaleBytes;  // 3360

// Scratch floats Kernels::attend_rows needs: the transposed queries and the
// rows' scores side by side.
constexpr uint64_t kAttendRowsWork(int64_t hd, int64_t span) { return uint64_t(16 * hd + 16 * (span + 4)); }
// The head sizes Kernels::attend_rows takes.
constexpr bool attend_rows_head_size(int64_t hd) { return hd == 64 || hd == 128 || hd == 256; }
// Query rows Kernels::attend_part takes at once: attention of this many
// rows or fewer (decode) runs split into chunks of cache rows.
constexpr int kSplitRows = 8;
// Query heads Kernels::attend_part takes at once.
constexpr int64_t kPartMaxHeads = 128;
// Scratch floats Kernels::attend_part needs: scores and per-head maxima and
// sums, heads padded to 16.
constexpr uint64_t kAttendPartWork(int rows, int64_t heads, int64_t span) {
    return uint64_t(rows) * uint64_t(span + 2) * uint64_t((heads + 15) / 16 * 16);
}

// Computes y[n0..n1) x [m0..m1) of one matmul. The packed variants need m0
// and m1 to be multiples of kPackRows.
using MatmulTileFn = void (*)(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

// What a matmul with weights of one dtype runs on one ISA: a row of
// Kernels::matmul. The float types' tiles read x; the block types' either
// keep the activations in f32 too (the portable tiles: a few blocks of a
// weight row are dequantised to f32 at a time and reused by every activation
// row of the tile) or take xq and use int8 dot products per block or
// sub-block (int8_act). K-quant activations are on llama.cpp's Q8_K grid
// either way (ops_matmul.cpp: one scale per 256; the f32 tiles get the
// rounded values d * q), the 32-element types' as for Q4_0. K-quants need k
// a multiple of 256, the other block types of 32.
struct MatmulKernel {
    MatmulTileFn tile = nullptr;  // null: this ISA has no matmul for the dtype
    // Over the packed layout (packed_weights.cpp), m0 and m1 multiples of
    // kPackRows; null where the ISA has no packed kernel. The packed K-quant
    // tiles take activations on the Q8_K grid only.
    MatmulTileFn packed = nullptr;
    bool int8_act = false;  // the tiles read xq, not x
};

// Rows of Kernels::matmul: one per dtype of the ABI this provider speaks.
constexpr uint32_t kMatmulDtypes = HETERO_DTYPE_COUNT_1_3;

struct Kernels {
    const char* name = nullptr;  // "scalar", "avx2", "avx512", "avx512-vnni", "neon"

    // One activation row of k floats (k a multiple of 32) -> k/32 blocks.
    void (*quantize_act)(const float* x, ActBlock* out, int64_t k) = nullptr;

    // Matmul tiles indexed by the weights' hetero_dtype (as ggml's
    // type_traits_cpu is by ggml_type): a new weight type is one row per
    // table. Rows left empty are dtypes the ISA cannot multiply with.
    MatmulKernel matmul[kMatmulDtypes] = {};

    // Attention helpers over one cache row of n elements.
    float (*dot_f32)(const float* a, const float* b, int64_t n) = nullptr;
    float (*dot_f16)(const uint16_t* a, const float* b, int64_t n) = nullptr;
    void (*axpy_f32)(float* y, float alpha, const float* x, int64_t n) = nullptr;  // y += alpha * x
    void (*axpy_f16)(float* y, float alpha, const uint16_t* x, int64_t n) = nullptr;

    // Row conversions f32 <-> f16 (round to nearest even).
    void (*f32_to_f16_row)(const float* x, uint16_t* y, int64_t n) = nullptr;
    void (*f16_to_f32_row)(const uint16_t* x, float* y, int64_t n) = nullptr;

    // One query row of one head: out[hd] = softmax(scores) . V over cache rows
    // first..len-1, scores[r] = scale * q . K[r] (soft-capped when cap > 0);
    // K/V rows `stride` elements apart, f16 or f32; `scores` is scratch of
    // len floats. Null where the ISA has none (ops_attention.cpp then uses
    // the row helpers above).
    void (*attend_row)(const float* q, const uint8_t* k, const uint8_t* v, uint64_t stride, int64_t hd, int64_t first,
                       int64_t len, float scale, float cap, bool f16, float* scores, float* out) = nullptr;
    // Up to 16 query rows of one head at once (prefill), f32 K/V, no soft
    // cap: row r (q + r * q_stride) attends to cache rows first[r]..len[r]-1
    // and writes out + r * out_stride, as attend_row would. `work` is
    // scratch of kAttendRowsWork(hd, span) floats, span = max len - min
    // first; hd as attend_rows_head_size allows, rows 1..16. Null where the
    // ISA has none.
    void (*attend_rows)(const float* q, uint64_t q_stride, int rows, const float* k, const float* v, uint64_t stride, int64_t hd,
                        const int64_t* first, const int64_t* len, float scale, float* work, float* out, uint64_t out_stride) = nullptr;
    // Flash-decoding's part of one chunk of cache rows (ops_attention_split.cpp):
    // for up to kSplitRows query rows and up to kPartMaxHeads query heads
    // (`group` of them per KV head), query row i (q + i * q_stride, head h at h * hd) over
    // cache rows first[i]..len[i]-1 (none when first[i] >= len[i]); K/V as
    // attend_row takes them, pointing at the first KV head of the range.
    // Writes acc[(i * heads + h) * hd ..] = the sum over the rows of
    // exp(s - max) * V, ml[i * heads + h] = the scores' max and
    // ml[(rows + i) * heads + h] = the sum of exp(s - max) (-inf and 0 for
    // no rows). `work` is scratch of kAttendPartWork(rows, heads, span)
    // floats, span >= len[i] - first[i]. Null where the ISA has none
    // (ops_attention_split.cpp then uses the row helpers above).
    void (*attend_part)(const float* q, uint64_t q_stride, int rows, int64_t heads, int64_t group, const uint8_t* k, const uint8_t* v,
                        uint64_t stride, int64_t hd, const int64_t* first, const int64_t* len, float scale, float cap, bool f16,
                        float* work, int64_t span, float* acc, float* ml) = nullptr;
    // out[i] = silu(g[i]) * u[i]; null where the ISA has none (ops.cpp's
    // scalar loop then).
    void (*swiglu_row)(const float* g, const float* u, float* out, int64_t n) = nullptr;
    // Activations on llama.cpp's grids (the provider option llama_act_grids,
    // default on): K-quant matmuls on its Q8_K grid (one scale per 256), the
    // other block types' int8 blocks with their scale rounded to f16 as a
    // Q8_0 block stores it. Off: per-32 int8 blocks with f32 scales on the
    // int8 paths and exact f32 on the portable tiles, as the GPU providers
    // compute, so a matmul split between them computes one set of products.
    bool llama_act_grids = true;
    // Weight streams a thread reads side by side in a packed decode matmul
    // (the provider option decode_streams): 1, 2 or 4; 0 picks by the row
    // width (ops_matmul.cpp).
    int decode_streams = 0;
    // How those streams are prefetched (the provider option decode_prefetch).
    StreamPrefetch stream_prefetch = StreamPrefetch::kNonTemporal;
    // Cache rows per chunk of split (flash-decoding) attention (the provider
    // option attention_chunk); 0 picks by rows and threads
    // (ops_attention_split.cpp).
    int64_t attention_chunk = 0;
};

// The portable tiles of the block types other than Q8_0/Q4_0
// (kernels_scalar.cpp), also used by tables without a vector version.
void matmul_q4_k_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_q5_k_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_q6_k_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_q4_1_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_e0m4_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_q5_0_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_q5_1_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_iq4_nl_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_q2_k_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void matmul_q3_k_portable(const MatmulArgs& a, int64_t m0, int64_t m1, int64_t n0, int64_t n1);

const Kernels& kernels_scalar();
#if defined(HETERO_CPU_X86)
const Kernels& kernels_avx2();
const Kernels& kernels_avx512();
const Kernels& kernels_avx512_vnni();
const Kernels& kernels_avx512_amx();  // needs the OS's permission first (cpu_info.cpp)
#endif
#if defined(HETERO_CPU_AARCH64)
const Kernels& kernels_neon();
#endif

}  // namespace hetero::cpu
