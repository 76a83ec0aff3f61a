#include "cl_fusion.hpp"

#include "cl_device.hpp"

#include <hetero/sdk/fusion.hpp>

#include <utility>

namespace hetero::opencl {
namespace {

// Nodes n..n+3 are ROPE(q), ROPE(k), STORE_ROWS(k_rope) and STORE_ROWS(v),
// the ROPEs at the same positions and the stores at the same rows (the
// positions, or stacked caches' rows), and only the K store reads k_rope:
// one rope_store launch runs them (see kernels/elementwise.cl).
bool can_fuse_rope_store(const sdk::Graph& g, size_t n, const std::vector<uint32_t>& uses) {
    if (n + 3 >= g.nodes.size()) return false;
    const hetero_node &rq = g.nodes[n], &rk = g.nodes[n + 1], &sk = g.nodes[n + 2], &sv = g.nodes[n + 3];
    if ((rq.op != HETERO_OP_ROPE && rq.op != HETERO_OP_ROPE_SCALED) || rk.op != rq.op || sk.op != HETERO_OP_STORE_ROWS ||
        sv.op != HETERO_OP_STORE_ROWS)
        return false;
    // ROPE_SCALED pairs share the frequency scale and factors too.
    if (rq.op == HETERO_OP_ROPE_SCALED &&
        (rq.fparams[1] != rk.fparams[1] || rq.n_inputs != rk.n_inputs || (rq.n_inputs > 2 && rq.inputs[2] != rk.inputs[2])))
        return false;
    const auto& T = g.tensors;
    const int32_t pos = rq.inputs[1];
    if (rk.inputs[1] != pos || sv.inputs[1] != sk.inputs[1] || sk.inputs[0] != rk.output) return false;
    if (rq.fparams[0] != rk.fparams[0] || rq.iparams[0] != rk.iparams[0] || rq.iparams[1] != rk.iparams[1]) return false;
    const hetero_tensor_desc &q = T[size_t(rq.inputs[0])], &k = T[size_t(rk.inputs[0])], &v = T[size_t(sv.inputs[0])];
    const hetero_tensor_desc &kc = T[size_t(sk.output)], &vc = T[size_t(sv.output)];
    auto f32_3d = [](const hetero_tensor_desc& t) { return t.ndim == 3 && t.dtype == HETERO_DTYPE_F32; };
    if (!f32_3d(q) || !f32_3d(k) || !f32_3d(v) || !sdk::same_shape(k, v) || q.shape[0] != k.shape[0] || q.shape[2] != k.shape[2] ||
        T[size_t(rq.output)].dtype != HETERO_DTYPE_F32)
        return false;
    const bool cache_ok = kc.ndim == 3 && sdk::same_shape(kc, vc) && kc.dtype == vc.dtype &&
                          (kc.dtype == HETERO_DTYPE_F32 || kc.dtype == HETERO_DTYPE_F16) && kc.shape[1] == k.shape[1] &&
                          kc.shape[2] == k.shape[2] && sk.output != sv.output;
    return cache_ok && !sdk::read_elsewhere(g, uses, rk.output, n, 4);
}

// Widest row whose normalised copy a matvec work-group keeps in local
// memory (16 KiB; OpenCL guarantees GPUs 32 KiB).
constexpr int64_t kNormFusionMaxWidth = 4096;

// Whether a launch's bias leaves it open to the RMSNORM and rope_store
// fusions: none, or one per matrix (a residual or a lone MATMUL's bias is not).
bool norm_and_rope_fusable(const MatmulLaunch& mm) { return mm.bias_mode == 0 || mm.bias_mode == 3; }

// A MATMUL that may share a launch with its neighbours: quantized weights,
// an internal product, and a bias only where `with_bias` (decode launches,
// whose kernels add one per matrix; then every MATMUL of the group has one).
bool groupable(const sdk::Graph& g, const hetero_node& n, bool with_bias) {
    const bool bias_ok = with_bias ? n.n_inputs == 3 && g.tensors[size_t(n.inputs[2])].dtype == HETERO_DTYPE_F32 : n.n_inputs == 2;
    return n.op == HETERO_OP_MATMUL && bias_ok && fused_weight_type(g.tensors[size_t(n.inputs[1])].dtype) &&
           g.tensors[size_t(n.output)].kind == HETERO_TENSOR_INTERNAL;
}

// Groups the MATMUL at n with up to two following ones over the same x, and
// the SWIGLU after a gate/up pair; returns the number of MATMULs.
size_t group_matmuls(const sdk::Graph& g, size_t n, const std::vector<sdk::ResidualFusion>& residual, const std::vector<uint32_t>& uses,
                     bool decode, Fusions& f) {
    const auto& T = g.tensors;
    const size_t nn = g.nodes.size();
    const hetero_node& node = g.nodes[n];
    MatmulLaunch& mm = f.matmul[n];
    const bool with_bias = node.n_inputs == 3;
    size_t len = 1;
    while (len < 3 && n + len < nn) {
        const hetero_node& next = g.nodes[n + len];
        if (!groupable(g, next, with_bias) || next.inputs[0] != node.inputs[0] || residual[n + len].residual >= 0 ||
            T[size_t(next.inputs[1])].dtype != T[size_t(node.inputs[1])].dtype)
            break;
        ++len;
    }
    if (len == 1 || !sdk::keep_inputs_alive(g, n, len, f.planned)) return 1;
    mm.count = int(len);
    for (size_t i = 1; i < len; ++i) {
        mm.w[i] = g.nodes[n + i].inputs[1];
        mm.y[i] = g.nodes[n + i].output;
        f.absorbed[n + i] = true;
    }
    if (with_bias) {
        mm.bias_mode = 3;
        mm.bias = -1;
        for (size_t i = 0; i < len; ++i) mm.biases[i] = g.nodes[n + i].inputs[2];
        return len;  // Q/K/V: no SwiGLU follows
    }
    // gate/up + SWIGLU on the decode kernels: one kernel writes silu(gate) * up.
    if (len != 2 || n + 2 >= nn || !decode) return len;
    const hetero_node& sw = g.nodes[n + 2];
    const bool in_order = sw.inputs[0] == mm.y[0] && sw.inputs[1] == mm.y[1];
    const bool swapped = sw.inputs[0] == mm.y[1] && sw.inputs[1] == mm.y[0];
    if (sw.op != HETERO_OP_SWIGLU || !(in_order || swapped) || T[size_t(mm.w[0])].shape[0] != T[size_t(mm.w[1])].shape[0] ||
        T[size_t(sw.output)].dtype != HETERO_DTYPE_F32 || sdk::read_elsewhere(g, uses, mm.y[0], n, 3) ||
        sdk::read_elsewhere(g, uses, mm.y[1], n, 3) || !sdk::keep_inputs_alive(g, n, 3, f.planned))
        return len;
    if (swapped) std::swap(mm.w[0], mm.w[1]);
    mm.swiglu = true;
    mm.y[0] = sw.output;
    mm.y[1] = -1;
    f.absorbed[n + 2] = true;
    return len;
}

// For a decode launch: the RMSNORM right before the launch at n (which
// spans `count` nodes) runs inside it when only that launch reads its output.
void fuse_norm_before(const sdk::Graph& g, size_t n, size_t count, const std::vector<uint32_t>& uses, bool decode, Fusions& f) {
    MatmulLaunch& mm = f.matmul[n];
    if (n == 0 || f.absorbed[n - 1] || !decode) return;
    const hetero_node& norm = g.nodes[n - 1];
    if (norm.op != HETERO_OP_RMSNORM || norm.n_inputs != 2 || norm.output != mm.x || !norm_and_rope_fusable(mm)) return;
    const auto& T = g.tensors;
    const hetero_tensor_desc &x = T[size_t(norm.inputs[0])], &w = T[size_t(norm.inputs[1])], &y = T[size_t(norm.output)];
    if (y.kind != HETERO_TENSOR_INTERNAL || x.dtype != HETERO_DTYPE_F32 || w.dtype != HETERO_DTYPE_F32 ||
        sdk::row_width(x) != sdk::row_width(y) || sdk::row_width(x) > kNormFusionMaxWidth ||
        sdk::read_elsewhere(g, uses, norm.output, n - 1, count + 1) || !sdk::keep_inputs_alive(g, n - 1, count + 1, f.planned))
        return;
    mm.x = norm.inputs[0];
    mm.norm_weight = norm.inputs[1];
    mm.norm_eps = norm.fparams[0];
    f.absorbed[n - 1] = true;
}

// A decode Q/K/V launch (three matrices over a fused RMSNORM) followed by a
// rope_store group over exactly its outputs takes that group too: the planar
// kernel rotates pairs (2i, 2i + 1) within its tiles, so interleaved ROPE only.
void attach_rope_store(const sdk::Graph& g, size_t n, const std::vector<uint32_t>& uses, Fusions& f) {
    MatmulLaunch& mm = f.matmul[n];
    const size_t r = n + 3;
    if (mm.count != 3 || mm.norm_weight < 0 || !norm_and_rope_fusable(mm) || r >= g.nodes.size() || !f.rope_store[r]) return;
    const hetero_node &rq = g.nodes[r], &rk = g.nodes[r + 1], &sv = g.nodes[r + 3];
    const hetero_tensor_desc& q = g.tensors[size_t(rq.inputs[0])];
    // The planar kernel knows ROPE's plain frequencies only, and stores at
    // the position.
    if (rq.op != HETERO_OP_ROPE || g.nodes[r + 2].inputs[1] != rq.inputs[1] || rq.inputs[0] != mm.y[0] || rk.inputs[0] != mm.y[1] ||
        sv.inputs[0] != mm.y[2] || q.shape[0] != 1 || rq.iparams[0] == HETERO_ROPE_HALVES || q.shape[2] % 2 != 0)
        return;
    for (int i = 0; i < 3; ++i)
        if (sdk::read_elsewhere(g, uses, mm.y[i], r, 4)) return;
    // The rope_store group kept q and k alive to its end; made inside the
    // wider span they need not be, which leaves room for x.
    const hetero_node kept = f.planned.nodes[r + 3];
    f.planned.nodes[r + 3] = g.nodes[r + 3];
    if (!sdk::keep_inputs_alive(g, n - 1, 8, f.planned)) {
        f.planned.nodes[r + 3] = kept;
        return;
    }
    mm.rope_node = int32_t(r);
    f.rope_store[r] = false;
    f.absorbed[r] = true;
}

}  // namespace

Fusions find_fusions(const sdk::Graph& g, const MatvecRows& matvec_rows) {
    static const bool enabled = !sdk::env_equals("HETERO_CL_FUSE", "0");
    const size_t nn = g.nodes.size();
    Fusions f{std::vector<MatmulLaunch>(nn), std::vector<bool>(nn, false), g, std::vector<bool>(nn, false)};
    const std::vector<uint32_t> uses = sdk::count_uses(g);
    const std::vector<sdk::ResidualFusion> residual = enabled ? sdk::find_residual_fusions(g, uses) : std::vector<sdk::ResidualFusion>(nn);
    for (size_t n = 0; n < nn; ++n) {
        const hetero_node& node = g.nodes[n];
        if (enabled && !f.absorbed[n] && can_fuse_rope_store(g, n, uses) && sdk::keep_inputs_alive(g, n, 4, f.planned)) {
            f.rope_store[n] = true;
            f.absorbed[n + 1] = f.absorbed[n + 2] = f.absorbed[n + 3] = true;
        }
        if (f.absorbed[n] || node.op != HETERO_OP_MATMUL) continue;
        MatmulLaunch& mm = f.matmul[n];
        mm.count = 1;
        mm.x = node.inputs[0];
        mm.w[0] = node.inputs[1];
        mm.y[0] = node.output;
        if (node.n_inputs == 3) {
            mm.bias = node.inputs[2];
            mm.bias_mode = 1;
        }
        if (!enabled) continue;
        if (residual[n].residual >= 0 && sdk::keep_inputs_alive(g, n, 2, f.planned)) {
            mm.bias = residual[n].residual;
            mm.bias_mode = 2;
            mm.y[0] = residual[n].out;
            f.absorbed[n + 1] = true;
            continue;
        }
        const bool decode = g.tensors[size_t(mm.x)].shape[0] <= matvec_rows(g.tensors[size_t(mm.w[0])].dtype);
        if (!groupable(g, node, decode && node.n_inputs == 3)) continue;
        const size_t len = group_matmuls(g, n, residual, uses, decode, f);
        fuse_norm_before(g, n, len + (mm.swiglu ? 1 : 0), uses, decode, f);
    }
    if (enabled)
        for (size_t n = 0; n < nn; ++n)
            if (f.matmul[n].count == 3) attach_rope_store(g, n, uses, f);
    return f;
}

}  // namespace hetero::opencl
