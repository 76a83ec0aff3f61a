// A dispatch as plain data, and each shader's arguments as a C++ type.
//
// Every shader reads the same descriptor set (binding 0: the meta buffer;
// bindings 1..8: the operands) and the same push-constant block
// (PushConstants, shaders/common.glsl), whose words u[0..15] and f[0..3]
// mean what the comment at the top of each .comp says. The structs below
// write one shader family's arguments by name: its tensors into the
// bindings and its scalars into the words. put() is the one place that
// knows their positions, so lowering never counts words or bindings:
//
//   Dispatch d = dispatch("softmax", node_index, NormArgs{.x = in[0], .y = out, .rows = R, .dim = D});
//
// Unnamed words and bindings stay 0 and -1 (none). Keep each struct in
// step with its shader.
#pragma once

#include "vk_pipelines.hpp"

#include <string>
#include <utility>
#include <vector>

namespace hetero::vk {

struct Dispatch {
    std::string shader;
    std::vector<uint32_t> spec;  // specialisation constants (part of the pipeline's key)
    PushConstants push;
    uint32_t groups[3] = {1, 1, 1};
    int32_t operand[kOperandBindings] = {-1, -1, -1, -1, -1, -1, -1, -1};  // tensor at binding b + 1 (in0..in3, out0..out2, in4)
    uint64_t scratch_bytes = 0;  // of the executable's scratch area it uses (kScratchOperand)
};

// An operand that is no tensor but the executable's scratch area: arena
// bytes after its tensors, as many as the largest Dispatch::scratch_bytes,
// which a dispatch leaves to the next ones (attention's partial softmaxes
// to their merge). Barriers are planned around it as around a tensor.
inline constexpr int32_t kScratchOperand = -2;

// Dispatch::operand indices of bindings 1..8.
enum OperandSlot : uint32_t {
    kIn0 = 0, kIn1 = 1, kIn2 = 2, kIn3 = 3,
    kOut0 = kFirstOutput, kOut1 = kFirstOutput + 1, kOut2 = kFirstOutput + 2,
    kIn4 = kFirstOutput + kOutputs,
};

// shaders/embedding.comp: out[n, :] = table[ids[n], :].
struct EmbeddingArgs {
    int32_t table, ids, y;
    uint32_t rows, dim, vocab, table_dtype;  // u[0..3]: N, D, V, the table's hetero_dtype
    void put(Dispatch& d) const {
        d.operand[kIn0] = table; d.operand[kIn1] = ids; d.operand[kOut0] = y;
        d.push.u[0] = rows; d.push.u[1] = dim; d.push.u[2] = vocab; d.push.u[3] = table_dtype;
    }
};

// What a matmul adds to each output (u[3]).
enum class MatmulExtra : uint32_t { None = 0, Bias = 1, Residual = 2 };

// shaders/matvec.comp, matmul.comp and matmul_coop.comp over one matrix:
// y = x W^T (+ bias [M] or a residual [N, M]).
struct MatmulArgs {
    int32_t x, w, extra = -1, y;
    uint32_t rows, out_dim, in_dim;                  // u[0..2]: N, M, K
    MatmulExtra extra_kind = MatmulExtra::None;      // u[3]
    void put(Dispatch& d) const {
        d.operand[kIn0] = x; d.operand[kIn1] = w; d.operand[kIn2] = extra; d.operand[kOut0] = y;
        d.push.u[0] = rows; d.push.u[1] = out_dim; d.push.u[2] = in_dim; d.push.u[3] = uint32_t(extra_kind);
    }
};

// The same shaders with MULTI=1: up to three matrices over one x, each with
// its output (-1 and 0 rows where absent); NORM=1 normalises x with
// `norm_weight` and `eps` first; SWIGLU=1 writes silu(y0) * y1 to y[0].
struct MultiMatmulArgs {
    int32_t x, w[3], y[3], norm_weight = -1;
    uint32_t rows, in_dim;    // u[0] N, u[2] K
    uint32_t out_dims[3];     // u[1], u[4], u[5]: each matrix's M
    float eps = 0.f;          // f[0] (NORM)
    void put(Dispatch& d) const {
        d.operand[kIn0] = x; d.operand[kIn1] = w[0]; d.operand[kIn2] = w[1]; d.operand[kIn3] = w[2];
        d.operand[kOut0] = y[0]; d.operand[kOut1] = y[1]; d.operand[kOut2] = y[2]; d.operand[kIn4] = norm_weight;
        d.push.u[0] = rows; d.push.u[1] = out_dims[0]; d.push.u[2] = in_dim;
        d.push.u[4] = out_dims[1]; d.push.u[5] = out_dims[2];
        d.push.f[0] = eps;
    }
};

// shaders/rmsnorm.comp (w, f[0] = eps) and softmax.comp (no w, f[0] = scale): one row at a time.
struct NormArgs {
    int32_t x, w = -1, y;
    uint32_t rows, dim;  // u[0], u[1]
    float param = 0.f;   // f[0]
    void put(Dispatch& d) const {
        d.operand[kIn0] = x; d.operand[kIn1] = w; d.operand[kOut0] = y;
        d.push.u[0] = rows; d.push.u[1] = dim; d.push.f[0] = param;
    }
};

// shaders/rope.comp: ROPE, ROPE_SCALED (SCALED=1), a Q/K pair (PAIR=1) and
// a pair that also stores K's rotated rows and V into the caches (STORE=1).
struct RopeArgs {
    int32_t x, positions, y;
    int32_t factors = -1;                     // SCALED: binding 8 (positions stand in when there are none)
    int32_t x2 = -1, y2 = -1;                 // PAIR: the second tensor (with STORE, y2 is K's cache)
    int32_t v = -1, v_cache = -1;             // STORE
    uint32_t rows, heads, head_dim, rot_dims;  // u[0..3]: N, H, Hd, rotated dims
    uint32_t mode;                            // u[4]: 0 adjacent pairs, 1 halves
    uint32_t heads2 = 0;                      // u[5] (PAIR)
    uint32_t cache_rows = 0, cache_f16 = 0;   // u[6], u[7] (STORE)
    uint32_t has_factors = 0;                 // u[8] (SCALED)
    float base, freq_scale = 0.f;             // f[0], f[1] (SCALED)
    void put(Dispatch& d) const {
        d.operand[kIn0] = x; d.operand[kIn1] = positions; d.operand[kIn2] = x2; d.operand[kIn3] = v;
        d.operand[kOut0] = y; d.operand[kOut1] = y2; d.operand[kOut2] = v_cache; d.operand[kIn4] = factors;
        d.push.u[0] = rows; d.push.u[1] = heads; d.push.u[2] = head_dim; d.push.u[3] = rot_dims; d.push.u[4] = mode;
        d.push.u[5] = heads2; d.push.u[6] = cache_rows; d.push.u[7] = cache_f16; d.push.u[8] = has_factors;
        d.push.f[0] = base; d.push.f[1] = freq_scale;
    }
};

// shaders/attention*.comp: causal attention over the caches; every variant
// applies ATTENTION_EXT's window and soft cap (shaders/common.glsl).
struct AttentionArgs {
    int32_t q, k_cache, v_cache, positions, y;
    uint32_t rows, heads, kv_heads, head_dim, cache_rows;  // u[0..4]: N, H, Hkv, Hd, C
    uint32_t cache_f16;                                    // u[5]
    uint32_t window = 0;                                   // u[6] (0 = none)
    float scale, softcap = 0.f;                            // f[0], f[1] (0 = none)
    // attention_basic.comp only: keys per segment (u[7]; 0 = all of them,
    // into y). Segment z (grid z) writes its partial softmax per (row, head)
    // to `partials` (binding 6) instead, for attention_merge.comp.
    uint32_t segment_keys = 0;
    int32_t partials = -1;
    // ATTENTION_SEQS (attention.comp, attention_basic.comp): cache rows of one
    // sequence of the stack (u[8]); 0 for the other attentions.
    uint32_t seq_rows = 0;
    void put(Dispatch& d) const {
        d.operand[kIn0] = q; d.operand[kIn1] = k_cache; d.operand[kIn2] = v_cache; d.operand[kIn3] = positions; d.operand[kOut0] = y;
        d.operand[kOut1] = partials;
        d.push.u[0] = rows; d.push.u[1] = heads; d.push.u[2] = kv_heads; d.push.u[3] = head_dim; d.push.u[4] = cache_rows;
        d.push.u[5] = cache_f16; d.push.u[6] = window; d.push.u[7] = segment_keys; d.push.u[8] = seq_rows;
        d.push.f[0] = scale; d.push.f[1] = softcap;
    }
};

// shaders/attention_merge.comp: y[g, :] from the `segments` partial
// softmaxes of (row, head) g that attention_basic.comp wrote to `partials`
// ([segment][g][Hd + 2]: the unnormalised sum of weighted V rows, the
// scores' max, the sum of their exponentials).
struct AttentionMergeArgs {
    int32_t partials, y;
    uint32_t groups, head_dim, segments;  // u[0..2]: N x H, Hd, segments
    void put(Dispatch& d) const {
        d.operand[kIn0] = partials; d.operand[kOut0] = y;
        d.push.u[0] = groups; d.push.u[1] = head_dim; d.push.u[2] = segments;
    }
};

// shaders/elementwise.comp's operations (u[2]).
enum class ElementwiseOp : uint32_t { Add = 0, Mul = 1, Swiglu = 2, Geglu = 3, Softcap = 4 };

// shaders/elementwise.comp: y = op(a, b) over n elements, b broadcast along
// the last dim when `broadcast` (its width) is not 0; SOFTCAP reads a alone.
struct ElementwiseArgs {
    int32_t a, b, y;
    uint32_t count, broadcast;  // u[0], u[1]
    ElementwiseOp op;           // u[2]
    float param;                // f[0]: the cap of SOFTCAP
    void put(Dispatch& d) const {
        d.operand[kIn0] = a; d.operand[kIn1] = b; d.operand[kOut0] = y;
        d.push.u[0] = count; d.push.u[1] = broadcast; d.push.u[2] = uint32_t(op); d.push.f[0] = param;
    }
};

// shaders/to_f32.comp (elements, the source's dtype), from_f32_half.comp
// (elements, the target's dtype) and from_f32_quant.comp (32-element blocks,
// the target's dtype).
struct ConvertArgs {
    int32_t x, y;
    uint32_t count, dtype;  // u[0], u[1]
    void put(Dispatch& d) const {
        d.operand[kIn0] = x; d.operand[kOut0] = y;
        d.push.u[0] = count; d.push.u[1] = dtype;
    }
};

// shaders/store_rows.comp: cache[positions[n], :] = src[n, :]; PAIR=1 a
// second source and cache (V next to K) with the same positions.
struct StoreRowsArgs {
    int32_t src, positions, cache;
    int32_t src2 = -1, cache2 = -1;             // PAIR
    uint32_t rows, dim, cache_rows, cache_f16;  // u[0..3]: N, D, C, 1 for an f16 cache
    void put(Dispatch& d) const {
        d.operand[kIn0] = src; d.operand[kIn1] = positions; d.operand[kIn2] = src2;
        d.operand[kOut0] = cache; d.operand[kOut1] = cache2;
        d.push.u[0] = rows; d.push.u[1] = dim; d.push.u[2] = cache_rows; d.push.u[3] = cache_f16;
    }
};

// A dispatch of `shader` for node `node_index` (push.node: which node an
// error report names) with `args`; the caller sets spec and groups.
template <class Args>
Dispatch dispatch(std::string shader, uint32_t node_index, const Args& args) {
    Dispatch d;
    d.shader = std::move(shader);
    d.push.node = node_index;
    args.put(d);
    return d;
}

}  // namespace hetero::vk
