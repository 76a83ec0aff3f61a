// Flash-decoding: attention of a few query rows (decode) split over chunks of
// cache rows as well as heads. One task is a chunk of rows times a range of
// KV heads; it reads the chunk's K and V rows once, in cache order, and
// leaves each (query, head) a partial softmax (Kernels::attend_part: the
// scores' max, the sum of their exponentials, the unnormalised weighted sum
// of V rows). The last task of a range of heads to finish merges the
// range's partials: with M the largest of the chunks' maxima and
// w = exp(max - M) per chunk, out = sum(w * acc) / sum(w * sum).
//
// Per-head tasks (attend_row) gave a 32-head model's decode only as many
// tasks as heads, each reading a head's hd elements a whole cache row
// apart; here every thread streams whole rows, and long caches give tasks
// enough for any thread count.
#include "ops_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

namespace hetero::cpu {
namespace {

// About this many tasks per thread, of chunks no shorter than kMinChunk
// rows (the merge and the task's set-up stay small against its rows) and no
// longer than kMaxChunk (a task's scores, heads x chunk floats, stay in L2).
constexpr int64_t kTasksPerThread = 4;
constexpr int64_t kMinChunk = 64, kMaxChunk = 256;

// Kernels::attend_part through the table's row helpers, for tables without
// one (scalar, NEON): per query and head, the rows' scores, their
// exponentials, the weighted V rows; one helper call per row and head.
void attend_part_portable(const Kernels& kern, const float* q, uint64_t q_stride, int rows, int64_t heads, int64_t group,
                          const uint8_t* k, const uint8_t* v, uint64_t stride, int64_t hd, const int64_t* first, const int64_t* len,
                          float scale, float cap, bool f16, float* work, float* acc, float* ml) {
    const uint64_t elem = f16 ? 2 : 4, row_bytes = stride * elem;
    for (int i = 0; i < rows; ++i) {
        for (int64_t h = 0; h < heads; ++h) {
            const uint64_t at = uint64_t(h / group * hd) * elem;
            const float* qh = q + uint64_t(i) * q_stride + uint64_t(h * hd);
            float best = -INFINITY;
            for (int64_t r = first[i]; r < len[i]; ++r) {
                const uint8_t* kr = k + uint64_t(r) * row_bytes + at;
                float x = scale * (f16 ? kern.dot_f16(reinterpret_cast<const uint16_t*>(kr), qh, hd)
                                       : kern.dot_f32(reinterpret_cast<const float*>(kr), qh, hd));
                if (cap > 0.f) x = cap * std::tanh(x / cap);
                work[r - first[i]] = x;
                best = std::max(best, x);
            }
            float sum = 0.f;
            for (int64_t r = 0; r < len[i] - first[i]; ++r) sum += (work[r] = std::exp(work[r] - best));
            float* a = acc + (int64_t(i) * heads + h) * hd;
            std::fill(a, a + hd, 0.f);
            for (int64_t r = first[i]; r < len[i]; ++r) {
                const uint8_t* vr = v + uint64_t(r) * row_bytes + at;
                const float p = work[r - first[i]];
                if (f16) kern.axpy_f16(a, p, reinterpret_cast<const uint16_t*>(vr), hd);
                else kern.axpy_f32(a, p, reinterpret_cast<const float*>(vr), hd);
            }
            ml[i * heads + h] = best;
            ml[(rows + i) * heads + h] = sum;
        }
    }
}

// The output rows of `heads` heads from `parts` partials (acc and ml as
// Kernels::attend_part writes them), each acc_stride and ml_stride floats
// after the last: out = sum(w * acc) / sum(w * sum), w = exp(max - M) with
// M the largest max.
void merge_parts(int rows, int64_t heads, int64_t hd, int64_t parts, const float* acc, uint64_t acc_stride, const float* ml,
                 uint64_t ml_stride, float* out, uint64_t out_stride) {
    for (int i = 0; i < rows; ++i)
        for (int64_t h = 0; h < heads; ++h) {
            const int64_t e = int64_t(i) * heads + h, sum_at = int64_t(rows) * heads + e;
            float top = -INFINITY;
            for (int64_t c = 0; c < parts; ++c) top = std::max(top, ml[uint64_t(c) * ml_stride + uint64_t(e)]);
            float* o = out + uint64_t(i) * out_stride + uint64_t(h * hd);
            std::fill(o, o + hd, 0.f);
            double total = 0.0;
            for (int64_t c = 0; c < parts; ++c) {
                const float* m = ml + uint64_t(c) * ml_stride;
                if (m[sum_at] == 0.f) continue;  // no rows of this query in the chunk
                const float w = std::exp(m[e] - top);
                total += double(w) * double(m[sum_at]);
                const float* a = acc + uint64_t(c) * acc_stride + uint64_t(e * hd);
                for (int64_t d = 0; d < hd; ++d) o[d] += w * a[d];
            }
            const float inv = float(1.0 / total);
            for (int64_t d = 0; d < hd; ++d) o[d] *= inv;
        }
}

uint64_t round16(uint64_t floats) { return (floats + 15) / 16 * 16; }

}  // namespace

void run_attention_split(const OpContext& ctx, const AttentionArgs& a, float* out) {
    const Kernels& kern = ctx.kernels;
    const int n = int(a.n);
    int64_t first[kSplitRows], len[kSplitRows];
    int64_t lo = a.longest;
    for (int i = 0; i < n; ++i) {
        len[i] = int64_t(a.pos[i]) + 1;
        first[i] = a.first_row(len[i]);
        lo = std::min(lo, first[i]);
    }
    const int64_t rows = a.longest - lo, threads = ctx.pool.size();
    const int64_t want_tasks = kTasksPerThread * threads;
    const int64_t chunk = std::min(rows, kern.attention_chunk > 0 ? kern.attention_chunk
                                                                  : std::clamp((rows + want_tasks - 1) / want_tasks, kMinChunk, kMaxChunk));
    const int64_t chunks = (rows + chunk - 1) / chunk;
    // KV heads in ranges when the chunks alone are too few tasks.
    const int64_t want_ranges = std::clamp<int64_t>((want_tasks + chunks - 1) / chunks, 1, a.kv_heads);
    const int64_t range_kv = std::min((a.kv_heads + want_ranges - 1) / want_ranges, kPartMaxHeads / a.group);
    const int64_t ranges = (a.kv_heads + range_kv - 1) / range_kv, range_heads = range_kv * a.group;
    const int64_t tasks = ranges * chunks;

    // Scratch: each thread's scores, then every task's partials.
    const uint64_t score_floats = round16(kAttendPartWork(n, range_heads, chunk));
    const uint64_t acc_floats = uint64_t(n * range_heads * a.hd), ml_floats = uint64_t(2 * n * range_heads);
    const uint64_t acc_all_floats = round16(acc_floats * uint64_t(tasks));
    auto* scores_all = static_cast<float*>(
        ctx.scratch.get((uint64_t(threads) * score_floats + acc_all_floats + ml_floats * uint64_t(tasks)) * sizeof(float)));
    float* acc_all = scores_all + uint64_t(threads) * score_floats;
    float* ml_all = acc_all + acc_all_floats;
    // Tasks finished per range of heads.
    const std::unique_ptr<std::atomic<int64_t>[]> finished(new std::atomic<int64_t>[size_t(ranges)]());

    const uint64_t elem = a.f16 ? 2 : 4, stride = uint64_t(a.kv_heads * a.hd), q_stride = uint64_t(a.heads * a.hd);
    ctx.pool.parallel_for(tasks, [&](int64_t task, int thread) {
        const int64_t g = task / chunks, c = task % chunks;
        const int64_t kv0 = g * range_kv, heads = std::min(range_kv, a.kv_heads - kv0) * a.group, h0 = kv0 * a.group;
        const int64_t c0 = lo + c * chunk, c1 = std::min(a.longest, c0 + chunk);
        int64_t f[kSplitRows], l[kSplitRows];
        for (int i = 0; i < n; ++i) {
            f[i] = std::max(c0, first[i]);
            l[i] = std::min(c1, len[i]);
        }
        const uint64_t at = uint64_t(kv0 * a.hd) * elem;
        const float* q = a.q + h0 * a.hd;
        float* scores = scores_all + uint64_t(thread) * score_floats;
        float* acc = acc_all + uint64_t(task) * acc_floats;
        float* ml = ml_all + uint64_t(task) * ml_floats;
        if (kern.attend_part)
            kern.attend_part(q, q_stride, n, heads, a.group, a.k + at, a.v + at, stride, a.hd, f, l, a.scale, a.cap, a.f16, scores, chunk,
                             acc, ml);
        else
            attend_part_portable(kern, q, q_stride, n, heads, a.group, a.k + at, a.v + at, stride, a.hd, f, l, a.scale, a.cap, a.f16,
                                 scores, acc, ml);
        // The range's last task merges its chunks (acq_rel: it sees their parts).
        if (finished[size_t(g)].fetch_add(1, std::memory_order_acq_rel) + 1 < chunks) return;
        merge_parts(n, heads, a.hd, chunks, acc_all + uint64_t(g * chunks) * acc_floats, acc_floats, ml_all + uint64_t(g * chunks) * ml_floats,
                    ml_floats, out + h0 * a.hd, q_stride);
    });
}

}  // namespace hetero::cpu
