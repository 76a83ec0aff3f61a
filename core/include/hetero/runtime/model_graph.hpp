// The whole llama-family model as one graph of ABI nodes, built once per
// token count and shared by the session's scheduler, the device probe, the
// profiler and the cost model. Every node is tagged with its layer and role,
// every tensor with what it holds, so a plan can place nodes and the
// scheduler can cut the graph where devices change.
#pragma once

#include <hetero/ep_api.h>
#include <hetero/model/model.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace hetero {

// What a node does inside its layer. Matmul roles are the ones a plan may
// move to another device or split by output rows.
enum class Role : uint8_t {
    embedding,
    attn_norm,
    q,
    k,
    v,
    rope_q,
    rope_k,
    store_k,
    store_v,
    attention,
    attn_out,
    resid_attn,
    ffn_norm,
    gate,
    up,
    swiglu,
    down,
    resid_ffn,
    out_norm,
    output,
    // Architecture-specific steps (not every model has them).
    embd_scale,     // embeddings times sqrt(n_embd)
    q_norm,         // per-head RMSNorm of Q
    k_norm,         // per-head RMSNorm of K
    attn_post_norm, // RMSNorm of the attention output before the residual add
    ffn_post_norm,  // RMSNorm of the FFN output before the residual add
    logit_softcap,  // soft-capping of the logits
};
const char* role_name(Role r);
// Parses role_name's names; returns false for an unknown name.
bool role_from_name(const std::string& name, Role& out);
bool is_matmul_role(Role r);
// The matmul roles of one decoder layer, in graph order, then the head's.
inline constexpr Role kLayerMatmuls[] = {Role::q, Role::k, Role::v, Role::attn_out, Role::gate, Role::up, Role::down};

enum class TensorUse : uint8_t {
    activation,   // produced by one node, read by later ones
    weight,       // a constant of the model file (ModelTensor::name is its GGUF name)
    k_cache,      // layer's K cache [n_ctx, Hkv, Hd]
    v_cache,      // layer's V cache
    tokens,       // token ids [n] (input)
    positions,    // positions [n] (input)
    cache_rows,   // [n] (input): each row's row of the stacked caches, sequence * n_ctx + position
    last_hidden,  // [r, D]: the last r rows of the final layer's output (the head's input; r = 1 or all)
    logits,       // [r, n_vocab] (output); [n, n_embd] normed hidden states in a hidden-state graph
};

// ModelTensor::seq of a cache that holds every sequence's rows (n_ctx a sequence).
inline constexpr int kStackedCaches = -1;

struct ModelTensor {
    hetero_tensor_desc desc{};  // desc.kind: CONSTANT for weights, INTERNAL otherwise (the scheduler decides)
    TensorUse use = TensorUse::activation;
    int layer = -1;  // layer of the producing node (or owning layer of a cache), -1 = none
    // A batched step's per-sequence rows: this tensor is the bytes of tensor
    // `view_of` from `view_offset` on. Nodes that read or write a view read or
    // write its base; the scheduler binds both to one memory, never in the
    // same task (so providers need not know they alias).
    int32_t view_of = -1;
    uint64_t view_offset = 0;
    // k_cache / v_cache: which sequence of the step the cache belongs to
    // (the session binds that sequence's cache at each run); 0 otherwise;
    // kStackedCaches: the caches of every sequence of the session, stacked.
    int seq = 0;
};

struct ModelNode {
    hetero_node node{};
    int layer = 0;  // 0..n_layer-1; the embedding is layer 0, the head (out_norm, output) is layer n_layer
    Role role = Role::embedding;
    // A batched step's node for one sequence alone (its cache store and
    // attention, over views of the step's rows); -1 = a node over every row.
    int seq = -1;
};

// Move-only: descriptor names point into the graph's own storage.
class ModelGraph {
public:
    ModelGraph() = default;
    ModelGraph(ModelGraph&&) = default;
    ModelGraph& operator=(ModelGraph&&) = default;
    ModelGraph(const ModelGraph&) = delete;
    ModelGraph& operator=(const ModelGraph&) = delete;

    int32_t n_tokens = 0, n_ctx = 0;
    int n_layer = 0;
    // Sequences the rows belong to: 1 = one sequence of n_tokens rows (a
    // prefill chunk or one decode token); > 1 = a batched decode step, one
    // row per sequence (build_batch_graph).
    int32_t n_seq = 1;
    std::vector<ModelTensor> tensors;
    std::vector<ModelNode> nodes;  // a valid topological order: embedding, layers 0.., head
    int32_t final_hidden = -1;     // [n, D] output of the last layer
    int32_t last_hidden = -1;      // [head_rows, D] view of final_hidden's last rows
    int32_t logits = -1;
    int32_t head_rows = 1;         // rows the head computes logits for: 1 (the last) or n_tokens

    int32_t add_tensor(uint32_t dtype, const std::vector<int64_t>& shape, TensorUse use, int layer, std::string name);
    const char* name(int32_t tensor) const { return tensors[size_t(tensor)].desc.name; }
    // Index of the node of `layer` with role `r`, or -1.
    int node_index(int layer, Role r) const;

private:
    std::deque<std::string> names_;
};

// Builds the graph for `n_tokens` rows at context n_ctx. cache_dtype[l] is
// layer l's KV cache type (F32 or F16). with_head adds out_norm + output over
// the last row, or over every row with all_logits (perplexity, scoring).
ModelGraph build_model_graph(const ModelFile& model, int32_t n_tokens, int32_t n_ctx, const std::vector<uint32_t>& cache_dtype,
                             bool with_head = true, bool all_logits = false);

// The graph of `n_tokens` rows whose output is the final hidden state of
// every row after the output norm (the `logits` tensor, [n_tokens, n_embd]):
// what embeddings pool. The output head's vocabulary matmul is left out.
ModelGraph build_hidden_graph(const ModelFile& model, int32_t n_tokens, int32_t n_ctx, const std::vector<uint32_t>& cache_dtype);

// One decode step of `n_seq` sequences at once: one row per sequence (its
// next token at its own position), every matmul, norm and FFN node over all
// rows (the weights are read once for the whole batch). Per layer, with
// `stacked_seqs` > 0: one store pair and one ATTENTION_SEQS over the layer's
// caches of all stacked_seqs sequences of the session (kStackedCaches, rows
// addressed by the cache_rows input); else, for each sequence, its cache
// stores and attention over views of its own row and its own cache (tensors
// with `seq`). Positions are per row; the head computes logits for every row.
ModelGraph build_batch_graph(const ModelFile& model, int32_t n_seq, int32_t n_ctx, const std::vector<uint32_t>& cache_dtype,
                             int32_t stacked_seqs = 0);

// Whether a schedule of this graph runs the plan's decode placement: one
// token, or a batched decode step.
inline bool is_decode_graph(const ModelGraph& g) { return g.n_tokens == 1 || g.n_seq > 1; }

// What a node's cost depends on, in a form the cost models key and
// interpolate on. The token count `n` is the axis profiles are measured along.
struct OpShape {
    uint32_t op = 0;     // hetero_op
    uint32_t dtype = 0;  // matmul/embedding: weight dtype; attention/store_rows: cache dtype; else F32
    int64_t n = 0;       // rows (tokens)
    int64_t k = 0;       // matmul: input width; attention: q width (H*Hd); others: elements per row
    int64_t m = 0;       // matmul: output width (weight rows); attention: cache row width (Hkv*Hd); else 0
    int64_t kv = 0;      // attention: mean cache rows a query attends to; else 0
    // The family a profile measures along n (and kv): e.g. "matmul q4_0 k=2048 m=5632".
    std::string family() const;
    double flops() const;  // floating-point work
    double bytes() const;  // bytes read and written, weights included
};

// The shape of node `i` of g. kv_len: the cache rows the attention reads
// (for a prefill chunk at position 0 of n tokens, about n/2 on average).
OpShape op_shape(const ModelGraph& g, size_t i, int64_t mean_kv);

}  // namespace hetero
