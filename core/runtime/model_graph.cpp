#include <hetero/error.hpp>
#include <hetero/runtime/model_graph.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace hetero {

namespace {

struct RoleInfo {
    Role role;
    const char* name;
};
constexpr RoleInfo kRoles[] = {
    {Role::embedding, "embedding"}, {Role::attn_norm, "attn_norm"}, {Role::q, "attn_q"},          {Role::k, "attn_k"},
    {Role::v, "attn_v"},            {Role::rope_q, "rope_q"},       {Role::rope_k, "rope_k"},      {Role::store_k, "store_k"},
    {Role::store_v, "store_v"},     {Role::attention, "attention"}, {Role::attn_out, "attn_output"}, {Role::resid_attn, "resid_attn"},
    {Role::ffn_norm, "ffn_norm"},   {Role::gate, "ffn_gate"},       {Role::up, "ffn_up"},          {Role::swiglu, "swiglu"},
    {Role::down, "ffn_down"},       {Role::resid_ffn, "resid_ffn"}, {Role::out_norm, "output_norm"}, {Role::output, "output"},
    {Role::embd_scale, "embd_scale"}, {Role::q_norm, "attn_q_norm"}, {Role::k_norm, "attn_k_norm"},
    {Role::attn_post_norm, "post_attention_norm"}, {Role::ffn_post_norm, "post_ffw_norm"}, {Role::logit_softcap, "logit_softcap"},
};

int64_t row_width(const hetero_tensor_desc& t) {
    int64_t w = 1;
    for (uint32_t i = 1; i < t.ndim; ++i) w *= t.shape[i];
    return w;
}

}  // namespace

const char* role_name(Role r) {
    for (const auto& i : kRoles)
        if (i.role == r) return i.name;
    return "?";
}

bool role_from_name(const std::string& name, Role& out) {
    for (const auto& i : kRoles)
        if (name == i.name) {
            out = i.role;
            return true;
        }
    return false;
}

bool is_matmul_role(Role r) {
    for (Role m : kLayerMatmuls)
        if (m == r) return true;
    return r == Role::output;
}

int32_t ModelGraph::add_tensor(uint32_t dtype, const std::vector<int64_t>& shape, TensorUse use, int layer, std::string name) {
    if (shape.empty() || shape.size() > HETERO_MAX_DIMS) throw Error("model graph: tensor '" + name + "' has bad rank");
    ModelTensor t;
    t.desc.dtype = dtype;
    t.desc.kind = use == TensorUse::weight ? HETERO_TENSOR_CONSTANT : HETERO_TENSOR_INTERNAL;
    t.desc.ndim = uint32_t(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) t.desc.shape[i] = shape[i];
    names_.push_back(std::move(name));
    t.desc.name = names_.back().c_str();
    t.use = use;
    t.layer = layer;
    tensors.push_back(t);
    return int32_t(tensors.size() - 1);
}

int ModelGraph::node_index(int layer, Role r) const {
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].layer == layer && nodes[i].role == r) return int(i);
    return -1;
}

namespace {

// Adds a model's tensors and nodes to a graph: each weight once, activations
// by shape, nodes tagged with their layer, role and sequence.
struct GraphBuilder {
    const ModelFile& model;
    ModelGraph& g;
    std::map<std::string, int32_t> weight_ids;
    int node_seq = -1;  // the sequence the nodes added now work on alone (-1: every row)

    int32_t W(const std::string& name) {
        auto it = weight_ids.find(name);
        if (it != weight_ids.end()) return it->second;
        const WeightView& w = model.weight(name);
        const int32_t id = g.add_tensor(w.dtype, w.shape, TensorUse::weight, -1, name);
        weight_ids[name] = id;
        return id;
    }
    int32_t node(int layer, Role role, uint32_t op, std::initializer_list<int32_t> in, int32_t out, float f0 = 0.f,
                 std::initializer_list<int64_t> ip = {}, float f1 = 0.f) {
        ModelNode mn;
        mn.layer = layer;
        mn.role = role;
        mn.seq = node_seq;
        mn.node.op = op;
        mn.node.n_inputs = uint32_t(in.size());
        size_t i = 0;
        for (int32_t t : in) mn.node.inputs[i++] = t;
        mn.node.output = out;
        mn.node.fparams[0] = f0;
        mn.node.fparams[1] = f1;
        i = 0;
        for (int64_t v : ip) mn.node.iparams[i++] = v;
        g.nodes.push_back(mn);
        return out;
    }
    int32_t act(std::vector<int64_t> shape, int layer, const std::string& name) {
        return g.add_tensor(HETERO_DTYPE_F32, shape, TensorUse::activation, layer, name);
    }
    // Row `row` of tensor `base` (whose rows are contiguous) as a tensor of its own.
    int32_t row_view(int32_t base, int64_t row, const std::string& name) {
        const hetero_tensor_desc d = g.tensors[size_t(base)].desc;
        std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
        shape[0] = 1;
        const int32_t id = g.add_tensor(d.dtype, shape, g.tensors[size_t(base)].use, g.tensors[size_t(base)].layer, name);
        g.tensors[size_t(id)].view_of = base;
        g.tensors[size_t(id)].view_offset = uint64_t(row) * sdk::tensor_bytes(g.tensors[size_t(id)].desc);
        return id;
    }
    int32_t matmul(int layer, Role role, int32_t in, const std::string& w, const std::string& bias, int32_t out) {
        if (!bias.empty() && model.has(bias)) {
            node(layer, role, HETERO_OP_MATMUL, {in, W(w), W(bias)}, out);
            return out;
        }
        return node(layer, role, HETERO_OP_MATMUL, {in, W(w)}, out);
    }
};

// What every layer's attention needs to know about the graph being built.
struct AttentionShape {
    int32_t n, n_seq, n_ctx;
    int32_t pos;  // the positions tensor
    int32_t stacked_seqs;  // > 0: the step's attention over stacked caches of this many sequences
    int32_t cache_rows;    // with stacked_seqs: the rows of the stacked caches the step's rows are at
    float scale;
    bool rope_factors;
};

// Layer l's attention block from its input x: norm, Q/K/V, RoPE, the cache
// stores and attention (per sequence when there are several), the output
// projection; returns the block's output, before the residual add.
int32_t add_attention(GraphBuilder& gb, const LlamaHParams& hp, const AttentionShape& as, const std::vector<uint32_t>& cache_dtype, int l,
                      int32_t x) {
    ModelGraph& g = gb.g;
    const int32_t n = as.n, n_seq = as.n_seq, n_ctx = as.n_ctx, pos = as.pos;
    const int64_t D = hp.n_embd, H = hp.n_head, Hkv = hp.n_head_kv, Hd = hp.head_dim;
    const float eps = hp.norm_eps;
    const std::string b = fmt::format("blk.{}.", l);
    const bool swa = hp.layer_swa(l);
    const int32_t h = gb.node(l, Role::attn_norm, HETERO_OP_RMSNORM, {x, gb.W(b + "attn_norm.weight")}, gb.act({n, D}, l, b + "attn_in"), eps);
    int32_t q = gb.matmul(l, Role::q, h, b + "attn_q.weight", b + "attn_q.bias", gb.act({n, H, Hd}, l, b + "q"));
    int32_t k = gb.matmul(l, Role::k, h, b + "attn_k.weight", b + "attn_k.bias", gb.act({n, Hkv, Hd}, l, b + "k"));
    const int32_t v = gb.matmul(l, Role::v, h, b + "attn_v.weight", b + "attn_v.bias", gb.act({n, Hkv, Hd}, l, b + "v"));
    if (hp.qk_norm) {  // RMSNORM over each head's row
        q = gb.node(l, Role::q_norm, HETERO_OP_RMSNORM, {q, gb.W(b + "attn_q_norm.weight")}, gb.act({n, H, Hd}, l, b + "q_normed"), eps);
        k = gb.node(l, Role::k_norm, HETERO_OP_RMSNORM, {k, gb.W(b + "attn_k_norm.weight")}, gb.act({n, Hkv, Hd}, l, b + "k_normed"), eps);
    }
    // Sliding-window layers may have their own RoPE base and scale.
    const float base = swa && hp.rope_freq_base_swa > 0.f ? hp.rope_freq_base_swa : hp.rope_freq_base;
    const float fscale = swa && hp.rope_freq_scale_swa > 0.f ? hp.rope_freq_scale_swa : hp.rope_freq_scale;
    auto rope = [&](Role role, int32_t in, int64_t heads, const std::string& name) {
        const int32_t out = gb.act({n, heads, Hd}, l, name);
        if (!as.rope_factors && fscale == 1.f)
            return gb.node(l, role, HETERO_OP_ROPE, {in, pos}, out, base, {hp.rope_mode, hp.rope_dims});
        if (as.rope_factors)
            return gb.node(l, role, HETERO_OP_ROPE_SCALED, {in, pos, gb.W("rope_freqs.weight")}, out, base, {hp.rope_mode, hp.rope_dims}, fscale);
        return gb.node(l, role, HETERO_OP_ROPE_SCALED, {in, pos}, out, base, {hp.rope_mode, hp.rope_dims}, fscale);
    };
    const int32_t qr = rope(Role::rope_q, q, H, b + "q_rope");
    const int32_t kr = rope(Role::rope_k, k, Hkv, b + "k_rope");
    const uint32_t cd = cache_dtype[size_t(l)];
    // The cache stores and the attention of one sequence: its rows, its positions, its cache.
    auto attend = [&](int32_t q_rows, int32_t k_rows, int32_t v_rows, int32_t positions, int32_t out, int seq, const std::string& cache_name) {
        const int32_t kc = g.add_tensor(cd, {n_ctx, Hkv, Hd}, TensorUse::k_cache, l, b + "k_cache" + cache_name);
        const int32_t vc = g.add_tensor(cd, {n_ctx, Hkv, Hd}, TensorUse::v_cache, l, b + "v_cache" + cache_name);
        g.tensors[size_t(kc)].seq = g.tensors[size_t(vc)].seq = seq;
        gb.node(l, Role::store_k, HETERO_OP_STORE_ROWS, {k_rows, positions}, kc);
        gb.node(l, Role::store_v, HETERO_OP_STORE_ROWS, {v_rows, positions}, vc);
        if (out < 0) out = gb.act({n, H, Hd}, l, b + "attn");
        if (swa || hp.attn_softcap > 0.f)
            gb.node(l, Role::attention, HETERO_OP_ATTENTION_EXT, {q_rows, kc, vc, positions}, out, as.scale, {swa ? hp.n_swa : 0}, hp.attn_softcap);
        else
            gb.node(l, Role::attention, HETERO_OP_ATTENTION, {q_rows, kc, vc, positions}, out, as.scale);
        return out;
    };
    int32_t att = -1;
    if (n_seq == 1) {
        att = attend(qr, kr, v, pos, -1, 0, "");
    } else if (as.stacked_seqs > 0) {
        // Every row against its own sequence of the stacked caches: one store
        // pair and one attention for the whole step.
        const int64_t rows = int64_t(as.stacked_seqs) * n_ctx;
        const int32_t kc = g.add_tensor(cd, {rows, Hkv, Hd}, TensorUse::k_cache, l, b + "k_cache.stacked");
        const int32_t vc = g.add_tensor(cd, {rows, Hkv, Hd}, TensorUse::v_cache, l, b + "v_cache.stacked");
        g.tensors[size_t(kc)].seq = g.tensors[size_t(vc)].seq = kStackedCaches;
        gb.node(l, Role::store_k, HETERO_OP_STORE_ROWS, {kr, as.cache_rows}, kc);
        gb.node(l, Role::store_v, HETERO_OP_STORE_ROWS, {v, as.cache_rows}, vc);
        att = gb.act({n, H, Hd}, l, b + "attn");
        gb.node(l, Role::attention, HETERO_OP_ATTENTION_SEQS, {qr, kc, vc, as.cache_rows}, att, as.scale, {swa ? hp.n_swa : 0, n_ctx},
                hp.attn_softcap);
    } else {
        att = gb.act({n, H, Hd}, l, b + "attn");
        // Each sequence's row against its own cache; `att` is written row by row through views.
        for (int s = 0; s < n_seq; ++s) {
            const std::string sn = fmt::format(".{}", s);
            gb.node_seq = s;
            attend(gb.row_view(qr, s, b + "q_rope" + sn), gb.row_view(kr, s, b + "k_rope" + sn), gb.row_view(v, s, b + "v" + sn),
                   gb.row_view(pos, s, "positions" + sn), gb.row_view(att, s, b + "attn" + sn), s, sn);
        }
        gb.node_seq = -1;
    }
    int32_t o = gb.matmul(l, Role::attn_out, att, b + "attn_output.weight", b + "attn_output.bias", gb.act({n, D}, l, b + "attn_out"));
    if (hp.post_norms)
        o = gb.node(l, Role::attn_post_norm, HETERO_OP_RMSNORM, {o, gb.W(b + "post_attention_norm.weight")}, gb.act({n, D}, l, b + "attn_post"), eps);
    return o;
}

// Layer l's feed-forward block and both residual adds, from the layer's input
// x and its attention output o; returns the layer's output.
int32_t add_ffn(GraphBuilder& gb, const LlamaHParams& hp, int32_t n, int l, int32_t x, int32_t o) {
    const int64_t D = hp.n_embd;
    const float eps = hp.norm_eps;
    const std::string b = fmt::format("blk.{}.", l);
    const int32_t x2 = gb.node(l, Role::resid_attn, HETERO_OP_ADD, {x, o}, gb.act({n, D}, l, b + "resid_attn"));
    const int32_t h2 = gb.node(l, Role::ffn_norm, HETERO_OP_RMSNORM, {x2, gb.W(b + "ffn_norm.weight")}, gb.act({n, D}, l, b + "ffn_in"), eps);
    const int32_t gate = gb.matmul(l, Role::gate, h2, b + "ffn_gate.weight", "", gb.act({n, hp.n_ff}, l, b + "gate"));
    const int32_t up = gb.matmul(l, Role::up, h2, b + "ffn_up.weight", "", gb.act({n, hp.n_ff}, l, b + "up"));
    const int32_t sw =
        gb.node(l, Role::swiglu, hp.gelu_ffn ? HETERO_OP_GEGLU : HETERO_OP_SWIGLU, {gate, up}, gb.act({n, hp.n_ff}, l, b + "ffn_act"));
    int32_t down = gb.matmul(l, Role::down, sw, b + "ffn_down.weight", "", gb.act({n, D}, l, b + "ffn_out"));
    if (hp.post_norms)
        down = gb.node(l, Role::ffn_post_norm, HETERO_OP_RMSNORM, {down, gb.W(b + "post_ffw_norm.weight")}, gb.act({n, D}, l, b + "ffn_post"), eps);
    return gb.node(l, Role::resid_ffn, HETERO_OP_ADD, {x2, down}, gb.act({n, D}, l, b + "out"));
}

// The output norm and the classifier over the last row (or every row).
void add_head(GraphBuilder& gb, const LlamaHParams& hp, int32_t n, bool all_logits) {
    ModelGraph& g = gb.g;
    const int64_t D = hp.n_embd;
    const int hl = int(hp.n_layer);
    g.head_rows = all_logits ? n : 1;
    const int64_t r = g.head_rows;
    g.last_hidden = g.add_tensor(HETERO_DTYPE_F32, {r, D}, TensorUse::last_hidden, hl, "hidden_last");
    const int32_t hn = gb.node(hl, Role::out_norm, HETERO_OP_RMSNORM, {g.last_hidden, gb.W("output_norm.weight")},
                               gb.act({r, D}, hl, "final_norm"), hp.norm_eps);
    g.logits = g.add_tensor(HETERO_DTYPE_F32, {r, hp.n_vocab}, TensorUse::logits, hl, "logits");
    const std::string classifier = gb.model.has("output.weight") ? "output.weight" : "token_embd.weight";
    if (hp.final_softcap > 0.f) {
        const int32_t raw = gb.node(hl, Role::output, HETERO_OP_MATMUL, {hn, gb.W(classifier)}, gb.act({r, hp.n_vocab}, hl, "logits_raw"));
        gb.node(hl, Role::logit_softcap, HETERO_OP_SOFTCAP, {raw}, g.logits, hp.final_softcap);
    } else {
        gb.node(hl, Role::output, HETERO_OP_MATMUL, {hn, gb.W(classifier)}, g.logits);
    }
}

// The output norm over every row as the graph's output (embeddings): no
// vocabulary matmul.
void add_hidden_head(GraphBuilder& gb, const LlamaHParams& hp, int32_t n) {
    ModelGraph& g = gb.g;
    const int hl = int(hp.n_layer);
    g.head_rows = n;
    g.last_hidden = g.add_tensor(HETERO_DTYPE_F32, {n, hp.n_embd}, TensorUse::last_hidden, hl, "hidden_last");
    g.logits = g.add_tensor(HETERO_DTYPE_F32, {n, hp.n_embd}, TensorUse::logits, hl, "hidden_normed");
    gb.node(hl, Role::out_norm, HETERO_OP_RMSNORM, {g.last_hidden, gb.W("output_norm.weight")}, g.logits, hp.norm_eps);
}

// n rows: one sequence of n tokens (n_seq = 1) or n sequences of one token each.
ModelGraph build_graph(const ModelFile& model, int32_t n, int32_t n_seq, int32_t n_ctx, const std::vector<uint32_t>& cache_dtype, bool with_head,
                       bool all_logits, bool hidden_head = false, int32_t stacked_seqs = 0) {
    const LlamaHParams& hp = model.hparams;
    if (n < 1) throw Error("model graph: no tokens");
    if (cache_dtype.size() != size_t(hp.n_layer)) throw Error("model graph: one cache type per layer is needed");
    const int64_t D = hp.n_embd, Hd = hp.head_dim;
    ModelGraph g;
    g.n_tokens = n;
    g.n_seq = n_seq;
    g.n_ctx = n_ctx;
    g.n_layer = int(hp.n_layer);
    GraphBuilder gb{model, g, {}};

    const int32_t pos = g.add_tensor(HETERO_DTYPE_I32, {n}, TensorUse::positions, -1, "positions");
    const int32_t ids = g.add_tensor(HETERO_DTYPE_I32, {n}, TensorUse::tokens, -1, "tokens");
    int32_t x = gb.node(0, Role::embedding, HETERO_OP_EMBEDDING, {gb.W("token_embd.weight"), ids}, gb.act({n, D}, 0, "embd"));
    if (hp.embd_scale) x = gb.node(0, Role::embd_scale, HETERO_OP_MUL, {x, gb.W("embd_scale")}, gb.act({n, D}, 0, "embd_scaled"));
    const float scale = hp.attn_scale > 0.f ? hp.attn_scale : 1.0f / std::sqrt(float(Hd));
    const int32_t cache_rows = stacked_seqs > 0 ? g.add_tensor(HETERO_DTYPE_I32, {n}, TensorUse::cache_rows, -1, "cache_rows") : -1;
    const AttentionShape as{n, n_seq, n_ctx, pos, stacked_seqs, cache_rows, scale, model.has("rope_freqs.weight")};
    for (int l = 0; l < int(hp.n_layer); ++l) {
        const int32_t o = add_attention(gb, hp, as, cache_dtype, l, x);
        x = add_ffn(gb, hp, n, l, x, o);
    }
    g.final_hidden = x;
    if (hidden_head) add_hidden_head(gb, hp, n);
    else if (with_head) add_head(gb, hp, n, all_logits);
    return g;
}

}  // namespace

ModelGraph build_model_graph(const ModelFile& model, int32_t n, int32_t n_ctx, const std::vector<uint32_t>& cache_dtype, bool with_head, bool all_logits) {
    return build_graph(model, n, 1, n_ctx, cache_dtype, with_head, all_logits);
}

ModelGraph build_hidden_graph(const ModelFile& model, int32_t n, int32_t n_ctx, const std::vector<uint32_t>& cache_dtype) {
    return build_graph(model, n, 1, n_ctx, cache_dtype, false, false, true);
}

ModelGraph build_batch_graph(const ModelFile& model, int32_t n_seq, int32_t n_ctx, const std::vector<uint32_t>& cache_dtype,
                             int32_t stacked_seqs) {
    if (n_seq < 2) throw Error("batch graph: at least two sequences");
    if (stacked_seqs > 0 && stacked_seqs < n_seq)
        throw Error(fmt::format("batch graph: {} sequences in a step, but the stacked caches hold {}", n_seq, stacked_seqs));
    return build_graph(model, n_seq, n_seq, n_ctx, cache_dtype, true, true, false, stacked_seqs);
}

std::string OpShape::family() const {
    const char* dt = sdk::dtype_name(dtype);
    switch (op) {
        case HETERO_OP_MATMUL: return fmt::format("matmul {} k={} m={}", dt, k, m);
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: return fmt::format("{} {} q={} kv={}", sdk::op_name(op), dt, k, m);
        default: return fmt::format("{} {} w={}", sdk::op_name(op), dt, k);
    }
}

double OpShape::flops() const {
    switch (op) {
        case HETERO_OP_MATMUL: return 2.0 * double(n) * double(k) * double(m);
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: return 4.0 * double(n) * double(k) * double(std::max<int64_t>(kv, 1));
        default: return 4.0 * double(n) * double(k);
    }
}

double OpShape::bytes() const {
    switch (op) {
        case HETERO_OP_MATMUL:
            return double(sdk::row_bytes(dtype, k)) * double(m) + 4.0 * double(n) * double(k + m);
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
            return double(sdk::row_bytes(dtype, m)) * 2.0 * double(std::max<int64_t>(kv, 1)) + 8.0 * double(n) * double(k);
        case HETERO_OP_ATTENTION_SEQS:  // every row reads its own sequence's rows
            return double(sdk::row_bytes(dtype, m)) * 2.0 * double(std::max<int64_t>(kv, 1)) * double(n) + 8.0 * double(n) * double(k);
        case HETERO_OP_EMBEDDING: return double(sdk::row_bytes(dtype, k)) * double(n) + 4.0 * double(n) * double(k);
        default: return 12.0 * double(n) * double(k);
    }
}

OpShape op_shape(const ModelGraph& g, size_t i, int64_t mean_kv) {
    const hetero_node& nd = g.nodes.at(i).node;
    auto T = [&](int32_t id) -> const hetero_tensor_desc& { return g.tensors[size_t(id)].desc; };
    const hetero_tensor_desc& out = T(nd.output);
    OpShape s;
    s.op = nd.op;
    s.dtype = HETERO_DTYPE_F32;
    switch (nd.op) {
        case HETERO_OP_MATMUL:
            s.dtype = T(nd.inputs[1]).dtype;
            s.n = T(nd.inputs[0]).shape[0];
            s.k = row_width(T(nd.inputs[0]));
            s.m = T(nd.inputs[1]).shape[0];
            break;
        case HETERO_OP_EMBEDDING:
            s.dtype = T(nd.inputs[0]).dtype;
            s.n = out.shape[0];
            s.k = row_width(out);
            break;
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS:
            s.dtype = T(nd.inputs[1]).dtype;
            s.n = out.shape[0];
            s.k = row_width(out);
            s.m = row_width(T(nd.inputs[1]));
            s.kv = mean_kv;
            break;
        case HETERO_OP_STORE_ROWS:
            s.dtype = out.dtype;
            s.n = T(nd.inputs[0]).shape[0];
            s.k = row_width(T(nd.inputs[0]));
            break;
        default:
            s.n = out.shape[0];
            s.k = row_width(out);
            break;
    }
    return s;
}

}  // namespace hetero
