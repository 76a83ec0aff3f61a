// Causal attention over a KV cache: one work-group per (query row, head).
// Every attention kernel also takes ATTENTION_EXT's window (> 0: only the
// last `window` keys up to the position) and soft-cap (> 0: scores become
// cap * tanh(score / cap)); 0 and 0 give plain ATTENTION.
//
// Keys are visited in chunks of ATTN_CHUNK whose scores live in local memory;
// an online softmax (running max and sum, rescaling the accumulator) joins the
// chunks, so short contexts take one pass and long ones need no more memory.
// Each work-item owns head-dim slots lid, lid + local_size, ... (at most
// ATTN_ACC of them) of the output accumulator.
#ifndef ATTN_CHUNK
#define ATTN_CHUNK 512
#endif
#define ATTN_ACC 8
// Cache values loaded before their multiply-adds (same order of sums): each
// value of a V column is in another cache line, and one load at a time left
// the H100's decode attention waiting on ~65 serial L2 round trips.
#define ATTN_BATCH 8
// With NV_PTX: dims of a key per work-item in the score pass, and the
// passes over the keys whose loads are issued together.
#define ATTN_SEG 8
#define ATTN_SEG_BATCH 4

inline float kv_load(global const uchar* base, int f16, ulong i) {
    return f16 ? vload_half(i, (global const half*)base) : ((global const float*)base)[i];
}

// a + sum over t < n of w[t * wstep] * cache element (first + t * step), in
// order of t, with ATTN_BATCH cache values loaded before their multiply-adds.
inline float cache_dot(global const uchar* base, int f16, ulong first, ulong step, local const float* w, int wstep, int n, float a) {
    int t = 0;
    for (; t + ATTN_BATCH <= n; t += ATTN_BATCH) {
        float kv[ATTN_BATCH];
        for (int u = 0; u < ATTN_BATCH; ++u) kv[u] = kv_load(base, f16, first + (ulong)(t + u) * step);
        for (int u = 0; u < ATTN_BATCH; ++u) a = fma(w[(t + u) * wstep], kv[u], a);
    }
    for (; t < n; ++t) a = fma(w[t * wstep], kv_load(base, f16, first + (ulong)t * step), a);
    return a;
}

kernel void attention(global const uchar* qb, ulong qoff, global const uchar* kb, ulong koff,
                      global const uchar* vb, ulong voff, global const uchar* pb, ulong poff, global uchar* yb,
                      ulong yoff, int H, int Hkv, int Hd, int C, float scale, int kv_f16, global int* err, int node,
                      local float* red, local float* qs, int window, float cap, int seq_rows) {
    local float sc[ATTN_CHUNK];
    const int h = get_group_id(0);
    const int n = get_group_id(1);
    const int lid = get_local_id(0);
    const int ls = get_local_size(0);
    const int hk = h / (H / Hkv);
    global float* y = PTR(float, yb, yoff) + ((ulong)n * H + h) * Hd;
    int p = CPTR(int, pb, poff)[n];
    if (p < 0 || p >= C) {
        if (lid == 0) report_error(err, ERR_POS_RANGE, node);
        for (int d = lid; d < Hd; d += ls) y[d] = 0.f;
        return;
    }
    global const float* q = CPTR(float, qb, qoff) + ((ulong)n * H + h) * Hd;
    for (int d = lid; d < Hd; d += ls) qs[d] = q[d];
    barrier(CLK_LOCAL_MEM_FENCE);

    const ulong row_stride = (ulong)Hkv * Hd;
    // ATTENTION_SEQS (seq_rows > 0): the row's sequence is the stack's part
    // of seq_rows rows that holds cache row p; attend from its first row.
    const int base = seq_rows > 0 ? p / seq_rows * seq_rows : 0;
    p -= base;
    global const uchar* kbase = kb + koff + (ulong)base * row_stride * (kv_f16 ? 2 : 4);
    global const uchar* vbase = vb + voff + (ulong)base * row_stride * (kv_f16 ? 2 : 4);
    float acc[ATTN_ACC];
    for (int i = 0; i < ATTN_ACC; ++i) acc[i] = 0.f;
    float m = -INFINITY, l = 0.f;
    // Head dims up to half the group: `slices` work-items per dim split the
    // keys of the weighted V sum (each key's V row is one more dependent
    // round trip to the cache for a lone work-item).
    const int slices = Hd * 2 <= ls ? ls / Hd : 1;
    const int slice = lid / Hd, dl = lid % Hd;
#ifdef NV_PTX
    // Scores by segments where a key's segments fit a warp evenly.
    const int seg_keys = Hd % ATTN_SEG == 0 && 32 % (Hd / ATTN_SEG) == 0 && ls % 32 == 0;
#endif
    for (int c0 = window_first(p, window); c0 <= p; c0 += ATTN_CHUNK) {
        const int cnt = min(ATTN_CHUNK, p + 1 - c0);
        float cmax = -INFINITY;
#ifdef NV_PTX
        if (seg_keys) {
            // ATTN_SEG consecutive dims of a key per work-item, one 16- or
            // 32-byte load each, so a warp reads whole cache rows; the
            // segments of a key are neighbouring lanes and meet by shuffles.
            const int segs = Hd / ATTN_SEG, seg = lid % segs, per_pass = ls / segs;
            const float8 qv = vload8(seg, qs);
            for (int j0 = 0; j0 < cnt; j0 += per_pass * ATTN_SEG_BATCH) {
                float8 kv[ATTN_SEG_BATCH];
                for (int b = 0; b < ATTN_SEG_BATCH; ++b) {
                    const int j = min(j0 + b * per_pass + lid / segs, cnt - 1);
                    const ulong at = (ulong)(c0 + j) * row_stride + (ulong)hk * Hd + (ulong)seg * ATTN_SEG;
                    kv[b] = kv_f16 ? vload_half8(0, (global const half*)kbase + at) : vload8(0, (global const float*)kbase + at);
                }
                for (int b = 0; b < ATTN_SEG_BATCH; ++b) {
                    const float8 pr = qv * kv[b];
                    float sum = (pr.s0 + pr.s1) + (pr.s2 + pr.s3) + ((pr.s4 + pr.s5) + (pr.s6 + pr.s7));
                    for (int o = segs / 2; o > 0; o >>= 1) sum += shuffle_xor(sum, o);
                    const int j = j0 + b * per_pass + lid / segs;
                    if (j < cnt) {
                        sum = soft_cap(sum * scale, cap);
                        if (seg == 0) sc[j] = sum;
                        cmax = fmax(cmax, sum);
                    }
                }
            }
        } else
#endif
        for (int j = lid; j < cnt; j += ls) {
            const ulong kr = (ulong)(c0 + j) * row_stride + (ulong)hk * Hd;
            const float s = soft_cap(cache_dot(kbase, kv_f16, kr, 1, qs, 1, Hd, 0.f) * scale, cap);
            sc[j] = s;
            cmax = fmax(cmax, s);
        }
        cmax = group_max(cmax, red);
        const float m_new = fmax(m, cmax);
        const float corr = exp(m - m_new);
        float psum = 0.f;
        for (int j = lid; j < cnt; j += ls) {
            const float e = exp(sc[j] - m_new);
            sc[j] = e;
            psum += e;
        }
        psum = group_sum(psum, red);  // its barriers also publish sc[]
        l = l * corr + psum;
        if (slices > 1) {
            // Slice `slice` of the keys (j = slice, slice + slices, ...) for
            // dim lid % Hd; the slices' sums meet in red (free after psum).
            float a = 0.f;
            if (slice < slices && slice < cnt) {
                const ulong vr = (ulong)(c0 + slice) * row_stride + (ulong)hk * Hd + dl;
                a = cache_dot(vbase, kv_f16, vr, (ulong)slices * row_stride, sc + slice, slices, (cnt - slice + slices - 1) / slices, 0.f);
            }
            red[lid] = a;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < Hd) {
                float t = acc[0] * corr;
                for (int s2 = 0; s2 < slices; ++s2) t += red[s2 * Hd + lid];
                acc[0] = t;
            }
        } else {
            for (int i = 0; i < ATTN_ACC; ++i) {
                const int d = lid + i * ls;
                if (d < Hd) {
                    const ulong vr = (ulong)c0 * row_stride + (ulong)hk * Hd + d;
                    acc[i] = cache_dot(vbase, kv_f16, vr, row_stride, sc, 1, cnt, acc[i] * corr);
                }
            }
        }
        m = m_new;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv = 1.f / l;
    for (int i = 0; i < ATTN_ACC; ++i) {
        const int d = lid + i * ls;
        if (d < Hd) y[d] = acc[i] * inv;
    }
}

// Causal attention for many query rows (prefill), flash-attention style.
//
// A work-group takes a block of query rows and the query heads that share one
// KV head (a GQA group, or part of one when the group is wider than the
// work-group), so every key/value tile it loads serves rows x heads queries
// instead of one. Tiles of ATTN_TILE_KEYS cache rows stream through local
// memory as f32 (zero past the block's last position and past Hd), loaded
// coalesced by the whole group; afterwards every work-item reads the same
// local element at a time, a broadcast.
//
// A work-item owns one (row, head, slice): ATTN_SLICE head dims of q
// (pre-scaled) and of the output accumulator in registers, and its row's
// online softmax (running max and sum, in base 2). Head dims above
// ATTN_SLICE take `slices` work-items per (row, head): slice s owns the
// float4 columns s, s + slices, ... (interleaved, so the slices read
// different banks), and the slices add their partial scores through local
// memory. Work-item order is (row, head, slice), slice fastest.
#ifndef ATTN_TILE_KEYS
#define ATTN_TILE_KEYS 32
#endif
#ifndef ATTN_SLICE
#define ATTN_SLICE 64
#endif
#define ATTN_SLICE4 (ATTN_SLICE / 4)

inline float dot4_acc(float4 a, float4 b, float acc) {
    return fma(a.x, b.x, fma(a.y, b.y, fma(a.z, b.z, fma(a.w, b.w, acc))));
}

kernel void attention_tiled(global const uchar* qb, ulong qoff, global const uchar* kb, ulong koff,
                            global const uchar* vb, ulong voff, global const uchar* pb, ulong poff, global uchar* yb,
                            ulong yoff, int N, int H, int Hkv, int Hd, int C, float scale, int kv_f16, global int* err,
                            int node, int heads_per_group, int slices, local float4* k_tile, local float4* v_tile,
                            local float* partial, int window, float cap) {
    local int block_last;   // largest valid position of the block's rows
    local int block_first;  // smallest first key of their windows
    const int lid = get_local_id(0);
    const int ls = get_local_size(0);
    const int group = H / Hkv;
    const int head_chunks = (group + heads_per_group - 1) / heads_per_group;
    const int hk = get_group_id(0) / head_chunks;
    const int rows = ls / (heads_per_group * slices);
    const int slice = lid % slices;
    const int g = (lid / slices) % heads_per_group + (get_group_id(0) % head_chunks) * heads_per_group;
    const int r = lid / (slices * heads_per_group);
    const int n = get_group_id(1) * rows + r;
    const int h = hk * group + g;
    // Work-items left over by the group shape, or past the last row or head,
    // only help load tiles.
    const bool live = r < rows && n < N && g < group;

    int p = -1;  // -1: attends to nothing
    bool bad_pos = false;
    if (live) {
        p = CPTR(int, pb, poff)[n];
        if (p < 0 || p >= C) {
            if (slice == 0) report_error(err, ERR_POS_RANGE, node);
            bad_pos = true;
            p = -1;
        }
    }
    const int lo = p >= 0 ? window_first(p, window) : 0;  // this row's first key
    if (lid == 0) {
        block_last = -1;
        block_first = INT_MAX;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (p >= 0) {
        atomic_max(&block_last, p);
        atomic_min(&block_first, lo);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int last = block_last;
    const int start = block_first == INT_MAX ? 0 : block_first;
    // Soft-cap in the base-2 score units below.
    const float cap2 = cap * M_LOG2E_F;

    // q pre-scaled so that scores come out in base 2 (exp2 is cheaper).
    const float qscale = scale * M_LOG2E_F;
    float4 q[ATTN_SLICE4], acc[ATTN_SLICE4];
    global const float* qrow = CPTR(float, qb, qoff) + ((ulong)n * H + h) * Hd;
#pragma unroll
    for (int i = 0; i < ATTN_SLICE4; ++i) {
        const int d = (i * slices + slice) * 4;
        float4 v = (float4)(0.f);
        if (p >= 0) {
            if (d + 0 < Hd) v.x = qrow[d + 0];
            if (d + 1 < Hd) v.y = qrow[d + 1];
            if (d + 2 < Hd) v.z = qrow[d + 2];
            if (d + 3 < Hd) v.w = qrow[d + 3];
        }
        q[i] = v * qscale;
        acc[i] = (float4)(0.f);
    }
    float m = -INFINITY, l = 0.f;

    // The tile loader walks elements lid, lid + ls, ... of the
    // ATTN_TILE_KEYS x row_width tile as (key, dim) pairs.
    const int row_width = slices * ATTN_SLICE;  // floats in a tile row, Hd padded
    const int tile_elems = ATTN_TILE_KEYS * row_width;
    const int key_step = ls / row_width, dim_step = ls % row_width;
    const ulong cache_stride = (ulong)Hkv * Hd;
    global const uchar* kbase = kb + koff;
    global const uchar* vbase = vb + voff;
    local float* k_flat = (local float*)k_tile;
    local float* v_flat = (local float*)v_tile;
    const int tile_width4 = row_width / 4;
    for (int c0 = start; c0 <= last; c0 += ATTN_TILE_KEYS) {
        barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done with the previous tile
        int key = lid / row_width, dim = lid % row_width;
        for (int e = lid; e < tile_elems; e += ls) {
            float kv = 0.f, vv = 0.f;
            // Keys past `last` may be unwritten cache rows (even NaN): never read them.
            if (c0 + key <= last && dim < Hd) {
                const ulong at = (ulong)(c0 + key) * cache_stride + (ulong)hk * Hd + dim;
                kv = kv_load(kbase, kv_f16, at);
                vv = kv_load(vbase, kv_f16, at);
            }
            k_flat[e] = kv;
            v_flat[e] = vv;
            key += key_step;
            dim += dim_step;
            if (dim >= row_width) {
                dim -= row_width;
                ++key;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Rows whose position lies before this tile, or whose window starts
        // after it, skip it (all slices of a row agree, so the partial-score
        // exchange below stays consistent).
        const bool active = c0 <= p && c0 + ATTN_TILE_KEYS - 1 >= lo;
        float s[ATTN_TILE_KEYS];
#pragma unroll
        for (int j = 0; j < ATTN_TILE_KEYS; ++j) s[j] = 0.f;
        if (active) {
#pragma unroll
            for (int j = 0; j < ATTN_TILE_KEYS; ++j) {
                local const float4* krow = k_tile + j * tile_width4 + slice;
                float a = 0.f;
#pragma unroll
                for (int i = 0; i < ATTN_SLICE4; ++i) a = dot4_acc(q[i], krow[i * slices], a);
                s[j] = a;
            }
        }
        if (slices > 1) {
            // Each key's score is the sum of the row's slices, added in slice
            // order by every slice so that all of them see the same value.
#pragma unroll
            for (int j = 0; j < ATTN_TILE_KEYS; ++j) partial[j * ls + lid] = s[j];
            barrier(CLK_LOCAL_MEM_FENCE);
            const int first = lid - slice;
#pragma unroll
            for (int j = 0; j < ATTN_TILE_KEYS; ++j) {
                float sum = 0.f;
                for (int t = 0; t < slices; ++t) sum += partial[j * ls + first + t];
                s[j] = sum;
            }
        }
        if (active) {
            // Causal and window mask; the tile holds a key of [lo, p], so
            // tile_max is finite.
            float tile_max = -INFINITY;
#pragma unroll
            for (int j = 0; j < ATTN_TILE_KEYS; ++j) {
                s[j] = c0 + j <= p && c0 + j >= lo ? soft_cap(s[j], cap2) : -INFINITY;
                tile_max = fmax(tile_max, s[j]);
            }
            const float m_new = fmax(m, tile_max);
            const float corr = exp2(m - m_new);
            l *= corr;
#pragma unroll
            for (int i = 0; i < ATTN_SLICE4; ++i) acc[i] *= corr;
#pragma unroll
            for (int j = 0; j < ATTN_TILE_KEYS; ++j) {
                const float w = exp2(s[j] - m_new);
                l += w;
                local const float4* vrow = v_tile + j * tile_width4 + slice;
#pragma unroll
                for (int i = 0; i < ATTN_SLICE4; ++i) acc[i] = fma((float4)(w), vrow[i * slices], acc[i]);
            }
            m = m_new;
        }
    }

    if (!live) return;
    global float* y = PTR(float, yb, yoff) + ((ulong)n * H + h) * Hd;
    const float inv = bad_pos ? 0.f : 1.f / l;
#pragma unroll
    for (int i = 0; i < ATTN_SLICE4; ++i) {
        const int d = (i * slices + slice) * 4;
        const float4 o = acc[i] * inv;
        if (d + 0 < Hd) y[d + 0] = o.x;
        if (d + 1 < Hd) y[d + 1] = o.y;
        if (d + 2 < Hd) y[d + 2] = o.z;
        if (d + 3 < Hd) y[d + 3] = o.w;
    }
}
