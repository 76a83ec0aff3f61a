// The tensor-core prefill attention kernel for one head dim (AM_HD), query
// rows per work-group (AM_ROWS) and name (AM_NAME), which the file before it
// in the program defines; see attention_mma.cl.
#ifdef MMA_KERNELS
#define AM_WG (32 * AM_ROWS / 16)
// Local row stride in 32-bit words of a row of AM_HD halves + 8: the mma
// fragment loads of a warp then hit 32 different banks.
#define AM_WIDE (AM_HD / 2 + 4)

__attribute__((reqd_work_group_size(AM_WG, 1, 1))) kernel void AM_NAME(
    global const uchar* qb, ulong qoff, global const uchar* kb, ulong koff, global const uchar* vb, ulong voff,
    global const uchar* pb, ulong poff, global uchar* yb, ulong yoff, int N, int H, int Hkv, int Hd, int C, float scale,
    int kv_f16, global int* err, int node, int window, float cap) {
    local uint Qs[AM_ROWS * AM_WIDE];
    local uint Ks[AM_KEYS * AM_WIDE];
    local uint Vt[AM_HD * AM_NARROW];  // transposed: a row per head dim
    local uint Ps[AM_ROWS * AM_NARROW];
    local float Ss[AM_ROWS * AM_S];
    local float row_max[AM_ROWS], row_sum[AM_ROWS], row_corr[AM_ROWS];
    local int row_pos[AM_ROWS];
    local int row_first[AM_ROWS];  // first key of the row's window
    local int block_last, block_first;

    const int lid = get_local_id(0);
    const int h = get_group_id(0), hk = h / (H / Hkv);
    const int n0 = get_group_id(1) * AM_ROWS;
    const int warp = lid / 32, lane = lid % 32, g = lane / 4, t = lane % 4;

    // Positions: -1 for rows past N and for bad positions (reported; their
    // output is zero, like the other attention kernels).
    if (lid == 0) {
        block_last = -1;
        block_first = INT_MAX;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < AM_ROWS) {
        int p = -1;
        if (n0 + lid < N) {
            p = CPTR(int, pb, poff)[n0 + lid];
            if (p < 0 || p >= C) {
                report_error(err, ERR_POS_RANGE, node);
                p = -1;
            }
        }
        row_pos[lid] = p;
        row_first[lid] = p >= 0 ? window_first(p, window) : 0;
        row_max[lid] = -INFINITY;
        row_sum[lid] = 0.f;
        if (p >= 0) {
            atomic_max(&block_last, p);
            atomic_min(&block_first, row_first[lid]);
        }
    }
    // Q, scaled so that scores come out in base 2.
    const float qscale = scale * M_LOG2E_F;
    for (int u = lid; u < AM_ROWS * AM_HD / 4; u += AM_WG) {
        const int r = u / (AM_HD / 4), d = 4 * (u % (AM_HD / 4));
        float4 v = (float4)(0.f);
        if (n0 + r < N) v = vload4(0, CPTR(float, qb, qoff) + ((ulong)(n0 + r) * H + h) * AM_HD + d) * qscale;
        vstore_half4(v, 0, (local half*)(Qs + r * AM_WIDE) + d);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int last = block_last;
    const int start = block_first == INT_MAX ? 0 : block_first;
    const float cap2 = cap * M_LOG2E_F;  // the soft-cap in base-2 score units

    float o[AM_HD / 8][4];
    for (int j = 0; j < AM_HD / 8; ++j)
        for (int e = 0; e < 4; ++e) o[j][e] = 0.f;
    const ulong cache_stride = (ulong)Hkv * Hd;
    global const uchar* kbase = kb + koff;
    global const uchar* vbase = vb + voff;
    for (int c0 = start; c0 <= last; c0 += AM_KEYS) {
        // Keys past `last` may be unwritten cache rows (even NaN): never read them.
        for (int u = lid; u < AM_KEYS * AM_HD / 4; u += AM_WG) {
            const int key = u / (AM_HD / 4), d = 4 * (u % (AM_HD / 4));
            float4 kv = (float4)(0.f), vv = (float4)(0.f);
            if (c0 + key <= last) {
                const ulong at = (ulong)(c0 + key) * cache_stride + (ulong)hk * AM_HD + d;
                kv = kv_load4(kbase, kv_f16, at);
                vv = kv_load4(vbase, kv_f16, at);
            }
            vstore_half4(kv, 0, (local half*)(Ks + key * AM_WIDE) + d);
            local half* vt = (local half*)(Vt + d * AM_NARROW) + key;
            vstore_half(vv.x, 0, vt);
            vstore_half(vv.y, 0, vt + 2 * AM_NARROW);
            vstore_half(vv.z, 0, vt + 4 * AM_NARROW);
            vstore_half(vv.w, 0, vt + 6 * AM_NARROW);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Scores of the warp's 16 rows, soft-capped, masked causally and by the window.
        float s[4][4];
        for (int j = 0; j < 4; ++j) {
            for (int e = 0; e < 4; ++e) s[j][e] = 0.f;
            for (int k = 0; k < AM_HD; k += 16) mma_16x8x16(s[j], Qs, AM_WIDE, 16 * warp, Ks, AM_WIDE, 8 * j, k);
            for (int e = 0; e < 4; ++e) {
                const int r = 16 * warp + g + (e / 2) * 8, key = 8 * j + 2 * t + e % 2;
                Ss[r * AM_S + key] = c0 + key <= row_pos[r] && c0 + key >= row_first[r] ? soft_cap(s[j][e], cap2) : -INFINITY;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Online softmax, one work-item per row.
        if (lid < AM_ROWS) {
            local const float* sr = Ss + lid * AM_S;
            float tile_max = -INFINITY;
            for (int k = 0; k < AM_KEYS; ++k) tile_max = fmax(tile_max, sr[k]);
            const float m_old = row_max[lid], m_new = fmax(m_old, tile_max);
            // A row with nothing to attend to yet keeps p = 0 (no inf - inf).
            const bool none = m_new == -INFINITY;
            float sum = 0.f;
            local half* pr = (local half*)(Ps + lid * AM_NARROW);
            for (int k = 0; k < AM_KEYS; ++k) {
                const float p = none ? 0.f : exp2(sr[k] - m_new);
                sum += p;
                vstore_half(p, k, pr);
            }
            const float corr = none ? 1.f : exp2(m_old - m_new);
            row_corr[lid] = corr;
            row_sum[lid] = row_sum[lid] * corr + sum;
            row_max[lid] = m_new;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Rescale, then O += P V.
        const float corr_lo = row_corr[16 * warp + g], corr_hi = row_corr[16 * warp + g + 8];
        for (int j = 0; j < AM_HD / 8; ++j) {
            o[j][0] *= corr_lo;
            o[j][1] *= corr_lo;
            o[j][2] *= corr_hi;
            o[j][3] *= corr_hi;
            for (int k = 0; k < AM_KEYS; k += 16) mma_16x8x16(o[j], Ps, AM_NARROW, 16 * warp, Vt, AM_NARROW, 8 * j, k);
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // the next tile overwrites K, V and P
    }

    for (int e = 0; e < 4; ++e) {
        const int r = 16 * warp + g + (e / 2) * 8, n = n0 + r;
        if (n >= N) continue;
        const float inv = row_pos[r] < 0 ? 0.f : 1.f / row_sum[r];
        global float* y = PTR(float, yb, yoff) + ((ulong)n * H + h) * AM_HD;
        for (int j = 0; j < AM_HD / 8; ++j) y[8 * j + 2 * t + e % 2] = o[j][e] * inv;
    }
}

#undef AM_WIDE
#undef AM_WG
#undef AM_NAME
#undef AM_ROWS
#undef AM_HD
#endif  // MMA_KERNELS
