// One attention node's operands, as ops_attention.cpp reads them, for the
// paths that live in files of their own.
#pragma once

#include "ops.hpp"

#include <algorithm>
#include <cstdint>

namespace hetero::cpu {

struct AttentionArgs {
    const float* q;              // [n, heads, hd]
    const uint8_t *k, *v;        // caches [rows, kv_heads, hd], f32 or f16
    const int32_t* pos;          // [n], checked to lie in the cache
    int64_t n, heads, kv_heads, hd, group;
    int64_t longest;             // max position + 1
    bool f16;
    float scale, cap;            // cap 0: no soft cap
    int64_t window;              // 0: every row up to the position
    // The first cache row a query at `len` rows attends to.
    int64_t first_row(int64_t len) const { return window > 0 ? std::max<int64_t>(0, len - window) : 0; }
};

// Flash-decoding (ops_attention_split.cpp): a.n <= kSplitRows query rows over
// chunks of cache rows in parallel, the chunks' partial softmaxes merged.
void run_attention_split(const OpContext& ctx, const AttentionArgs& a, float* out);

// Prefill (ops_attention_slabs.cpp): Kernels::attend_rows over f32 copies
// of the rows, a slab of KV heads at a time, each head's rows side by side.
// Needs the table's attend_rows, a head size it takes and no soft cap. Used
// for f16 caches, and for f32 caches from kSlabF32MinRows rows: below that
// the copy gained nothing (7B, 8B and 1.1B shapes at 512 rows), at 2,560
// rows reading a head's rows a cache row apart took twice as long.
void run_attention_rows_slabs(const OpContext& ctx, const AttentionArgs& a, float* out);
constexpr int64_t kSlabF32MinRows = 1024;

}  // namespace hetero::cpu
