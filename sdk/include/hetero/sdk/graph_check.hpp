// Shape and dtype rules of every op, shared by the core (before it sends a
// graph) and by providers (before they trust one). Returns an empty string
// when the node is well formed, otherwise a message naming the problem.
#pragma once

#include <hetero/ep_api.h>
#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace hetero::sdk {

inline const char* op_name(uint32_t op) {
    switch (op) {
        case HETERO_OP_EMBEDDING: return "embedding";
        case HETERO_OP_MATMUL: return "matmul";
        case HETERO_OP_RMSNORM: return "rmsnorm";
        case HETERO_OP_ROPE: return "rope";
        case HETERO_OP_ATTENTION: return "attention";
        case HETERO_OP_SWIGLU: return "swiglu";
        case HETERO_OP_ADD: return "add";
        case HETERO_OP_SOFTMAX: return "softmax";
        case HETERO_OP_CONVERT: return "convert";
        case HETERO_OP_STORE_ROWS: return "store_rows";
        case HETERO_OP_MUL: return "mul";
        case HETERO_OP_ROPE_SCALED: return "rope_scaled";
        case HETERO_OP_ATTENTION_EXT: return "attention_ext";
        case HETERO_OP_GEGLU: return "geglu";
        case HETERO_OP_SOFTCAP: return "softcap";
        case HETERO_OP_ATTENTION_SEQS: return "attention_seqs";
        default: return "unknown";
    }
}

inline int64_t element_count(const hetero_tensor_desc& t) {
    int64_t n = 1;
    for (uint32_t i = 0; i < t.ndim && i < HETERO_MAX_DIMS; ++i) n *= t.shape[i];
    return n;
}

inline int64_t inner_dim(const hetero_tensor_desc& t) { return t.ndim ? t.shape[t.ndim - 1] : 1; }
// Width of a "(rows)" operand: the product of every dimension but the first.
inline int64_t row_width(const hetero_tensor_desc& t) {
    int64_t n = 1;
    for (uint32_t i = 1; i < t.ndim && i < HETERO_MAX_DIMS; ++i) n *= t.shape[i];
    return n;
}
// Same rank and extents (dtypes may differ).
inline bool same_shape(const hetero_tensor_desc& a, const hetero_tensor_desc& b) {
    if (a.ndim != b.ndim) return false;
    for (uint32_t i = 0; i < a.ndim; ++i)
        if (a.shape[i] != b.shape[i]) return false;
    return true;
}
inline int64_t outer_rows(const hetero_tensor_desc& t) { return t.ndim ? element_count(t) / std::max<int64_t>(1, inner_dim(t)) : 1; }

// The first cache row of the sequence that cache row `row` belongs to:
// ATTENTION_SEQS stacks sequences of iparams[1] rows; every other attention
// has one sequence, starting at row 0.
inline int64_t seq_base(const hetero_node& attention, int64_t row) {
    const int64_t c = attention.op == HETERO_OP_ATTENTION_SEQS ? attention.iparams[1] : 0;
    return c > 0 ? row / c * c : 0;
}

// Total bytes of a tensor (0 when the descriptor is malformed).
// Leading dims of each head a ROPE node rotates (iparams[1]; 0: all of them).
inline int64_t rope_dims(const hetero_node& rope, int64_t head_dim) { return rope.iparams[1] ? rope.iparams[1] : head_dim; }

inline uint64_t tensor_bytes(const hetero_tensor_desc& t) {
    const int64_t inner = inner_dim(t);
    if (inner % block_elems(t.dtype) != 0) return 0;
    return row_bytes(t.dtype, inner) * uint64_t(outer_rows(t));
}

inline std::string check_tensor(const hetero_tensor_desc& t) {
    if (t.ndim < 1 || t.ndim > HETERO_MAX_DIMS) return "ndim " + std::to_string(t.ndim) + " outside 1..4";
    if (t.dtype >= HETERO_DTYPE_COUNT_1_3) return "unknown dtype " + std::to_string(t.dtype);
    if (t.kind > HETERO_TENSOR_CONSTANT) return "unknown tensor kind " + std::to_string(t.kind);
    int64_t n = 1;
    for (uint32_t i = 0; i < t.ndim; ++i) {
        if (t.shape[i] <= 0 || t.shape[i] > (int64_t(1) << 40)) return "dimension " + std::to_string(i) + " is " + std::to_string(t.shape[i]);
        if (n > (int64_t(1) << 42) / t.shape[i]) return "too many elements";
        n *= t.shape[i];
    }
    if (inner_dim(t) % block_elems(t.dtype) != 0)
        return std::string(dtype_name(t.dtype)) + " needs an innermost dimension divisible by " + std::to_string(block_elems(t.dtype)) +
               ", got " + std::to_string(inner_dim(t));
    return {};
}

namespace detail {
inline std::string shape_str(const hetero_tensor_desc& t) {
    std::string s = "[";
    for (uint32_t i = 0; i < t.ndim && i < HETERO_MAX_DIMS; ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
    return s + "]";
}
inline bool is_float_storage(uint32_t d) {
    return d == HETERO_DTYPE_F32 || d == HETERO_DTYPE_F16 || d == HETERO_DTYPE_BF16 || is_quant_dtype(d);
}
}  // namespace detail

// Checks one node against the tensors of its graph.
inline std::string check_node(const hetero_node& node, const hetero_tensor_desc* tensors, uint32_t n_tensors) {
    using detail::shape_str;
    const std::string op = op_name(node.op);
    if (op == "unknown") return "unknown op " + std::to_string(node.op);
    if (node.n_inputs > HETERO_MAX_INPUTS) return op + ": too many inputs";
    auto valid_id = [&](int32_t id) { return id >= 0 && uint32_t(id) < n_tensors; };
    if (!valid_id(node.output)) return op + ": output tensor id " + std::to_string(node.output) + " out of range";
    for (uint32_t i = 0; i < node.n_inputs; ++i)
        if (!valid_id(node.inputs[i])) return op + ": input " + std::to_string(i) + " tensor id out of range";
    auto in = [&](uint32_t i) -> const hetero_tensor_desc& { return tensors[node.inputs[i]]; };
    const hetero_tensor_desc& out = tensors[node.output];
    auto need_inputs = [&](uint32_t lo, uint32_t hi) -> std::string {
        if (node.n_inputs < lo || node.n_inputs > hi)
            return op + ": expects " + std::to_string(lo) + (lo == hi ? "" : ".." + std::to_string(hi)) + " inputs, got " + std::to_string(node.n_inputs);
        return {};
    };
    auto is = [](const hetero_tensor_desc& t, uint32_t dtype) { return t.dtype == dtype; };
    auto bad = [&](const std::string& what) { return op + ": " + what; };
    std::string e;
    switch (node.op) {
        case HETERO_OP_EMBEDDING:
            if (!(e = need_inputs(2, 2)).empty()) return e;
            if (in(0).ndim != 2 || !detail::is_float_storage(in(0).dtype)) return bad("table must be a 2-D float or quantized tensor");
            if (!is(in(1), HETERO_DTYPE_I32) || in(1).ndim != 1) return bad("ids must be 1-D i32");
            if (!is(out, HETERO_DTYPE_F32) || out.ndim != 2 || out.shape[0] != in(1).shape[0] || out.shape[1] != in(0).shape[1])
                return bad("output must be f32 [" + std::to_string(in(1).shape[0]) + "," + std::to_string(in(0).shape[1]) + "], got " + shape_str(out));
            return {};
        case HETERO_OP_MATMUL:
            if (!(e = need_inputs(2, 3)).empty()) return e;
            if (!is(in(0), HETERO_DTYPE_F32) || in(0).ndim < 2) return bad("x must be f32 [N,K] (rows), got " + shape_str(in(0)));
            if (in(1).ndim != 2 || !detail::is_float_storage(in(1).dtype)) return bad("W must be 2-D float or quantized");
            if (row_width(in(0)) != in(1).shape[1]) return bad("x " + shape_str(in(0)) + " and W " + shape_str(in(1)) + " disagree on K");
            if (node.n_inputs == 3 && (!is(in(2), HETERO_DTYPE_F32) || in(2).ndim != 1 || in(2).shape[0] != in(1).shape[0]))
                return bad("bias must be f32 [M]");
            if (!is(out, HETERO_DTYPE_F32) || out.ndim < 2 || out.shape[0] != in(0).shape[0] || row_width(out) != in(1).shape[0])
                return bad("output must be f32 [N,M] (rows), got " + shape_str(out));
            return {};
        case HETERO_OP_RMSNORM:
            if (!(e = need_inputs(2, 2)).empty()) return e;
            if (!is(in(0), HETERO_DTYPE_F32) || !is(in(1), HETERO_DTYPE_F32) || in(1).ndim != 1 || in(1).shape[0] != inner_dim(in(0)))
                return bad("x must be f32 and weight f32 [D]");
            if (!is(out, HETERO_DTYPE_F32) || !same_shape(out, in(0))) return bad("output must match x");
            if (!(node.fparams[0] >= 0.f)) return bad("eps must be >= 0");
            return {};
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: {
            const bool scaled = node.op == HETERO_OP_ROPE_SCALED;
            if (!(e = need_inputs(2, scaled ? 3 : 2)).empty()) return e;
            const auto& x = in(0);
            if (!is(x, HETERO_DTYPE_F32) || x.ndim != 3) return bad("x must be f32 [N,H,Hd]");
            if (!is(in(1), HETERO_DTYPE_I32) || in(1).ndim != 1 || in(1).shape[0] != x.shape[0]) return bad("positions must be i32 [N]");
            if (!is(out, HETERO_DTYPE_F32) || !same_shape(out, x)) return bad("output must match x");
            const int64_t rot = rope_dims(node, x.shape[2]);
            if (rot % 2 != 0 || rot > x.shape[2] || rot < 0) return bad("rot_dims must be even and <= head dim");
            if (node.iparams[0] != HETERO_ROPE_ADJACENT && node.iparams[0] != HETERO_ROPE_HALVES) return bad("unknown rope mode");
            if (!(node.fparams[0] > 0.f)) return bad("base must be > 0");
            if (scaled && !(node.fparams[1] >= 0.f)) return bad("freq_scale must be >= 0 (0 means 1)");
            if (node.n_inputs == 3 && (!is(in(2), HETERO_DTYPE_F32) || in(2).ndim != 1 || in(2).shape[0] != rot / 2))
                return bad("freq_factors must be f32 [rot_dims/2]");
            return {};
        }
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: {
            if (!(e = need_inputs(4, 4)).empty()) return e;
            const bool ext = node.op != HETERO_OP_ATTENTION;
            if (ext && node.iparams[0] < 0) return bad("window must be >= 0 (0 = none)");
            if (ext && !(node.fparams[1] >= 0.f)) return bad("soft-cap must be >= 0 (0 = none)");
            if (node.op == HETERO_OP_ATTENTION_SEQS && (node.iparams[1] <= 0 || tensors[node.inputs[1]].shape[0] % node.iparams[1] != 0))
                return bad("rows per sequence (iparams[1]) must be > 0 and divide the cache rows " + std::to_string(tensors[node.inputs[1]].shape[0]));
            const auto &q = in(0), &k = in(1), &v = in(2), &pos = in(3);
            if (!is(q, HETERO_DTYPE_F32) || q.ndim != 3) return bad("q must be f32 [N,H,Hd]");
            for (const auto* c : {&k, &v})
                if ((!is(*c, HETERO_DTYPE_F32) && !is(*c, HETERO_DTYPE_F16)) || c->ndim != 3 || c->shape[2] != q.shape[2])
                    return bad("caches must be f32/f16 [C,Hkv,Hd] with q's head dim");
            if (!same_shape(k, v)) return bad("k and v caches differ in shape");
            if (q.shape[1] % k.shape[1] != 0) return bad("query heads must be a multiple of kv heads");
            if (!is(pos, HETERO_DTYPE_I32) || pos.ndim != 1 || pos.shape[0] != q.shape[0]) return bad("positions must be i32 [N]");
            if (!is(out, HETERO_DTYPE_F32) || !same_shape(out, q)) return bad("output must match q");
            return {};
        }
        case HETERO_OP_SWIGLU:
        case HETERO_OP_GEGLU:
            if (!(e = need_inputs(2, 2)).empty()) return e;
            if (!is(in(0), HETERO_DTYPE_F32) || !is(in(1), HETERO_DTYPE_F32) || !same_shape(in(0), in(1))) return bad("gate and up must be f32 of one shape");
            if (!is(out, HETERO_DTYPE_F32) || !same_shape(out, in(0))) return bad("output must match gate");
            return {};
        case HETERO_OP_ADD:
        case HETERO_OP_MUL:
            if (!(e = need_inputs(2, 2)).empty()) return e;
            if (!is(in(0), HETERO_DTYPE_F32) || !is(in(1), HETERO_DTYPE_F32)) return bad("inputs must be f32");
            if (!same_shape(in(0), in(1)) && !(in(1).ndim == 1 && in(1).shape[0] == inner_dim(in(0))))
                return bad("b must match a or be [D], got a " + shape_str(in(0)) + " b " + shape_str(in(1)));
            if (!is(out, HETERO_DTYPE_F32) || !same_shape(out, in(0))) return bad("output must match a");
            return {};
        case HETERO_OP_SOFTCAP:
            if (!(node.fparams[0] > 0.f) || !std::isfinite(node.fparams[0])) return bad("cap must be a finite number > 0");
            [[fallthrough]];
        case HETERO_OP_SOFTMAX:
            if (!(e = need_inputs(1, 1)).empty()) return e;
            if (!is(in(0), HETERO_DTYPE_F32) || !is(out, HETERO_DTYPE_F32) || !same_shape(out, in(0))) return bad("x and output must be f32 of one shape");
            return {};
        case HETERO_OP_CONVERT:
            if (!(e = need_inputs(1, 1)).empty()) return e;
            if (!detail::is_float_storage(in(0).dtype) || !detail::is_float_storage(out.dtype)) return bad("only float and quantized dtypes convert");
            if (!same_shape(out, in(0))) return bad("output must have x's shape");
            if (in(0).dtype != HETERO_DTYPE_F32 && out.dtype != HETERO_DTYPE_F32) return bad("one side must be f32");
            return {};
        case HETERO_OP_STORE_ROWS:
            if (!(e = need_inputs(2, 2)).empty()) return e;
            if (!is(in(0), HETERO_DTYPE_F32) || in(0).ndim < 2) return bad("src must be f32 [N,D] (rows)");
            if (!is(in(1), HETERO_DTYPE_I32) || in(1).ndim != 1 || in(1).shape[0] != in(0).shape[0]) return bad("positions must be i32 [N]");
            if ((!is(out, HETERO_DTYPE_F32) && !is(out, HETERO_DTYPE_F16)) || row_width(out) != row_width(in(0)))
                return bad("cache must be f32/f16 with rows of src's width");
            if (out.kind != HETERO_TENSOR_BOUND) return bad("cache must be a bound tensor");
            return {};
        default: return "unknown op " + std::to_string(node.op);
    }
}

// Checks a whole graph: descriptors, nodes, and that every tensor a node reads
// is bound, constant or produced by an earlier node.
inline std::string check_graph(const hetero_graph& g) {
    if (g.struct_size < sizeof(hetero_graph)) return "graph struct_size " + std::to_string(g.struct_size) + " too small";
    if (HETERO_ABI_MAJOR_OF(g.abi_version) != HETERO_ABI_VERSION_MAJOR) return "graph from another ABI major version";
    if (g.n_tensors && !g.tensors) return "graph has tensors but no descriptor array";
    if (g.n_nodes && !g.nodes) return "graph has nodes but no node array";
    std::string ready(g.n_tensors, 0);
    for (uint32_t i = 0; i < g.n_tensors; ++i) {
        std::string e = check_tensor(g.tensors[i]);
        if (!e.empty()) return "tensor " + std::to_string(i) + (g.tensors[i].name ? " (" + std::string(g.tensors[i].name) + ")" : "") + ": " + e;
        ready[i] = g.tensors[i].kind != HETERO_TENSOR_INTERNAL;
    }
    for (uint32_t n = 0; n < g.n_nodes; ++n) {
        const hetero_node& node = g.nodes[n];
        std::string e = check_node(node, g.tensors, g.n_tensors);
        if (!e.empty()) return "node " + std::to_string(n) + " " + e;
        for (uint32_t i = 0; i < node.n_inputs; ++i)
            if (!ready[node.inputs[i]]) return "node " + std::to_string(n) + " " + op_name(node.op) + " reads tensor " + std::to_string(node.inputs[i]) + " before anything writes it";
        if (g.tensors[node.output].kind == HETERO_TENSOR_CONSTANT) return "node " + std::to_string(n) + " writes a constant tensor";
        ready[node.output] = 1;
    }
    return {};
}

}  // namespace hetero::sdk
