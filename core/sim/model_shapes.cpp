#include <hetero/error.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sim/model_shapes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace hetero {

namespace {

const std::vector<ModelShape>& shapes() {
    static const std::vector<ModelShape> s = {
        {"llama-8b", 4096, 14336, 32, 32, 8, 128256, 8192},
        {"llama-7b", 4096, 11008, 32, 32, 32, 32000, 4096},
        {"llama-3b", 3072, 8192, 28, 24, 8, 128256, 8192},
        {"tinyllama-1.1b", 2048, 5632, 22, 32, 4, 32000, 2048},
    };
    return s;
}

}  // namespace

std::vector<std::string> model_shape_names() {
    std::vector<std::string> out;
    for (const ModelShape& s : shapes()) out.push_back(s.name);
    return out;
}

ModelShape model_shape(const std::string& name) {
    for (const ModelShape& s : shapes())
        if (s.name == name) return s;
    throw Error(fmt::format("unknown model shape '{}' (known: {})", name, fmt::join(model_shape_names(), ", ")));
}

uint32_t weight_type_from_name(const std::string& name) {
    if (name == "q4_0") return HETERO_DTYPE_Q4_0;
    if (name == "q8_0") return HETERO_DTYPE_Q8_0;
    if (name == "f16") return HETERO_DTYPE_F16;
    if (name == "f32") return HETERO_DTYPE_F32;
    throw Error(fmt::format("unknown weight type '{}' (known: q4_0, q8_0, f16, f32)", name));
}

ModelFile shape_only_model(const ModelShape& s, uint32_t wtype) {
    ModelFile m;
    m.path = "shape:" + s.name;
    m.hparams = plain_llama_hparams({s.n_vocab, s.n_embd, s.n_layer, s.n_head, s.n_head_kv, s.n_ff, s.n_ctx});
    const LlamaHParams& hp = m.hparams;
    auto add = [&](const std::string& name, uint32_t dtype, std::vector<int64_t> shape) {
        WeightView w;
        w.name = name;
        w.dtype = dtype;
        w.shape = shape;
        w.bytes = sdk::row_bytes(dtype, shape.back()) * uint64_t(shape.size() > 1 ? shape[0] : 1);
        m.weights[name] = w;
    };
    const int64_t D = s.n_embd, F = s.n_ff, kv = s.n_head_kv * hp.head_dim;
    add("token_embd.weight", wtype, {s.n_vocab, D});
    add("output_norm.weight", HETERO_DTYPE_F32, {D});
    add("output.weight", wtype, {s.n_vocab, D});
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string b = fmt::format("blk.{}.", l);
        add(b + "attn_norm.weight", HETERO_DTYPE_F32, {D});
        add(b + "ffn_norm.weight", HETERO_DTYPE_F32, {D});
        add(b + "attn_q.weight", wtype, {D, D});
        add(b + "attn_k.weight", wtype, {kv, D});
        add(b + "attn_v.weight", wtype, {kv, D});
        add(b + "attn_output.weight", wtype, {D, D});
        add(b + "ffn_gate.weight", wtype, {F, D});
        add(b + "ffn_up.weight", wtype, {F, D});
        add(b + "ffn_down.weight", wtype, {D, F});
    }
    return m;
}

}  // namespace hetero
