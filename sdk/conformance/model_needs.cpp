#include "model_needs.hpp"

#include <hetero/model/model.hpp>
#include <hetero/runtime/model_graph.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <algorithm>
#include <map>

namespace hetero::conformance {
namespace {

std::string dims(const hetero_tensor_desc& d) { return sdk::detail::shape_str(d); }

// The row a node belongs to (op, dtypes) and its shape class within it.
struct RowKey {
    std::string op, dtypes, shape;
};

RowKey key_of(const ModelGraph& g, const hetero_node& n) {
    auto desc = [&](int32_t id) -> const hetero_tensor_desc& { return g.tensors[size_t(id)].desc; };
    const hetero_tensor_desc& in0 = desc(n.inputs[0]);
    const hetero_tensor_desc& out = desc(n.output);
    RowKey k{sdk::op_name(n.op), sdk::dtype_name(out.dtype), ""};
    switch (n.op) {
        case HETERO_OP_MATMUL:
            k.dtypes = sdk::dtype_name(desc(n.inputs[1]).dtype);
            k.shape = dims(desc(n.inputs[1])) + (n.n_inputs > 2 ? "+bias" : "");
            break;
        case HETERO_OP_EMBEDDING:
            k.dtypes = sdk::dtype_name(in0.dtype);
            k.shape = dims(in0);
            break;
        case HETERO_OP_RMSNORM: k.shape = "width " + std::to_string(in0.shape[in0.ndim - 1]); break;
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED: {
            const int64_t hd = in0.shape[in0.ndim - 1];
            k.shape = "head size " + std::to_string(hd) + ", rotating " + std::to_string(n.iparams[1] ? n.iparams[1] : hd) + ", " +
                      (n.iparams[0] == HETERO_ROPE_HALVES ? "halves" : "adjacent") + (n.n_inputs > 2 ? ", freq factors" : "");
            break;
        }
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT: {
            const hetero_tensor_desc& cache = desc(n.inputs[1]);
            k.dtypes = std::string("cache ") + sdk::dtype_name(cache.dtype);
            k.shape = "head size " + std::to_string(in0.shape[2]) + ", " + std::to_string(in0.shape[1]) + " heads / " +
                      std::to_string(cache.shape[1]) + " kv";
            if (n.op == HETERO_OP_ATTENTION_EXT && n.iparams[0] > 0) k.shape += ", window " + std::to_string(n.iparams[0]);
            if (n.op == HETERO_OP_ATTENTION_EXT && n.fparams[1] > 0) k.shape += ", soft-cap";
            break;
        }
        case HETERO_OP_STORE_ROWS:
            k.dtypes = std::string("cache ") + sdk::dtype_name(out.dtype);
            k.shape = "cache " + dims(out);
            break;
        case HETERO_OP_CONVERT: k.dtypes = std::string(sdk::dtype_name(in0.dtype)) + "_to_" + sdk::dtype_name(out.dtype); break;
        default: break;
    }
    return k;
}

// The descriptors as the runtime hands them to a provider: weights constant,
// caches, inputs and outputs bound, activations internal (as unsupported_reason does).
std::vector<hetero_tensor_desc> provider_view(const ModelGraph& g) {
    std::vector<hetero_tensor_desc> descs;
    for (const ModelTensor& t : g.tensors) {
        descs.push_back(t.desc);
        if (t.use != TensorUse::weight && t.use != TensorUse::activation) descs.back().kind = HETERO_TENSOR_BOUND;
    }
    return descs;
}

class GraphNeeds final : public ModelNeeds {
public:
    explicit GraphNeeds(const std::string& path) : model_(load_model(path)) {
        const LlamaHParams& hp = model_.hparams;
        n_ctx_ = context_length(hp, 0);
        chunk_ = std::min<int32_t>(512, n_ctx_);  // a session's default prefill batch
        summary_ = path.substr(path.find_last_of('/') + 1) + ": " + hp.arch + ", " + std::to_string(hp.n_layer) + " layers, width " +
                   std::to_string(hp.n_embd) + ", " + std::to_string(hp.n_head) + " heads of " + std::to_string(hp.head_dim) + " (" +
                   std::to_string(hp.n_head_kv) + " kv), vocab " + std::to_string(hp.n_vocab) + "; asked at decode (1 token) and a prefill chunk of " +
                   std::to_string(chunk_) + ", context " + std::to_string(n_ctx_);
    }
    std::string summary() const override { return summary_; }
    const std::vector<NeedRow>& rows(const hetero_device_props& props) const override {
        const uint32_t cache = cache_dtype(CacheType::automatic, props);
        auto it = by_cache_.find(cache);
        if (it == by_cache_.end()) it = by_cache_.emplace(cache, build(cache)).first;
        return it->second.rows;
    }

private:
    struct Built {
        std::vector<ModelGraph> graphs;  // decode, prefill
        std::vector<std::vector<hetero_tensor_desc>> descs;
        std::vector<NeedRow> rows;
    };
    Built build(uint32_t cache) const {
        Built b;
        const std::vector<uint32_t> caches(size_t(model_.hparams.n_layer), cache);
        b.graphs.push_back(build_model_graph(model_, 1, n_ctx_, caches));
        b.graphs.push_back(build_model_graph(model_, chunk_, n_ctx_, caches));
        b.descs.reserve(b.graphs.size());  // rows point into these
        for (const ModelGraph& g : b.graphs) b.descs.push_back(provider_view(g));
        std::map<std::pair<std::string, std::string>, size_t> row_of;
        std::vector<std::vector<std::string>> shapes;
        for (size_t gi = 0; gi < b.graphs.size(); ++gi) {
            const ModelGraph& g = b.graphs[gi];
            for (const ModelNode& mn : g.nodes) {
                const RowKey k = key_of(g, mn.node);
                auto [it, added] = row_of.emplace(std::make_pair(k.op, k.dtypes), b.rows.size());
                if (added) {
                    b.rows.push_back(NeedRow{k.op, k.dtypes, "", {}});
                    shapes.emplace_back();
                }
                auto& seen = shapes[it->second];
                if (!k.shape.empty() && std::find(seen.begin(), seen.end(), k.shape) == seen.end()) seen.push_back(k.shape);
                const std::string where = mn.layer == g.n_layer ? std::string("head ") + role_name(mn.role)
                                                                : "layer " + std::to_string(mn.layer) + " " + role_name(mn.role);
                b.rows[it->second].questions.push_back(NodeQuestion{&mn.node, &b.descs[gi], g.n_tokens, where});
            }
        }
        for (size_t r = 0; r < b.rows.size(); ++r)
            for (const auto& s : shapes[r]) b.rows[r].shapes += (b.rows[r].shapes.empty() ? "" : "; ") + s;
        return b;
    }

    ModelFile model_;
    int32_t n_ctx_ = 0, chunk_ = 0;
    std::string summary_;
    mutable std::map<uint32_t, Built> by_cache_;
};

}  // namespace

std::unique_ptr<ModelNeeds> read_model_needs(const std::string& path) { return std::make_unique<GraphNeeds>(path); }

bool model_needs_available() { return true; }

}  // namespace hetero::conformance
