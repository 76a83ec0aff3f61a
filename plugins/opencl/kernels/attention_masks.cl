// What every attention kernel applies to a query row's scores (attention.cl,
// and attention_mma.cl, which is built as programs of its own): ATTENTION_EXT's
// window and soft-cap.

// The window's first key for position p.
inline int window_first(int p, int window) { return window > 0 ? max(0, p - window + 1) : 0; }
// cap * tanh(s / cap) where cap > 0.
inline float soft_cap(float s, float cap) { return cap > 0.f ? cap * tanh(s / cap) : s; }
