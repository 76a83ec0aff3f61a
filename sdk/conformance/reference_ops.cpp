#include "reference_ops.hpp"

#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace hetero::reference {
namespace {

using sdk::fail;

const hetero_tensor_desc& in_desc(const hetero_node& node, const hetero_tensor_desc* tensors, uint32_t i) {
    return tensors[node.inputs[i]];
}
const uint8_t* in_data(const hetero_node& node, uint8_t* const* data, uint32_t i) { return data[node.inputs[i]]; }

const float* as_f32(const uint8_t* p) { return reinterpret_cast<const float*>(p); }
float* as_f32(uint8_t* p) { return reinterpret_cast<float*>(p); }
const int32_t* as_i32(const uint8_t* p) { return reinterpret_cast<const int32_t*>(p); }

// Every row of a 2-D storage tensor as f32 (rows of the innermost dimension).
std::vector<float> rows_to_f32(const hetero_tensor_desc& t, const uint8_t* data) {
    const int64_t width = sdk::inner_dim(t), rows = sdk::outer_rows(t);
    const uint64_t stride = sdk::row_bytes(t.dtype, width);
    std::vector<float> out(static_cast<size_t>(width * rows));
    for (int64_t r = 0; r < rows; ++r) sdk::row_to_f32(t.dtype, data + uint64_t(r) * stride, out.data() + r * width, width);
    return out;
}

std::string tensor_label(const hetero_tensor_desc& t, int32_t id) {
    std::string label = "tensor " + std::to_string(id);
    if (t.name && *t.name) label.append(" (").append(t.name).append(")");
    return label;
}

void embedding(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const auto& table = in_desc(node, tensors, 0);
    const int64_t vocab = table.shape[0], dim = table.shape[1];
    const int64_t n = in_desc(node, tensors, 1).shape[0];
    const int32_t* ids = as_i32(in_data(node, data, 1));
    for (int64_t i = 0; i < n; ++i)
        if (ids[i] < 0 || ids[i] >= vocab)
            fail(HETERO_ERR_INVALID_ARGUMENT, "embedding: id " + std::to_string(ids[i]) + " at row " + std::to_string(i) +
                                                  " outside the table of " + std::to_string(vocab) + " rows");
    const uint64_t stride = sdk::row_bytes(table.dtype, dim);
    float* out = as_f32(data[node.output]);
    for (int64_t i = 0; i < n; ++i)
        sdk::row_to_f32(table.dtype, in_data(node, data, 0) + uint64_t(ids[i]) * stride, out + i * dim, dim);
}

void matmul(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const auto& xd = in_desc(node, tensors, 0);
    const auto& wd = in_desc(node, tensors, 1);
    const int64_t n = xd.shape[0], k = sdk::row_width(xd), m = wd.shape[0];
    const float* x = as_f32(in_data(node, data, 0));
    const std::vector<float> w = rows_to_f32(wd, in_data(node, data, 1));
    const float* bias = node.n_inputs == 3 ? as_f32(in_data(node, data, 2)) : nullptr;
    std::vector<float> out(static_cast<size_t>(n * m));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
            double acc = 0.0;
            for (int64_t e = 0; e < k; ++e) acc += double(x[i * k + e]) * double(w[size_t(j * k + e)]);
            if (bias) acc += bias[j];
            out[size_t(i * m + j)] = float(acc);
        }
    std::copy(out.begin(), out.end(), as_f32(data[node.output]));
}

void rmsnorm(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const auto& xd = in_desc(node, tensors, 0);
    const int64_t d = sdk::inner_dim(xd), rows = sdk::outer_rows(xd);
    const float* x = as_f32(in_data(node, data, 0));
    const float* w = as_f32(in_data(node, data, 1));
    std::vector<float> out(static_cast<size_t>(d * rows));
    for (int64_t r = 0; r < rows; ++r) {
        double ss = 0.0;
        for (int64_t e = 0; e < d; ++e) ss += double(x[r * d + e]) * double(x[r * d + e]);
        const double inv = 1.0 / std::sqrt(ss / double(d) + double(node.fparams[0]));
        for (int64_t e = 0; e < d; ++e) out[size_t(r * d + e)] = float(double(x[r * d + e]) * inv * double(w[e]));
    }
    std::copy(out.begin(), out.end(), as_f32(data[node.output]));
}

void rope(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const auto& xd = in_desc(node, tensors, 0);
    const int64_t n = xd.shape[0], heads = xd.shape[1], hd = xd.shape[2];
    const int64_t rot = sdk::rope_dims(node, hd);
    const bool halves = node.iparams[0] == HETERO_ROPE_HALVES;
    const double base = node.fparams[0];
    // ROPE_SCALED: a frequency scale and optional per-pair divisors.
    const bool scaled = node.op == HETERO_OP_ROPE_SCALED;
    const double freq_scale = scaled && node.fparams[1] != 0.f ? double(node.fparams[1]) : 1.0;
    const float* factors = scaled && node.n_inputs > 2 ? as_f32(in_data(node, data, 2)) : nullptr;
    const float* x = as_f32(in_data(node, data, 0));
    const int32_t* pos = as_i32(in_data(node, data, 1));
    std::vector<float> out(x, x + n * heads * hd);  // dims past rot_dims pass through
    for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < rot / 2; ++p) {
            const double angle = double(pos[i]) * freq_scale * std::pow(base, -2.0 * double(p) / double(rot)) / (factors ? double(factors[p]) : 1.0);
            const double c = std::cos(angle), s = std::sin(angle);
            const int64_t a = halves ? p : 2 * p, b = halves ? p + rot / 2 : 2 * p + 1;
            for (int64_t h = 0; h < heads; ++h) {
                const int64_t row = (i * heads + h) * hd;
                const double x0 = x[row + a], x1 = x[row + b];
                out[size_t(row + a)] = float(x0 * c - x1 * s);
                out[size_t(row + b)] = float(x0 * s + x1 * c);
            }
        }
    std::copy(out.begin(), out.end(), as_f32(data[node.output]));
}

void attention(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const auto& qd = in_desc(node, tensors, 0);
    const auto& kd = in_desc(node, tensors, 1);
    const int64_t n = qd.shape[0], heads = qd.shape[1], hd = qd.shape[2];
    const int64_t cache_rows = kd.shape[0], kv_heads = kd.shape[1];
    const int64_t group = heads / kv_heads;
    const int32_t* pos = as_i32(in_data(node, data, 3));
    for (int64_t i = 0; i < n; ++i)
        if (pos[i] < 0 || pos[i] >= cache_rows)
            fail(HETERO_ERR_INVALID_ARGUMENT, "attention: position " + std::to_string(pos[i]) + " of query " + std::to_string(i) +
                                                  " outside the KV cache of " + std::to_string(cache_rows) + " rows");
    const float* q = as_f32(in_data(node, data, 0));
    const std::vector<float> k = rows_to_f32(kd, in_data(node, data, 1));
    const std::vector<float> v = rows_to_f32(in_desc(node, tensors, 2), in_data(node, data, 2));
    const double scale = node.fparams[0];
    // ATTENTION_EXT and ATTENTION_SEQS: a sliding window over the cache rows and soft-capped scores.
    const bool ext = node.op != HETERO_OP_ATTENTION;
    const int64_t window = ext ? node.iparams[0] : 0;
    const double cap = ext ? double(node.fparams[1]) : 0.0;
    std::vector<float> out(static_cast<size_t>(n * heads * hd));
    std::vector<double> score, acc(static_cast<size_t>(hd));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t h = 0; h < heads; ++h) {
            const int64_t kvh = h / group;
            const float* qrow = q + (i * heads + h) * hd;
            // ATTENTION_SEQS: the row's sequence starts at `base` of the stacked cache.
            const int64_t base = sdk::seq_base(node, pos[i]);
            const int64_t len = int64_t(pos[i]) - base + 1;
            const int64_t first = window > 0 ? std::max<int64_t>(0, len - window) : 0;
            score.assign(size_t(len), 0.0);
            double best = -INFINITY;
            for (int64_t t = first; t < len; ++t) {
                const float* krow = k.data() + ((base + t) * kv_heads + kvh) * hd;
                double dot = 0.0;
                for (int64_t e = 0; e < hd; ++e) dot += double(qrow[e]) * double(krow[e]);
                score[size_t(t)] = cap > 0.0 ? cap * std::tanh(dot * scale / cap) : dot * scale;
                best = std::max(best, score[size_t(t)]);
            }
            double sum = 0.0;
            for (int64_t t = first; t < len; ++t) sum += (score[size_t(t)] = std::exp(score[size_t(t)] - best));
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t t = first; t < len; ++t) {
                const float* vrow = v.data() + ((base + t) * kv_heads + kvh) * hd;
                for (int64_t e = 0; e < hd; ++e) acc[size_t(e)] += score[size_t(t)] * double(vrow[e]);
            }
            for (int64_t e = 0; e < hd; ++e) out[size_t((i * heads + h) * hd + e)] = float(acc[size_t(e)] / sum);
        }
    std::copy(out.begin(), out.end(), as_f32(data[node.output]));
}

// A gated activation: out = act(gate) * up, elementwise, in double.
template <class Act>
void gated(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data, Act act) {
    const int64_t count = sdk::element_count(tensors[node.output]);
    const float* g = as_f32(in_data(node, data, 0));
    const float* u = as_f32(in_data(node, data, 1));
    std::vector<float> out(static_cast<size_t>(count));
    for (int64_t e = 0; e < count; ++e) out[size_t(e)] = float(act(double(g[e])) * double(u[e]));
    std::copy(out.begin(), out.end(), as_f32(data[node.output]));
}

// SiLU(gate) * up.
void swiglu(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    gated(node, tensors, data, [](double gate) { return gate / (1.0 + std::exp(-gate)); });
}

// GELU (tanh approximation) of the gate, times up.
void geglu(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    gated(node, tensors, data, [k](double x) { return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x))); });
}

void softcap(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const int64_t count = sdk::element_count(tensors[node.output]);
    const double c = node.fparams[0];
    const float* x = as_f32(in_data(node, data, 0));
    std::vector<float> out(static_cast<size_t>(count));
    for (int64_t e = 0; e < count; ++e) out[size_t(e)] = float(c * std::tanh(double(x[e]) / c));
    std::copy(out.begin(), out.end(), as_f32(data[node.output]));
}

// add and mul: b has a's shape or is one row broadcast over a's rows.
template <class Op>
void binary(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data, Op op) {
    const auto& ad = in_desc(node, tensors, 0);
    const int64_t count = sdk::element_count(ad);
    const int64_t b_count = sdk::element_count(in_desc(node, tensors, 1));
    const float* a = as_f32(in_data(node, data, 0));
    const float* b = as_f32(in_data(node, data, 1));
    std::vector<float> out(static_cast<size_t>(count));
    for (int64_t e = 0; e < count; ++e) out[size_t(e)] = op(a[e], b[e % b_count]);
    std::copy(out.begin(), out.end(), as_f32(data[node.output]));
}

void softmax(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const auto& xd = in_desc(node, tensors, 0);
    const int64_t d = sdk::inner_dim(xd), rows = sdk::outer_rows(xd);
    const double scale = node.fparams[0] == 0.f ? 1.0 : double(node.fparams[0]);
    const float* x = as_f32(in_data(node, data, 0));
    std::vector<float> out(static_cast<size_t>(d * rows));
    std::vector<double> e(static_cast<size_t>(d));
    for (int64_t r = 0; r < rows; ++r) {
        double best = -INFINITY;
        for (int64_t j = 0; j < d; ++j) best = std::max(best, double(x[r * d + j]) * scale);
        double sum = 0.0;
        for (int64_t j = 0; j < d; ++j) sum += (e[size_t(j)] = std::exp(double(x[r * d + j]) * scale - best));
        for (int64_t j = 0; j < d; ++j) out[size_t(r * d + j)] = float(e[size_t(j)] / sum);
    }
    std::copy(out.begin(), out.end(), as_f32(data[node.output]));
}

void convert(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const auto& xd = in_desc(node, tensors, 0);
    const auto& od = tensors[node.output];
    const int64_t width = sdk::inner_dim(xd), rows = sdk::outer_rows(xd);
    const std::vector<float> values = rows_to_f32(xd, in_data(node, data, 0));
    const uint64_t stride = sdk::row_bytes(od.dtype, width);
    for (int64_t r = 0; r < rows; ++r)
        sdk::row_from_f32(od.dtype, values.data() + r * width, data[node.output] + uint64_t(r) * stride, width);
}

void store_rows(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* data) {
    const auto& sd = in_desc(node, tensors, 0);
    const auto& od = tensors[node.output];
    const int64_t n = sd.shape[0], width = sdk::row_width(sd), cache_rows = od.shape[0];
    const int32_t* pos = as_i32(in_data(node, data, 1));
    for (int64_t i = 0; i < n; ++i)
        if (pos[i] < 0 || pos[i] >= cache_rows)
            fail(HETERO_ERR_INVALID_ARGUMENT, "store_rows: position " + std::to_string(pos[i]) + " of row " + std::to_string(i) +
                                                  " outside " + tensor_label(od, node.output) + " of " + std::to_string(cache_rows) + " rows");
    const float* src = as_f32(in_data(node, data, 0));
    const uint64_t stride = sdk::row_bytes(od.dtype, width);
    for (int64_t i = 0; i < n; ++i)
        sdk::row_from_f32(od.dtype, src + i * width, data[node.output] + uint64_t(pos[i]) * stride, width);
}

}  // namespace

void run_node(const hetero_node& node, const hetero_tensor_desc* tensors, uint8_t* const* tensor_data) {
    switch (node.op) {
        case HETERO_OP_EMBEDDING: return embedding(node, tensors, tensor_data);
        case HETERO_OP_MATMUL: return matmul(node, tensors, tensor_data);
        case HETERO_OP_RMSNORM: return rmsnorm(node, tensors, tensor_data);
        case HETERO_OP_ROPE: return rope(node, tensors, tensor_data);
        case HETERO_OP_ATTENTION: return attention(node, tensors, tensor_data);
        case HETERO_OP_SWIGLU: return swiglu(node, tensors, tensor_data);
        case HETERO_OP_ADD: return binary(node, tensors, tensor_data, [](float a, float b) { return a + b; });
        case HETERO_OP_MUL: return binary(node, tensors, tensor_data, [](float a, float b) { return a * b; });
        case HETERO_OP_SOFTMAX: return softmax(node, tensors, tensor_data);
        case HETERO_OP_CONVERT: return convert(node, tensors, tensor_data);
        case HETERO_OP_STORE_ROWS: return store_rows(node, tensors, tensor_data);
        case HETERO_OP_ROPE_SCALED: return rope(node, tensors, tensor_data);
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: return attention(node, tensors, tensor_data);
        case HETERO_OP_GEGLU: return geglu(node, tensors, tensor_data);
        case HETERO_OP_SOFTCAP: return softcap(node, tensors, tensor_data);
        default: fail(HETERO_ERR_INVALID_ARGUMENT, "reference: unknown op " + std::to_string(node.op));
    }
}

void run_graph(const hetero_graph& graph, uint8_t* const* tensor_data) {
    const std::string problem = sdk::check_graph(graph);
    if (!problem.empty()) fail(HETERO_ERR_INVALID_ARGUMENT, "reference: " + problem);
    for (uint32_t t = 0; t < graph.n_tensors; ++t)
        if (!tensor_data[t]) fail(HETERO_ERR_INVALID_ARGUMENT, "reference: " + tensor_label(graph.tensors[t], int32_t(t)) + " has no memory");
    for (uint32_t n = 0; n < graph.n_nodes; ++n) run_node(graph.nodes[n], graph.tensors, tensor_data);
}

}  // namespace hetero::reference
