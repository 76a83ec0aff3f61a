// Row-wise and element-wise ops: embedding, rmsnorm, rope (and rope_scaled),
// swiglu, geglu, softcap, add/mul, softmax, store_rows.

// One work-item per output element; global = (D rounded up, N).
// planar_blocks > 0: a Q4_0/Q8_0 table in the planar layout, of that many blocks.
kernel void embedding(global const uchar* tb, ulong toff, int dtype, global const uchar* ib, ulong ioff,
                      global uchar* yb, ulong yoff, int D, int V, global int* err, int node, ulong planar_blocks) {
    const int d = get_global_id(0);
    const int n = get_global_id(1);
    if (d >= D) return;
    const int id = CPTR(int, ib, ioff)[n];
    global float* y = PTR(float, yb, yoff) + (ulong)n * D;
    if (id < 0 || id >= V) {
        if (d == 0) report_error(err, ERR_ID_RANGE, node);
        y[d] = 0.f;
        return;
    }
    if (planar_blocks) {
        y[d] = planar_elem(tb + toff, dtype, planar_blocks, (ulong)id * D + d);
        return;
    }
    global const uchar* row = tb + toff + (ulong)id * row_bytes_of(dtype, D);
    y[d] = load_elem(row, dtype, d);
}

// One work-group per row.
kernel void rmsnorm(global const uchar* xb, ulong xoff, global const uchar* wb, ulong woff, global uchar* yb,
                    ulong yoff, int D, float eps, local float* red) {
    const ulong r = get_group_id(0);
    const int lid = get_local_id(0);
    const int ls = get_local_size(0);
    global const float* x = CPTR(float, xb, xoff) + r * D;
    global const float* w = CPTR(float, wb, woff);
    global float* y = PTR(float, yb, yoff) + r * D;
    float ss = 0.f;
    for (int i = lid; i < D; i += ls) ss += x[i] * x[i];
    ss = group_sum(ss, red);
    const float scale = 1.f / sqrt(ss / (float)D + eps);
    for (int i = lid; i < D; i += ls) y[i] = x[i] * scale * w[i];
}

// Rotation of one element pair by position `pos`; shared by rope and
// rope_store so a fused launch rounds exactly like the separate ones.
inline float2 rotate_pair(float x0, float x1, float a) {
    const float c = cos(a), s = sin(a);
    return (float2)(x0 * c - x1 * s, x0 * s + x1 * c);
}
inline float2 rope_pair(float x0, float x1, float pos, int j, int rot, float base) {
    const float freq = pow(base, -(float)(2 * j) / (float)rot);
    return rotate_pair(x0, x1, pos * freq);
}
// ROPE_SCALED's rotation (freq_scale, and factors when has_factors); with
// scaled == 0 exactly rope_pair, so fused ROPE groups round as before.
inline float2 rope_pair_scaled(float x0, float x1, float pos, int j, int rot, float base, int scaled, float freq_scale,
                               int has_factors, global const float* factors) {
    float freq = pow(base, -(float)(2 * j) / (float)rot);
    if (scaled) {
        freq *= freq_scale;
        if (has_factors) freq /= factors[j];
    }
    return rotate_pair(x0, x1, pos * freq);
}

// Item j of a head: j < rot/2 rotates elements (i0, i1); the others copy
// element `tail` of [rot, Hd).
#define ROPE_ITEM_INDICES                              \
    const int half_rot = rot / 2;                      \
    const int i0 = halves ? j : 2 * j;                 \
    const int i1 = halves ? j + half_rot : 2 * j + 1;  \
    const int tail = j - half_rot + rot;

// One work-item per rotated pair or copied element of a head:
// items [0, rot/2) rotate, items [rot/2, Hd - rot/2) copy the tail [rot, Hd).
// global = (Hd - rot/2 rounded up, H, N).
kernel void rope(global const uchar* xb, ulong xoff, global const uchar* pb, ulong poff, global uchar* yb,
                 ulong yoff, int H, int Hd, int rot, int halves, float base) {
    const int j = get_global_id(0);
    const int h = get_global_id(1);
    const int n = get_global_id(2);
    ROPE_ITEM_INDICES
    if (j >= Hd - half_rot) return;
    const ulong head = ((ulong)n * H + h) * Hd;
    global const float* x = CPTR(float, xb, xoff) + head;
    global float* y = PTR(float, yb, yoff) + head;
    if (j >= half_rot) {
        y[tail] = x[tail];
        return;
    }
    const float2 r = rope_pair(x[i0], x[i1], (float)CPTR(int, pb, poff)[n], j, rot, base);
    y[i0] = r.x;
    y[i1] = r.y;
}

// ROPE_SCALED: rope's work-items; pair j turns by
// pos * freq_scale * base^(-2j/rot) / factors[j] (factors only when has_factors).
kernel void rope_scaled(global const uchar* xb, ulong xoff, global const uchar* pb, ulong poff, global uchar* yb,
                        ulong yoff, int H, int Hd, int rot, int halves, float base, global const uchar* fb, ulong foff,
                        int has_factors, float freq_scale) {
    const int j = get_global_id(0);
    const int h = get_global_id(1);
    const int n = get_global_id(2);
    ROPE_ITEM_INDICES
    if (j >= Hd - half_rot) return;
    const ulong head = ((ulong)n * H + h) * Hd;
    global const float* x = CPTR(float, xb, xoff) + head;
    global float* y = PTR(float, yb, yoff) + head;
    if (j >= half_rot) {
        y[tail] = x[tail];
        return;
    }
    const float2 r = rope_pair_scaled(x[i0], x[i1], (float)CPTR(int, pb, poff)[n], j, rot, base, 1, freq_scale, has_factors,
                                      CPTR(float, fb, foff));
    y[i0] = r.x;
    y[i1] = r.y;
}

inline void cache_put(global uchar* cb, ulong coff, int cache_f16, ulong i, float v) {
    if (cache_f16) PTR(ushort, cb, coff)[i] = float_to_half_bits(v);
    else PTR(float, cb, coff)[i] = v;
}

// The ROPE pair (Q, K) and the K and V STORE_ROWS of an attention block in
// one launch; the rotated K goes straight into its cache. Work-items as in
// rope, over head slots (global dim 1) [0, Hq): rotate q into qr; [Hq, Hq+Hk):
// rotate k into the K cache; [Hq+Hk, Hq+2Hk): copy v into the V cache.
kernel void rope_store(global const uchar* qb, ulong qoff, global const uchar* pb, ulong poff, global uchar* qrb, ulong qroff,
                       global const uchar* kb, ulong koff, global uchar* kcb, ulong kcoff, global const uchar* vb, ulong voff,
                       global uchar* vcb, ulong vcoff, int Hq, int Hk, int Hd, int rot, int halves, float base, int C,
                       int cache_f16, global int* err, int node, global const uchar* fb, ulong foff, int scaled,
                       int has_factors, float freq_scale, global const uchar* rb, ulong roff) {
    const int j = get_global_id(0);
    const int slot = get_global_id(1);
    const int n = get_global_id(2);
    ROPE_ITEM_INDICES
    if (j >= Hd - half_rot) return;
    const int p = CPTR(int, pb, poff)[n];
    if (slot < Hq) {
        const ulong head = ((ulong)n * Hq + slot) * Hd;
        global const float* x = CPTR(float, qb, qoff) + head;
        global float* y = PTR(float, qrb, qroff) + head;
        if (j >= half_rot) {
            y[tail] = x[tail];
        } else {
            const float2 r = rope_pair_scaled(x[i0], x[i1], (float)p, j, rot, base, scaled, freq_scale, has_factors, CPTR(float, fb, foff));
            y[i0] = r.x;
            y[i1] = r.y;
        }
        return;
    }
    // The caches' row: the position, or in stacked caches (several
    // sequences) the sequence's row for it.
    const int row = CPTR(int, rb, roff)[n];
    if (row < 0 || row >= C) {
        if (j == 0 && slot == Hq) report_error(err, ERR_POS_RANGE, node);
        return;
    }
    const bool is_k = slot < Hq + Hk;
    const int h = is_k ? slot - Hq : slot - Hq - Hk;
    global const float* x = CPTR(float, is_k ? kb : vb, is_k ? koff : voff) + ((ulong)n * Hk + h) * Hd;
    global uchar* cb = is_k ? kcb : vcb;
    const ulong coff = is_k ? kcoff : vcoff;
    const ulong dst = ((ulong)row * Hk + h) * Hd;
    if (j >= half_rot) {
        cache_put(cb, coff, cache_f16, dst + tail, x[tail]);
    } else if (is_k) {
        const float2 r = rope_pair_scaled(x[i0], x[i1], (float)p, j, rot, base, scaled, freq_scale, has_factors, CPTR(float, fb, foff));
        cache_put(cb, coff, cache_f16, dst + i0, r.x);
        cache_put(cb, coff, cache_f16, dst + i1, r.y);
    } else {
        cache_put(cb, coff, cache_f16, dst + i0, x[i0]);
        cache_put(cb, coff, cache_f16, dst + i1, x[i1]);
    }
}

kernel void swiglu(global const uchar* gb, ulong goff, global const uchar* ub, ulong uoff, global uchar* yb,
                   ulong yoff, ulong n) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const float g = CPTR(float, gb, goff)[i];
    PTR(float, yb, yoff)[i] = g / (1.f + exp(-g)) * CPTR(float, ub, uoff)[i];
}

// gelu(g) * u, GELU in its tanh form.
kernel void geglu(global const uchar* gb, ulong goff, global const uchar* ub, ulong uoff, global uchar* yb,
                  ulong yoff, ulong n) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const float g = CPTR(float, gb, goff)[i];
    const float t = tanh(0.7978845608f * g * (1.f + 0.044715f * g * g));
    PTR(float, yb, yoff)[i] = 0.5f * g * (1.f + t) * CPTR(float, ub, uoff)[i];
}

// cap * tanh(x / cap).
kernel void softcap(global const uchar* xb, ulong xoff, global uchar* yb, ulong yoff, ulong n, float cap) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    PTR(float, yb, yoff)[i] = cap * tanh(CPTR(float, xb, xoff)[i] / cap);
}

// b_period == 0: b has a's shape; otherwise b is [b_period] broadcast over rows.
kernel void binary(global const uchar* ab, ulong aoff, global const uchar* bb, ulong boff, global uchar* yb,
                   ulong yoff, ulong n, int b_period, int is_mul) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const float a = CPTR(float, ab, aoff)[i];
    const float b = CPTR(float, bb, boff)[b_period ? i % (ulong)b_period : i];
    PTR(float, yb, yoff)[i] = is_mul ? a * b : a + b;
}

// One work-group per row.
kernel void softmax(global const uchar* xb, ulong xoff, global uchar* yb, ulong yoff, int D, float scale,
                    local float* red) {
    const ulong r = get_group_id(0);
    const int lid = get_local_id(0);
    const int ls = get_local_size(0);
    global const float* x = CPTR(float, xb, xoff) + r * D;
    global float* y = PTR(float, yb, yoff) + r * D;
    float m = -INFINITY;
    for (int i = lid; i < D; i += ls) m = fmax(m, x[i] * scale);
    m = group_max(m, red);
    float s = 0.f;
    for (int i = lid; i < D; i += ls) {
        const float e = exp(x[i] * scale - m);
        y[i] = e;
        s += e;
    }
    s = group_sum(s, red);
    const float inv = 1.f / s;
    for (int i = lid; i < D; i += ls) y[i] *= inv;
}

// One work-item per element; global = (D rounded up, N). Cache rows are f32 or f16.
kernel void store_rows(global const uchar* sb, ulong soff, global const uchar* pb, ulong poff, global uchar* cb,
                       ulong coff, int D, int C, int cache_f16, global int* err, int node) {
    const int d = get_global_id(0);
    const int n = get_global_id(1);
    if (d >= D) return;
    const int p = CPTR(int, pb, poff)[n];
    if (p < 0 || p >= C) {
        if (d == 0) report_error(err, ERR_POS_RANGE, node);
        return;
    }
    cache_put(cb, coff, cache_f16, (ulong)p * D + d, CPTR(float, sb, soff)[(ulong)n * D + d]);
}
