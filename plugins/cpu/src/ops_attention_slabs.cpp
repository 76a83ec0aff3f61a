// Prefill through Kernels::attend_rows (f32 K/V only) over f32 copies of
// the cache rows the queries read, a slab of KV heads at a time (each slab's
// rows copied in parallel, then its attention tasks), each head's rows side
// by side.
//
// f16 caches: without it their prefill ran one attend_row per query row and
// head, reading every K and V row once per query where the rows kernel reads
// it once per 16: a 1.1B's pp512 at 2,048 cached rows ran at 85-87 tok/s
// with f16 against 179-190 with f32 (2 Zen 4 cores; 179-192 with f16 now),
// and a 7B's 2,048-row fill took minutes. Long f32 caches: the rows kernel
// reading a head's rows in place, a whole cache row apart, took twice as long
// at 2,560 rows (bench_cpu_attention). The copy costs one pass over the rows
// per slab against 16 query rows' dot products per row, and at most
// kSlabBytes of scratch.
#include "ops_attention.hpp"

#include <algorithm>
#include <cstring>

namespace hetero::cpu {
namespace {

// Scratch for the f32 K and V rows of one slab (at least one KV head).
constexpr uint64_t kSlabBytes = uint64_t(16) << 20;

}  // namespace

void run_attention_rows_slabs(const OpContext& ctx, const AttentionArgs& a, float* out) {
    const Kernels& kern = ctx.kernels;
    int64_t lo = a.longest;  // the first cache row any query reads
    for (int64_t i = 0; i < a.n; ++i) lo = std::min(lo, a.first_row(int64_t(a.pos[i]) + 1));
    const int64_t span = a.longest - lo;
    const uint64_t head_floats = uint64_t(span * a.hd);  // one KV head's rows, K or V
    const int64_t slab = std::clamp<int64_t>(int64_t(kSlabBytes / (2 * head_floats * sizeof(float))), 1, a.kv_heads);
    const uint64_t work_floats = (kAttendRowsWork(a.hd, span) + 15) / 16 * 16;
    const int threads = ctx.pool.size();
    auto* work_all = static_cast<float*>(
        ctx.scratch.get((uint64_t(threads) * work_floats + 2 * uint64_t(slab) * head_floats) * sizeof(float)));
    float* kf = work_all + uint64_t(threads) * work_floats;  // [kv head of the slab][row - lo][hd]
    float* vf = kf + uint64_t(slab) * head_floats;
    const auto* k16 = reinterpret_cast<const uint16_t*>(a.k);
    const auto* v16 = reinterpret_cast<const uint16_t*>(a.v);
    const auto* k32 = reinterpret_cast<const float*>(a.k);
    const auto* v32 = reinterpret_cast<const float*>(a.v);
    const int64_t blocks = (a.n + 15) / 16;
    const uint64_t row_stride = uint64_t(a.heads * a.hd);

    for (int64_t kv0 = 0; kv0 < a.kv_heads; kv0 += slab) {
        const int64_t kvn = std::min(slab, a.kv_heads - kv0);
        // The slab's rows as f32, row by row (each cache row's KV heads lie side by side).
        parallel_ranges(ctx.pool, span, 16, [&](int64_t b, int64_t e, int) {
            for (int64_t r = b; r < e; ++r)
                for (int64_t j = 0; j < kvn; ++j) {
                    const uint64_t from = uint64_t(((lo + r) * a.kv_heads + kv0 + j) * a.hd), to = uint64_t(j) * head_floats + uint64_t(r * a.hd);
                    if (a.f16) {
                        kern.f16_to_f32_row(k16 + from, kf + to, a.hd);
                        kern.f16_to_f32_row(v16 + from, vf + to, a.hd);
                    } else {
                        std::memcpy(kf + to, k32 + from, uint64_t(a.hd) * sizeof(float));
                        std::memcpy(vf + to, v32 + from, uint64_t(a.hd) * sizeof(float));
                    }
                }
        });
        // As ops_attention.cpp's f32 prefill, rows counted from lo.
        const int64_t slab_heads = kvn * a.group, h0 = kv0 * a.group;
        ctx.pool.parallel_for(blocks * slab_heads, [&](int64_t task, int thread) {
            // Later blocks attend to more rows: take them first.
            const int64_t blk = blocks - 1 - task / slab_heads, h = h0 + task % slab_heads, j = h / a.group - kv0;
            const int64_t i0 = blk * 16;
            const int rows = int(std::min<int64_t>(16, a.n - i0));
            int64_t first[16], len[16];
            for (int r = 0; r < rows; ++r) {
                const int64_t l = int64_t(a.pos[i0 + r]) + 1;
                first[r] = a.first_row(l) - lo;
                len[r] = l - lo;
            }
            kern.attend_rows(a.q + (i0 * a.heads + h) * a.hd, row_stride, rows, kf + uint64_t(j) * head_floats, vf + uint64_t(j) * head_floats,
                             uint64_t(a.hd), a.hd, first, len, a.scale, work_all + uint64_t(thread) * work_floats,
                             out + (i0 * a.heads + h) * a.hd, row_stride);
        });
    }
}

}  // namespace hetero::cpu
