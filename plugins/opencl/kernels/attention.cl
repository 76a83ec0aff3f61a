// Causal attention over a KV cache: one work-group per (query row, head).
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

inline float kv_load(global const uchar* base, int f16, ulong i) {
    return f16 ? vload_half(i, (global const half*)base) : ((global const float*)base)[i];
}

kernel void attention(global const uchar* qb, ulong qoff, global const uchar* kb, ulong koff,
                      global const uchar* vb, ulong voff, global const uchar* pb, ulong poff, global uchar* yb,
                      ulong yoff, int H, int Hkv, int Hd, int C, float scale, int kv_f16, global int* err, int node,
                      local float* red, local float* qs) {
    local float sc[ATTN_CHUNK];
    const int h = get_group_id(0);
    const int n = get_group_id(1);
    const int lid = get_local_id(0);
    const int ls = get_local_size(0);
    const int hk = h / (H / Hkv);
    global float* y = PTR(float, yb, yoff) + ((ulong)n * H + h) * Hd;
    const int p = CPTR(int, pb, poff)[n];
    if (p < 0 || p >= C) {
        if (lid == 0) report_error(err, ERR_POS_RANGE, node);
        for (int d = lid; d < Hd; d += ls) y[d] = 0.f;
        return;
    }
    global const float* q = CPTR(float, qb, qoff) + ((ulong)n * H + h) * Hd;
    for (int d = lid; d < Hd; d += ls) qs[d] = q[d];
    barrier(CLK_LOCAL_MEM_FENCE);

    global const uchar* kbase = kb + koff;
    global const uchar* vbase = vb + voff;
    const ulong row_stride = (ulong)Hkv * Hd;
    float acc[ATTN_ACC];
    for (int i = 0; i < ATTN_ACC; ++i) acc[i] = 0.f;
    float m = -INFINITY, l = 0.f;
    for (int c0 = 0; c0 <= p; c0 += ATTN_CHUNK) {
        const int cnt = min(ATTN_CHUNK, p + 1 - c0);
        float cmax = -INFINITY;
        for (int j = lid; j < cnt; j += ls) {
            const ulong kr = (ulong)(c0 + j) * row_stride + (ulong)hk * Hd;
            float s = 0.f;
            for (int d = 0; d < Hd; ++d) s = fma(qs[d], kv_load(kbase, kv_f16, kr + d), s);
            s *= scale;
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
        for (int i = 0; i < ATTN_ACC; ++i) {
            const int d = lid + i * ls;
            if (d < Hd) {
                float a = acc[i] * corr;
                const ulong vr = (ulong)c0 * row_stride + (ulong)hk * Hd + d;
                for (int j = 0; j < cnt; ++j) a = fma(sc[j], kv_load(vbase, kv_f16, vr + (ulong)j * row_stride), a);
                acc[i] = a;
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
