// Matmul: y[N, M] = x[N, K] * W[M, K]^T (+ bias), split into tiles of output
// rows (weight rows) and activation rows that the threads take dynamically.
#include "ops.hpp"

#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hetero::cpu {
namespace {

// The table's row for a weight dtype; fails for one it has no tile for.
const MatmulKernel& matmul_row(const Kernels& k, uint32_t dtype) {
    if (dtype >= kMatmulDtypes || !k.matmul[dtype].tile)
        sdk::fail(HETERO_ERR_UNSUPPORTED, std::string("cpu: matmul weights of dtype ") + sdk::dtype_name(dtype));
    return k.matmul[dtype];
}

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves
// the rounded integer in the low mantissa bits.
inline int32_t round_even(float v) {
    const float t = v + 12582912.f;
    int32_t i;
    std::memcpy(&i, &t, sizeof(i));
    return (i & 0x007fffff) - 0x00400000;
}

// Activations of a K-quant matmul, quantized as llama.cpp's Q8_K blocks: one
// scale per 256-element super-block (d = amax/127, kept in f32), q =
// round-to-nearest-even(x * 127/amax). Every 32-element ActBlock of a
// super-block carries that same d, so the int8 K-quant tiles run unchanged;
// their products are then the ones llama.cpp computes for these weights.
void quantize_act_superblocks(const float* x, ActBlock* out, int64_t k) {
    constexpr int64_t kSub = sdk::kKBlock / sdk::kQBlock;
    for (int64_t sb = 0; sb < k / sdk::kKBlock; ++sb) {
        const float* v = x + sb * sdk::kKBlock;
        float amax = 0.f;
        for (int64_t i = 0; i < sdk::kKBlock; ++i) amax = std::max(amax, std::fabs(v[i]));
        const float id = amax != 0.f ? 127.f / amax : 0.f;
        const float d = amax != 0.f ? 1.f / id : 0.f;
        for (int64_t b = 0; b < kSub; ++b) {
            ActBlock& o = out[sb * kSub + b];
            int32_t sum = 0;
            for (int64_t i = 0; i < sdk::kQBlock; ++i) {
                const int32_t q = std::clamp(round_even(v[b * sdk::kQBlock + i] * id), -127, 127);
                o.qs[i] = int8_t(q);
                sum += q;
            }
            o.d = d;
            o.neg_sum = -sum;
        }
    }
}

// The same grid for the tiles that keep K-quant activations in f32: x is
// replaced by d * q, so they compute the same products as the int8 tiles.
void round_act_superblocks(const float* x, float* out, int64_t k) {
    for (int64_t sb = 0; sb < k / sdk::kKBlock; ++sb) {
        const float* v = x + sb * sdk::kKBlock;
        float* o = out + sb * sdk::kKBlock;
        float amax = 0.f;
        for (int64_t i = 0; i < sdk::kKBlock; ++i) amax = std::max(amax, std::fabs(v[i]));
        const float id = amax != 0.f ? 127.f / amax : 0.f;
        const float d = amax != 0.f ? 1.f / id : 0.f;
        for (int64_t i = 0; i < sdk::kKBlock; ++i) o[i] = d * float(std::clamp(round_even(v[i] * id), -127, 127));
    }
}

// Activation rows per tile: enough to reuse each weight block many times,
// few enough that the tile's activations stay in L2.
constexpr int64_t kTileN = 64;

}  // namespace

MatmulTileFn packed_matmul_fn(const Kernels& k, uint32_t dtype) {
    if (dtype >= kMatmulDtypes) return nullptr;
    // The packed K-quant tiles read activations on the Q8_K grid only.
    if (sdk::is_kquant_dtype(dtype) && !k.llama_act_grids) return nullptr;
    return k.matmul[dtype].packed;
}

uint64_t matmul_dtype_mask(const Kernels& k) {
    uint64_t mask = 0;
    for (uint32_t d = 0; d < kMatmulDtypes; ++d)
        if (k.matmul[d].tile) mask |= HETERO_DTYPE_BIT(d);
    return mask;
}

void run_matmul(const OpContext& ctx, const hetero_node& node, const NodeTensors& t, float* out) {
    const auto& xd = t.in(node, 0);
    const auto& wd = t.in(node, 1);
    const int64_t n = xd.shape[0], k = sdk::row_width(xd), m = wd.shape[0];
    MatmulArgs a{};
    a.w = t.in_data(node, 1);
    a.w_row_bytes = sdk::row_bytes(wd.dtype, k);
    a.x = reinterpret_cast<const float*>(t.in_data(node, 0));
    a.bias = node.n_inputs == 3 ? reinterpret_cast<const float*>(t.in_data(node, 2)) : nullptr;
    a.y = out;
    a.k = k;
    a.m = m;
    const MatmulKernel& row = matmul_row(ctx.kernels, wd.dtype);
    const MatmulTileFn fn = row.tile;
    // Rows [0, m_packed) use the packed copy when compile made one.
    a.wp = ctx.packed ? ctx.packed[node.inputs[1]] : nullptr;
    const MatmulTileFn packed_fn = a.wp ? packed_matmul_fn(ctx.kernels, wd.dtype) : nullptr;
    const int64_t m_packed = packed_fn ? m / kPackRows * kPackRows : 0;

    const bool kquant = sdk::is_kquant_dtype(wd.dtype) && ctx.kernels.llama_act_grids;
    if (row.int8_act) {
        // Quantize every activation row once; all threads share the result.
        // Q8_0/Q4_0 weights: Q8_0 blocks of 32; K-quants: Q8_K super-blocks.
        const int64_t nb = k / sdk::kQBlock;
        auto* xq = static_cast<ActBlock*>(ctx.scratch.get(uint64_t(n * nb) * sizeof(ActBlock)));
        const auto quantize = kquant ? &quantize_act_superblocks : ctx.kernels.quantize_act;
        const bool f16_steps = !kquant && ctx.kernels.llama_act_grids;
        // Row r, with its steps rounded to f16 as a Q8_0 block stores them
        // (in the parallel loop: serial, this rounding took ~8 % of a 1.1B
        // prefill on 2 threads, more on many).
        auto quantize_row = [&](int64_t r) {
            quantize(a.x + r * k, xq + r * nb, k);
            if (f16_steps)
                for (int64_t b = r * nb; b < (r + 1) * nb; ++b) xq[b].d = sdk::f16_to_f32(sdk::f32_to_f16(xq[b].d));
        };
        if (n == 1) quantize_row(0);
        else
            parallel_ranges(ctx.pool, n, std::max<int64_t>(1, 8192 / k), [&](int64_t b, int64_t e, int) {
                for (int64_t r = b; r < e; ++r) quantize_row(r);
            });
        a.xq = xq;
        a.act_superblock_scale = kquant;
    } else if (kquant) {
        auto* xr = static_cast<float*>(ctx.scratch.get(uint64_t(n * k) * sizeof(float)));
        if (n == 1) round_act_superblocks(a.x, xr, k);
        else
            parallel_ranges(ctx.pool, n, std::max<int64_t>(1, 8192 / k), [&](int64_t b, int64_t e, int) {
                for (int64_t r = b; r < e; ++r) round_act_superblocks(a.x + r * k, xr + r * k, k);
            });
        a.x = xr;
    }

    const int64_t tile_n = std::min(n, kTileN);
    const int64_t n_tiles = (n + tile_n - 1) / tile_n;
    // Packed decode reads decode_streams groups of 16 rows side by side.
    // Unless the provider set it: two for rows of 4096 values or more (2048 x
    // 8192 Q4_0 at batch 1, 2 threads, AMD EPYC VM: +10 %, median of 10
    // rounds), one for shorter rows (with two, K = 2048 was 10-20 % slower
    // there). Never so many that some thread gets no tile: 256 rows on 16
    // threads take one stream.
    int streams = ctx.kernels.decode_streams > 0 ? ctx.kernels.decode_streams : k >= 4096 ? 2 : 1;
    while (streams > 1 && m < kPackRows * streams * int64_t(ctx.pool.size())) streams /= 2;
    a.decode_streams = streams;
    a.stream_prefetch = ctx.kernels.stream_prefetch;
    // Enough weight-row tiles for dynamic balancing (8 per thread when there is
    // a single activation tile), but at least 16 rows so a tile amortises its
    // dispatch and stays a contiguous stream of weights, and at decode enough
    // for the side-by-side streams.
    const int64_t want_tasks = int64_t(ctx.pool.size()) * 8;
    const int64_t min_rows = packed_fn && n < 4 ? kPackRows * a.decode_streams : 16;
    int64_t tile_m = std::max<int64_t>(min_rows, (m * n_tiles + want_tasks - 1) / want_tasks);
    tile_m = std::min<int64_t>({tile_m, m, 256});
    if (packed_fn) tile_m = (tile_m + kPackRows - 1) / kPackRows * kPackRows;  // tiles start on a group
    const int64_t m_tiles = (m + tile_m - 1) / tile_m;
    ctx.pool.parallel_for(n_tiles * m_tiles, [&](int64_t task, int) {
        // Consecutive tasks share an activation tile, which stays in cache.
        const int64_t nt = task / m_tiles, mt = task % m_tiles;
        const int64_t m0 = mt * tile_m, n0 = nt * tile_n;
        const int64_t m1 = std::min(m, m0 + tile_m), n1 = std::min(n, n0 + tile_n);
        const int64_t split = std::clamp(m_packed, m0, m1);
        if (split > m0) packed_fn(a, m0, split, n0, n1);
        if (m1 > split) fn(a, split, m1, n0, n1);
    });
}

}  // namespace hetero::cpu
