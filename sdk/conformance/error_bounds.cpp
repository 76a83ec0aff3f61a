#include "error_bounds.hpp"

#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>

namespace hetero::conformance {
namespace {

using Values = std::vector<float>;
using Bounds = std::vector<double>;
namespace A = allowance;

struct Ctx {
    const hetero_node& node;
    const hetero_tensor_desc* tensors;
    const std::vector<Values>& val;
    std::vector<Bounds>& err;
    const hetero_tensor_desc& in(uint32_t i) const { return tensors[node.inputs[i]]; }
    const Values& v(uint32_t i) const { return val[size_t(node.inputs[i])]; }
    const Bounds& e(uint32_t i) const { return err[size_t(node.inputs[i])]; }
    const Values& out_v() const { return val[size_t(node.output)]; }
};

// Allowance of a matmul output over x row `xr` and W row `wr` of width k.
double matmul_bound(uint32_t w_dtype, const float* x, const double* ex, const float* w, int64_t k) {
    double abs_sum = 0.0, propagated = 0.0, quant_var = 0.0;
    // A provider may quantize x to int8 per block of the weights' block size
    // (32, or 256 for K-quants), as Q8_0 / Q8_K activations.
    const int64_t block = sdk::is_kquant_dtype(w_dtype) ? sdk::kKBlock : sdk::kQBlock;
    for (int64_t b = 0; b < k; b += block) {
        const int64_t end = std::min(k, b + block);
        double amax = 0.0;
        for (int64_t e = b; e < end; ++e) amax = std::max(amax, std::fabs(double(x[e])));
        const double step = amax / 127.0;  // the int8 step of this block of x
        for (int64_t e = b; e < end; ++e) {
            const double xw = std::fabs(double(x[e]) * double(w[e]));
            abs_sum += xw;
            propagated += ex[e] * std::fabs(double(w[e]));
            quant_var += step * step / 12.0 * double(w[e]) * double(w[e]);
        }
    }
    double own = A::kAbs + A::kMatmulAccum * std::sqrt(double(k)) * abs_sum;
    switch (w_dtype) {
        case HETERO_DTYPE_F16: own += A::kMatmulF16 * abs_sum; break;
        case HETERO_DTYPE_BF16: own += A::kMatmulBF16 * abs_sum; break;
        case HETERO_DTYPE_Q8_0:
        case HETERO_DTYPE_Q4_0:
        case HETERO_DTYPE_Q4_K:
        case HETERO_DTYPE_Q5_K:
        case HETERO_DTYPE_Q6_K:
        case HETERO_DTYPE_Q4_1:
        case HETERO_DTYPE_Q5_0:
        case HETERO_DTYPE_Q5_1:
        case HETERO_DTYPE_IQ4_NL:
        case HETERO_DTYPE_Q2_K:
        case HETERO_DTYPE_Q3_K:
        case HETERO_DTYPE_E0M4: own += A::kMatmulQScale * abs_sum + A::kMatmulQSigmas * std::sqrt(quant_var); break;
        default: break;
    }
    return own + propagated;
}

// W8A8: x and w are each rounded to a grid of step s = max|.|/127 (x over
// the whole tensor, w over its row, or over the tensor when that is coarser),
// so |x w - x^ w^| <= |x| dw/2 + |w| dx/2 + dx dw/4 per term; the int32 sum
// is exact and its scaling costs two f32 roundings.
void matmul_int8(Ctx& c) {
    const auto& xd = c.in(0);
    const auto& wd = c.in(1);
    const int64_t n = xd.shape[0], k = sdk::row_width(xd), m = wd.shape[0];
    const Values &x = c.v(0), &w = c.v(1);
    double xmax = 0.0, wall = 0.0;
    for (float v : x) xmax = std::max(xmax, std::fabs(double(v)));
    for (float v : w) wall = std::max(wall, std::fabs(double(v)));
    const double dx = xmax / 127.0;
    Bounds& out = c.err[size_t(c.node.output)];
    for (int64_t j = 0; j < m; ++j) {
        // Per row or per tensor: the coarser step covers both.
        const double dw = wall / 127.0;
        for (int64_t i = 0; i < n; ++i) {
            double b = 0.0, abs_sum = 0.0, propagated = 0.0;
            for (int64_t e = 0; e < k; ++e) {
                const double xv = std::fabs(double(x[size_t(i * k + e)])), wv = std::fabs(double(w[size_t(j * k + e)]));
                b += xv * dw / 2 + wv * dx / 2 + dx * dw / 4;
                abs_sum += xv * wv;
                propagated += c.e(0)[size_t(i * k + e)] * wv;
            }
            out[size_t(i * m + j)] = A::kAbs + b + 4 * A::kRoundF32 * (abs_sum + b) + propagated;
        }
    }
}

void matmul(Ctx& c) {
    const auto& xd = c.in(0);
    const auto& wd = c.in(1);
    const int64_t n = xd.shape[0], k = sdk::row_width(xd), m = wd.shape[0];
    Bounds& out = c.err[size_t(c.node.output)];
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j)
            out[size_t(i * m + j)] = matmul_bound(wd.dtype, c.v(0).data() + i * k, c.e(0).data() + i * k, c.v(1).data() + j * k, k);
}

void rmsnorm(Ctx& c) {
    const int64_t d = sdk::inner_dim(c.in(0)), rows = sdk::outer_rows(c.in(0));
    const Values &x = c.v(0), &w = c.v(1), &y = c.out_v();
    const Bounds& ex = c.e(0);
    Bounds& out = c.err[size_t(c.node.output)];
    for (int64_t r = 0; r < rows; ++r) {
        double ss = 0.0, dss = 0.0;
        for (int64_t j = 0; j < d; ++j) {
            ss += double(x[size_t(r * d + j)]) * x[size_t(r * d + j)];
            dss += std::fabs(double(x[size_t(r * d + j)])) * ex[size_t(r * d + j)];
        }
        const double inv = 1.0 / std::sqrt(ss / double(d) + double(c.node.fparams[0]));
        for (int64_t j = 0; j < d; ++j) {
            const size_t at = size_t(r * d + j);
            const double yj = std::fabs(double(y[at]));
            out[at] = A::kAbs + A::kRmsnormRel * yj + std::fabs(double(w[size_t(j)])) * inv * ex[at] + yj * inv * inv * dss / double(d);
        }
    }
}

void rope(Ctx& c) {
    const auto& xd = c.in(0);
    const int64_t n = xd.shape[0], heads = xd.shape[1], hd = xd.shape[2];
    const int64_t rot = sdk::rope_dims(c.node, hd);
    const bool halves = c.node.iparams[0] == HETERO_ROPE_HALVES;
    const Values& x = c.v(0);
    const Bounds& ex = c.e(0);
    Bounds& out = c.err[size_t(c.node.output)];
    out = ex;  // pass-through dims keep their bound
    for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < rot / 2; ++p) {
            const int64_t a = halves ? p : 2 * p, b = halves ? p + rot / 2 : 2 * p + 1;
            for (int64_t h = 0; h < heads; ++h) {
                const int64_t row = (i * heads + h) * hd;
                const double x0 = x[size_t(row + a)], x1 = x[size_t(row + b)];
                const double norm = std::sqrt(x0 * x0 + x1 * x1);
                const double e = ex[size_t(row + a)] + ex[size_t(row + b)];
                out[size_t(row + a)] = norm * A::kRopeRel + e;  // angle term added by rope_angles()
                out[size_t(row + b)] = norm * A::kRopeRel + e;
            }
        }
}

// Adds the angle allowance of rope: an angle error of kRopeAngleRel * |angle|
// moves each rotated pair by at most that many radians times its norm.
void rope_angles(Ctx& c, const int32_t* pos) {
    const auto& xd = c.in(0);
    const int64_t n = xd.shape[0], heads = xd.shape[1], hd = xd.shape[2];
    const int64_t rot = sdk::rope_dims(c.node, hd);
    const bool halves = c.node.iparams[0] == HETERO_ROPE_HALVES;
    const Values& x = c.v(0);
    Bounds& out = c.err[size_t(c.node.output)];
    for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < rot / 2; ++p) {
            double angle = std::fabs(double(pos[i]) * std::pow(double(c.node.fparams[0]), -2.0 * double(p) / double(rot)));
            if (c.node.op == HETERO_OP_ROPE_SCALED) {
                if (c.node.fparams[1] != 0.f) angle *= std::fabs(double(c.node.fparams[1]));
                if (c.node.n_inputs > 2) angle /= std::fabs(double(c.v(2)[size_t(p)]));
            }
            const int64_t a = halves ? p : 2 * p, b = halves ? p + rot / 2 : 2 * p + 1;
            for (int64_t h = 0; h < heads; ++h) {
                const int64_t row = (i * heads + h) * hd;
                const double x0 = x[size_t(row + a)], x1 = x[size_t(row + b)];
                const double slack = std::sqrt(x0 * x0 + x1 * x1) * A::kRopeAngleRel * angle + A::kAbs;
                out[size_t(row + a)] += slack;
                out[size_t(row + b)] += slack;
            }
        }
}

void attention(Ctx& c, const int32_t* pos) {
    const auto& qd = c.in(0);
    const auto& kd = c.in(1);
    const int64_t n = qd.shape[0], heads = qd.shape[1], hd = qd.shape[2], kv_heads = kd.shape[1];
    const int64_t group = heads / kv_heads;
    const double scale = std::fabs(double(c.node.fparams[0]));
    const double rel = kd.dtype == HETERO_DTYPE_F16 ? A::kAttentionRelF16 : A::kAttentionRelF32;
    // With f16 caches the scores may come from q rounded to f16 (tensor cores).
    const double q_round = kd.dtype == HETERO_DTYPE_F16 ? A::kAttentionQF16 : 0.0;
    const Values &q = c.v(0), &k = c.v(1), &v = c.v(2), &y = c.out_v();
    const Bounds &eq = c.e(0), &ek = c.e(1), &ev = c.e(2);
    Bounds& out = c.err[size_t(c.node.output)];
    for (int64_t i = 0; i < n; ++i)
        for (int64_t h = 0; h < heads; ++h) {
            const int64_t qrow = (i * heads + h) * hd, kvh = h / group;
            const int64_t base = sdk::seq_base(c.node, pos[i]);  // ATTENTION_SEQS: the row's sequence in the stack
            const int64_t len = int64_t(pos[i]) - base + 1;
            // ATTENTION_EXT's window; its soft-cap only shrinks score errors (slope <= 1).
            const int64_t window = c.node.op != HETERO_OP_ATTENTION ? c.node.iparams[0] : 0;
            const int64_t first = window > 0 ? std::max<int64_t>(0, len - window) : 0;
            double score_err = 0.0;  // largest score error from q and k errors
            for (int64_t t = first; t < len; ++t) {
                const int64_t krow = ((base + t) * kv_heads + kvh) * hd;
                double s = 0.0;
                for (int64_t e = 0; e < hd; ++e)
                    s += (eq[size_t(qrow + e)] + q_round * std::fabs(double(q[size_t(qrow + e)]))) * std::fabs(double(k[size_t(krow + e)])) +
                         std::fabs(double(q[size_t(qrow + e)])) * ek[size_t(krow + e)];
                score_err = std::max(score_err, s * scale);
            }
            for (int64_t e = 0; e < hd; ++e) {
                double vmax = 0.0, spread = 0.0, verr = 0.0;
                for (int64_t t = first; t < len; ++t) {
                    const size_t at = size_t(((base + t) * kv_heads + kvh) * hd + e);
                    vmax = std::max(vmax, std::fabs(double(v[at])));
                    spread = std::max(spread, std::fabs(double(v[at]) - double(y[size_t(qrow + e)])));
                    verr = std::max(verr, ev[at]);
                }
                out[size_t(qrow + e)] = A::kAbs + rel * vmax + 2.0 * score_err * spread + verr;
            }
        }
}

void swiglu(Ctx& c) {
    const Values &g = c.v(0), &u = c.v(1), &y = c.out_v();
    const Bounds &eg = c.e(0), &eu = c.e(1);
    Bounds& out = c.err[size_t(c.node.output)];
    for (size_t e = 0; e < out.size(); ++e) {
        const double s = 1.0 / (1.0 + std::exp(-double(g[e])));
        const double silu = double(g[e]) * s, dsilu = s * (1.0 + double(g[e]) * (1.0 - s));
        out[e] = A::kAbs + A::kSwigluRel * std::fabs(double(y[e])) + std::fabs(dsilu * u[e]) * eg[e] + std::fabs(silu) * eu[e];
    }
}

void geglu(Ctx& c) {
    const Values &g = c.v(0), &u = c.v(1), &y = c.out_v();
    const Bounds &eg = c.e(0), &eu = c.e(1);
    Bounds& out = c.err[size_t(c.node.output)];
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    for (size_t e = 0; e < out.size(); ++e) {
        const double x = g[e], t = std::tanh(k * (x + 0.044715 * x * x * x));
        const double gelu = 0.5 * x * (1.0 + t);
        const double dgelu = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x * x);
        out[e] = A::kAbs + A::kSwigluRel * std::fabs(double(y[e])) + std::fabs(dgelu * u[e]) * eg[e] + std::fabs(gelu) * eu[e];
    }
}

// c * tanh(x / c): slope at most 1.
void softcap(Ctx& c) {
    const Values& y = c.out_v();
    const Bounds& ex = c.e(0);
    Bounds& out = c.err[size_t(c.node.output)];
    for (size_t e = 0; e < out.size(); ++e) out[e] = A::kAbs + A::kSwigluRel * std::fabs(double(y[e])) + ex[e];
}

void binary(Ctx& c, bool multiply) {
    const Values &a = c.v(0), &b = c.v(1);
    const Bounds &ea = c.e(0), &eb = c.e(1);
    const size_t nb = b.size();
    Bounds& out = c.err[size_t(c.node.output)];
    for (size_t e = 0; e < out.size(); ++e) {
        const double av = std::fabs(double(a[e])), bv = std::fabs(double(b[e % nb]));
        out[e] = multiply ? A::kRoundF32 * av * bv + bv * ea[e] + av * eb[e % nb] : A::kRoundF32 * (av + bv) + ea[e] + eb[e % nb];
        out[e] += 1e-30;  // exact zero products stay exact, but never compare against a negative bound
    }
}

void softmax(Ctx& c) {
    const int64_t d = sdk::inner_dim(c.in(0)), rows = sdk::outer_rows(c.in(0));
    const double scale = c.node.fparams[0] == 0.f ? 1.0 : std::fabs(double(c.node.fparams[0]));
    const Values& p = c.out_v();
    const Bounds& ex = c.e(0);
    Bounds& out = c.err[size_t(c.node.output)];
    for (int64_t r = 0; r < rows; ++r) {
        double mean_err = 0.0;
        for (int64_t j = 0; j < d; ++j) mean_err += double(p[size_t(r * d + j)]) * ex[size_t(r * d + j)] * scale;
        for (int64_t j = 0; j < d; ++j) {
            const size_t at = size_t(r * d + j);
            out[at] = 0.1 * A::kAbs + A::kSoftmaxRel * p[at] + double(p[at]) * (ex[at] * scale + mean_err);
        }
    }
}

// Rounding to a narrower dtype: exact when the input is, else the input's
// bound plus one step of the output format (the rounding may go either way).
void convert_like(const Bounds& in, const Values& y, uint32_t dtype, Bounds& out, size_t out_offset) {
    for (size_t e = 0; e < in.size(); ++e) {
        double step = 0.0;
        if (in[e] > 0.0) {
            if (dtype == HETERO_DTYPE_F16) step = std::fabs(double(y[out_offset + e])) * 0x1p-10 + 6e-8;
            if (dtype == HETERO_DTYPE_BF16) step = std::fabs(double(y[out_offset + e])) * 0x1p-7;
        }
        out[out_offset + e] = in[e] + step;
    }
}

void store_rows(Ctx& c, const int32_t* pos) {
    const auto& sd = c.in(0);
    const int64_t n = sd.shape[0], width = sdk::row_width(sd);
    const uint32_t dtype = c.tensors[c.node.output].dtype;
    Bounds& out = c.err[size_t(c.node.output)];
    const Values& y = c.out_v();
    for (int64_t i = 0; i < n; ++i) {
        const Bounds row(c.e(0).begin() + i * width, c.e(0).begin() + (i + 1) * width);
        convert_like(row, y, dtype, out, size_t(int64_t(pos[i]) * width));
    }
}

}  // namespace

std::vector<float> decode_tensor(const hetero_tensor_desc& t, const uint8_t* data) {
    if (t.dtype == HETERO_DTYPE_I32 || t.dtype == HETERO_DTYPE_I8) return {};
    const int64_t width = sdk::inner_dim(t), rows = sdk::outer_rows(t);
    const uint64_t stride = sdk::row_bytes(t.dtype, width);
    std::vector<float> out(static_cast<size_t>(width * rows));
    for (int64_t r = 0; r < rows; ++r) sdk::row_to_f32(t.dtype, data + uint64_t(r) * stride, out.data() + r * width, width);
    return out;
}

std::vector<std::vector<double>> error_bounds(const hetero_graph& graph, const uint8_t* const* ref_data, bool int8_matmul) {
    std::vector<Values> val(graph.n_tensors);
    std::vector<Bounds> err(graph.n_tensors);
    for (uint32_t t = 0; t < graph.n_tensors; ++t) {
        val[t] = decode_tensor(graph.tensors[t], ref_data[t]);
        err[t].assign(size_t(sdk::element_count(graph.tensors[t])), 0.0);
    }
    // Inputs must be read as they were when the node ran; a tensor is written
    // once in the graphs the kit builds, except caches that only gain rows, so
    // the final reference values serve every node.
    for (uint32_t n = 0; n < graph.n_nodes; ++n) {
        const hetero_node& node = graph.nodes[n];
        Ctx c{node, graph.tensors, val, err};
        auto i32 = [&](uint32_t i) { return reinterpret_cast<const int32_t*>(ref_data[node.inputs[i]]); };
        switch (node.op) {
            case HETERO_OP_EMBEDDING: {
                const int64_t d = graph.tensors[node.output].shape[1], rows = graph.tensors[node.output].shape[0];
                for (int64_t r = 0; r < rows; ++r)
                    std::copy_n(c.e(0).begin() + int64_t(i32(1)[r]) * d, d, err[size_t(node.output)].begin() + r * d);
                break;
            }
            case HETERO_OP_MATMUL:
                if (int8_matmul && c.in(1).dtype != HETERO_DTYPE_F16 && c.in(1).dtype != HETERO_DTYPE_BF16) matmul_int8(c);
                else matmul(c);
                break;
            case HETERO_OP_RMSNORM: rmsnorm(c); break;
            case HETERO_OP_ROPE: rope(c); rope_angles(c, i32(1)); break;
            case HETERO_OP_ATTENTION: attention(c, i32(3)); break;
            case HETERO_OP_SWIGLU: swiglu(c); break;
            case HETERO_OP_ADD: binary(c, false); break;
            case HETERO_OP_MUL: binary(c, true); break;
            case HETERO_OP_SOFTMAX: softmax(c); break;
            case HETERO_OP_CONVERT: convert_like(c.e(0), c.out_v(), graph.tensors[node.output].dtype, err[size_t(node.output)], 0); break;
            case HETERO_OP_STORE_ROWS: store_rows(c, i32(1)); break;
            case HETERO_OP_ROPE_SCALED: rope(c); rope_angles(c, i32(1)); break;
            case HETERO_OP_ATTENTION_EXT:
            case HETERO_OP_ATTENTION_SEQS: attention(c, i32(3)); break;
            case HETERO_OP_GEGLU: geglu(c); break;
            case HETERO_OP_SOFTCAP: softcap(c); break;
            default: break;
        }
    }
    return err;
}

}  // namespace hetero::conformance
