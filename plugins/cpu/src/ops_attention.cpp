// Causal attention over a KV cache: for each query row and head, scores over
// cache rows 0..positions[i] (ATTENTION_EXT: the last `window` of them, and
// soft-capped scores), a softmax, and the weighted sum of V rows;
// ATTENTION_SEQS: each row over its own sequence of a stacked cache.
#include "ops_attention.hpp"

#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/provider.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace hetero::cpu {

namespace {

// One attention over one cache: picks the path for the rows and the ISA.
void attend(const OpContext& ctx, const AttentionArgs& a, float* out) {
    const float* q = a.q;
    const uint8_t* kc = a.k;
    const uint8_t* vc = a.v;
    const int32_t* pos = a.pos;
    const int64_t n = a.n, heads = a.heads, kv_heads = a.kv_heads, hd = a.hd, group = a.group, longest = a.longest;
    const bool f16 = a.f16;
    const uint64_t elem = f16 ? 2 : 4;
    const float scale = a.scale, cap = a.cap;
    const Kernels& kern = ctx.kernels;
    auto first_row = [&](int64_t len) { return a.first_row(len); };

    // A few query rows (decode): split over chunks of cache rows as well as
    // heads, every variant (ops_attention_split.cpp).
    if (n <= kSplitRows && group <= kPartMaxHeads) return run_attention_split(ctx, a, out);

    // The rows kernel where the ISA has it (no soft cap): 16 query rows of a
    // head at a time; over an f16 cache or a long f32 one, on copies of its
    // rows with each KV head's rows side by side (ops_attention_slabs.cpp).
    const bool rows_kernel = kern.attend_rows && cap == 0.f && attend_rows_head_size(hd);
    if (rows_kernel && (f16 || longest >= kSlabF32MinRows)) return run_attention_rows_slabs(ctx, a, out);
    if (rows_kernel) {
        const uint64_t work_floats = kAttendRowsWork(hd, longest);
        auto* work_all = static_cast<float*>(ctx.scratch.get(uint64_t(ctx.pool.size()) * work_floats * sizeof(float)));
        const auto* kf = reinterpret_cast<const float*>(kc);
        const auto* vf = reinterpret_cast<const float*>(vc);
        const uint64_t cache_stride = uint64_t(kv_heads * hd);
        const int64_t blocks = (n + 15) / 16;
        const uint64_t row_stride = uint64_t(heads * hd);
        ctx.pool.parallel_for(blocks * heads, [&](int64_t task, int thread) {
            // Later blocks attend to more rows: take them first.
            const int64_t blk = blocks - 1 - task / heads, h = task % heads, kvh = h / group;
            const int64_t i0 = blk * 16;
            const int rows = int(std::min<int64_t>(16, n - i0));
            int64_t first[16], len[16];
            for (int r = 0; r < rows; ++r) {
                len[r] = int64_t(pos[i0 + r]) + 1;
                first[r] = first_row(len[r]);
            }
            kern.attend_rows(q + (i0 * heads + h) * hd, row_stride, rows, kf + kvh * hd, vf + kvh * hd, cache_stride, hd, first, len,
                             scale, work_all + uint64_t(thread) * work_floats, out + (i0 * heads + h) * hd, row_stride);
        });
        return;
    }

    auto* scores_all = static_cast<float*>(ctx.scratch.get(uint64_t(ctx.pool.size()) * uint64_t(longest) * sizeof(float)));

    // One task per (query row, head) pair; long rows dominate, and dynamic
    // task pickup evens them out.
    ctx.pool.parallel_for(n * heads, [&](int64_t task, int thread) {
        const int64_t i = task / heads, h = task % heads, kvh = h / group;
        const int64_t len = int64_t(pos[i]) + 1, first = first_row(len);
        const float* qrow = q + (i * heads + h) * hd;
        float* scores = scores_all + int64_t(thread) * longest;
        if (kern.attend_row) {
            const uint64_t stride = uint64_t(kv_heads * hd), at = uint64_t(kvh * hd) * elem;
            return kern.attend_row(qrow, kc + at, vc + at, stride, hd, first, len, scale, cap, f16, scores, out + (i * heads + h) * hd);
        }
        float best = -INFINITY;
        for (int64_t r = first; r < len; ++r) {
            const uint8_t* krow = kc + uint64_t((r * kv_heads + kvh) * hd) * elem;
            float s = scale * (f16 ? kern.dot_f16(reinterpret_cast<const uint16_t*>(krow), qrow, hd)
                                   : kern.dot_f32(reinterpret_cast<const float*>(krow), qrow, hd));
            if (cap > 0.f) s = cap * std::tanh(s / cap);
            scores[r] = s;
            best = std::max(best, s);
        }
        double sum = 0.0;
        for (int64_t r = first; r < len; ++r) sum += (scores[r] = std::exp(scores[r] - best));
        const float inv = float(1.0 / sum);
        float* orow = out + (i * heads + h) * hd;
        std::fill(orow, orow + hd, 0.f);
        for (int64_t r = first; r < len; ++r) {
            const uint8_t* vrow = vc + uint64_t((r * kv_heads + kvh) * hd) * elem;
            if (f16) kern.axpy_f16(orow, scores[r] * inv, reinterpret_cast<const uint16_t*>(vrow), hd);
            else kern.axpy_f32(orow, scores[r] * inv, reinterpret_cast<const float*>(vrow), hd);
        }
    });
}

}  // namespace

void run_attention(const OpContext& ctx, const hetero_node& node, const NodeTensors& t, float* out) {
    const auto& qd = t.in(node, 0);
    const auto& kd = t.in(node, 1);
    const int64_t n = qd.shape[0], heads = qd.shape[1], hd = qd.shape[2];
    const int64_t cache_rows = kd.shape[0], kv_heads = kd.shape[1];
    const int32_t* pos = reinterpret_cast<const int32_t*>(t.in_data(node, 3));
    int64_t longest = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (pos[i] < 0 || pos[i] >= cache_rows)
            sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "attention: position " + std::to_string(pos[i]) + " of query " + std::to_string(i) +
                                                       " outside the KV cache of " + std::to_string(cache_rows) + " rows");
        longest = std::max<int64_t>(longest, pos[i] + 1);
    }
    const bool ext = node.op != HETERO_OP_ATTENTION;
    AttentionArgs a{reinterpret_cast<const float*>(t.in_data(node, 0)), t.in_data(node, 1), t.in_data(node, 2), pos, n, heads, kv_heads, hd,
                    heads / kv_heads, longest, kd.dtype == HETERO_DTYPE_F16, node.fparams[0], ext ? node.fparams[1] : 0.f,
                    ext ? node.iparams[0] : 0};
    if (node.op != HETERO_OP_ATTENTION_SEQS) return attend(ctx, a, out);
    // Stacked sequences: each row against its own sequence's rows, as a
    // one-row attention over that part of the cache.
    const uint64_t row_bytes = uint64_t(kv_heads * hd) * (a.f16 ? 2 : 4);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t base = sdk::seq_base(node, pos[i]);
        const int32_t p = int32_t(pos[i] - base);
        AttentionArgs r = a;
        r.q = a.q + i * heads * hd;
        r.k = a.k + uint64_t(base) * row_bytes;
        r.v = a.v + uint64_t(base) * row_bytes;
        r.pos = &p;
        r.n = 1;
        r.longest = p + 1;
        attend(ctx, r, out + i * heads * hd);
    }
}

}  // namespace hetero::cpu
