#include "vk_fusion.hpp"

#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace hetero::vk {

using sdk::keep_inputs_alive;
using sdk::read_elsewhere;

size_t max_group_size(const hetero_node& first) {
    switch (first.op) {
        case HETERO_OP_MATMUL: return 3;
        case HETERO_OP_ROPE:
        case HETERO_OP_ROPE_SCALED:
        case HETERO_OP_STORE_ROWS: return 2;
        default: return 1;
    }
}

bool can_join_group(const DeviceInfo& dev, const hetero_node& first, const hetero_node& next, const hetero_tensor_desc* t) {
    if (first.op != next.op || first.n_inputs != next.n_inputs || max_group_size(first) < 2) return false;
    // The later node must not read what the earlier one writes.
    for (uint32_t i = 0; i < next.n_inputs; ++i)
        if (next.inputs[i] == first.output) return false;
    if (next.output == first.output) return false;
    const hetero_tensor_desc &xa = t[first.inputs[0]], &xb = t[next.inputs[0]];
    switch (first.op) {
        case HETERO_OP_MATMUL: {
            // Quantized matrices over the same x: a multi-matvec for few
            // rows (every block type), a multi coopmat GEMM for many (the
            // types coop_gemm_weights lists).
            auto groupable = [&](const hetero_node& n) {
                const hetero_tensor_desc& w = t[n.inputs[1]];
                return n.n_inputs == 2 && sdk::is_quant_dtype(w.dtype) &&
                       t[n.output].kind == HETERO_TENSOR_INTERNAL &&
                       (t[n.inputs[0]].shape[0] <= kMatvecMaxRows || use_coopmat(dev, w.dtype));
            };
            const hetero_tensor_desc &wa = t[first.inputs[1]], &wb = t[next.inputs[1]];
            return groupable(first) && groupable(next) && first.inputs[0] == next.inputs[0] && wa.dtype == wb.dtype &&
                   sdk::row_width(wa) == sdk::row_width(wb);
        }
        case HETERO_OP_ROPE_SCALED:
            // One frequency scale and factors tensor for both (n_inputs already match).
            if (first.fparams[1] != next.fparams[1] || (first.n_inputs > 2 && first.inputs[2] != next.inputs[2])) return false;
            [[fallthrough]];
        case HETERO_OP_ROPE:
            return first.inputs[1] == next.inputs[1] && first.fparams[0] == next.fparams[0] && first.iparams[0] == next.iparams[0] &&
                   first.iparams[1] == next.iparams[1] && xa.shape[0] == xb.shape[0] && xa.shape[2] == xb.shape[2];
        case HETERO_OP_STORE_ROWS: {
            const hetero_tensor_desc &ca = t[first.output], &cb = t[next.output];
            return first.inputs[1] == next.inputs[1] && xa.shape[0] == xb.shape[0] && sdk::row_width(xa) == sdk::row_width(xb) &&
                   ca.dtype == cb.dtype && ca.shape[0] == cb.shape[0] && sdk::row_width(ca) == sdk::row_width(cb);
        }
        default: return false;
    }
}

bool can_fuse_norm(const DeviceInfo& dev, const hetero_node& norm, const hetero_node& first, const hetero_tensor_desc* t) {
    if (norm.op != HETERO_OP_RMSNORM || first.op != HETERO_OP_MATMUL || norm.n_inputs != 2 || !dev.subgroup_arithmetic) return false;
    const hetero_tensor_desc &x = t[norm.inputs[0]], &w = t[norm.inputs[1]], &y = t[norm.output];
    return first.inputs[0] == norm.output && y.kind == HETERO_TENSOR_INTERNAL && x.dtype == HETERO_DTYPE_F32 &&
           w.dtype == HETERO_DTYPE_F32 && x.shape[0] <= kMatvecMaxRows && sdk::row_width(x) == sdk::row_width(y);
}

uint64_t norm_fusion_max_rows() {
    static const uint64_t rows = [] {
        const char* e = std::getenv("HETERO_VK_NORM_ROWS");  // tuning aid
        return e ? std::strtoull(e, nullptr, 10) : uint64_t(4096);
    }();
    return rows;
}

bool can_fuse_swiglu(const std::vector<hetero_node>& members, const hetero_node& swiglu, const hetero_tensor_desc* t) {
    if (members.size() != 2 || swiglu.op != HETERO_OP_SWIGLU || swiglu.n_inputs != 2) return false;
    const hetero_node &g = members[0], &u = members[1];
    if (g.op != HETERO_OP_MATMUL || swiglu.inputs[0] != g.output || swiglu.inputs[1] != u.output) return false;
    const hetero_tensor_desc &go = t[g.output], &uo = t[u.output], &y = t[swiglu.output];
    return t[g.inputs[0]].shape[0] <= kMatvecMaxRows && t[g.inputs[1]].shape[0] == t[u.inputs[1]].shape[0] && sdk::same_shape(go, uo) &&
           sdk::same_shape(go, y) && y.dtype == HETERO_DTYPE_F32;
}

bool can_fuse_rope_store(const DeviceInfo& dev, const std::vector<hetero_node>& ropes, const std::vector<hetero_node>& stores,
                         const hetero_tensor_desc* t) {
    if (ropes.size() != 2 || stores.size() != 2 || (ropes[0].op != HETERO_OP_ROPE && ropes[0].op != HETERO_OP_ROPE_SCALED) ||
        stores[0].op != HETERO_OP_STORE_ROWS ||
        stores[1].op != HETERO_OP_STORE_ROWS)
        return false;
    const hetero_node &rk = ropes[1], &sk = stores[0], &sv = stores[1];
    const hetero_tensor_desc &k = t[rk.output], &v = t[sv.inputs[0]], &kc = t[sk.output], &vc = t[sv.output];
    // Caches [C, Hkv, Hd] of rows shaped like K [N, Hkv, Hd]; positions shared by all four nodes.
    return sk.inputs[0] == rk.output && sk.inputs[1] == rk.inputs[1] && sv.inputs[1] == rk.inputs[1] && k.kind == HETERO_TENSOR_INTERNAL &&
           sdk::same_shape(k, v) && v.dtype == HETERO_DTYPE_F32 && sdk::same_shape(kc, vc) && kc.dtype == vc.dtype && kc.ndim == 3 &&
           kc.shape[1] == k.shape[1] && kc.shape[2] == k.shape[2] && (kc.dtype == HETERO_DTYPE_F32 || (kc.dtype == HETERO_DTYPE_F16 && dev.storage16));
}

namespace {

// The nodes of g from `n` on that join one group (1: none).
size_t group_length(const DeviceInfo& dev, const sdk::Graph& g, size_t n, size_t most, const std::vector<bool>& fused) {
    size_t len = 1;
    while (len < most && n + len < g.nodes.size() && !fused[n + len]) {
        bool ok = true;
        for (size_t m = n; m < n + len && ok; ++m) ok = can_join_group(dev, g.nodes[m], g.nodes[n + len], g.tensors.data());
        if (!ok) break;
        ++len;
    }
    return len;
}

// What the group of `len` nodes at `n` may run besides its members: the
// RMSNORM before it, the SWIGLU after it, the STORE_ROWS pair after it.
struct GroupExtras {
    bool norm = false, swiglu = false, stores = false;
};

GroupExtras group_extras(const DeviceInfo& dev, const sdk::Graph& g, const std::vector<uint32_t>& uses, const Groups& out, size_t n,
                         size_t len, const std::vector<bool>& fused) {
    const size_t nn = g.nodes.size();
    const std::vector<hetero_node> members(g.nodes.begin() + n, g.nodes.begin() + n + len);
    uint64_t rows = 0;
    for (const hetero_node& m : members) rows += uint64_t(g.tensors[m.inputs[1]].shape[0]);
    GroupExtras e;
    e.norm = n > 0 && out.size[n - 1] == 1 && !fused[n - 1] && !out.absorbed[n - 1] && rows <= norm_fusion_max_rows() &&
             can_fuse_norm(dev, g.nodes[n - 1], g.nodes[n], g.tensors.data()) && !read_elsewhere(g, uses, g.nodes[n - 1].output, n - 1, len + 1);
    e.swiglu = n + len < nn && !fused[n + len] && can_fuse_swiglu(members, g.nodes[n + len], g.tensors.data()) &&
               !read_elsewhere(g, uses, members[0].output, n, len + 1) && !read_elsewhere(g, uses, members[1].output, n, len + 1);
    if ((members[0].op == HETERO_OP_ROPE || members[0].op == HETERO_OP_ROPE_SCALED) && n + len + 1 < nn && !fused[n + len] && !fused[n + len + 1]) {
        const std::vector<hetero_node> st(g.nodes.begin() + n + len, g.nodes.begin() + n + len + 2);
        e.stores = can_join_group(dev, st[0], st[1], g.tensors.data()) && can_fuse_rope_store(dev, members, st, g.tensors.data()) &&
                   !read_elsewhere(g, uses, members[1].output, n, len + 2);
    }
    return e;
}

}  // namespace

Groups find_groups(const DeviceInfo& dev, const sdk::Graph& g, const std::vector<uint32_t>& uses, const std::vector<ResidualFusion>& fusions,
                   sdk::Graph& planned) {
    const size_t nn = g.nodes.size();
    Groups out{std::vector<size_t>(nn, 1), std::vector<int64_t>(nn, -1), std::vector<int64_t>(nn, -1), std::vector<int64_t>(nn, -1),
               std::vector<bool>(nn, false)};
    static const bool enabled = !sdk::env_equals("HETERO_VK_GROUP", "0");
    if (!enabled) return out;
    // Nodes of a residual fusion (the matmul and its ADD) stay out of groups.
    std::vector<bool> fused(nn);
    for (size_t n = 0; n < nn; ++n) fused[n] = fusions[n].residual >= 0 || (n > 0 && fusions[n - 1].residual >= 0);
    for (size_t n = 0; n < nn; ++n) {
        if (fused[n]) continue;
        const size_t len = group_length(dev, g, n, std::min(max_group_size(g.nodes[n]), kMaxGroup), fused);
        if (len < 2) continue;
        const GroupExtras e = group_extras(dev, g, uses, out, n, len, fused);
        const size_t first = e.norm ? n - 1 : n, after = (e.swiglu ? 1 : 0) + (e.stores ? 2 : 0);
        if (!keep_inputs_alive(g, first, len + (e.norm ? 1 : 0) + after, planned)) continue;
        out.size[n] = len;
        if (e.stores) {
            out.stores[n] = int64_t(n + len);
            out.absorbed[n + len] = out.absorbed[n + len + 1] = true;
        }
        if (e.norm) {
            out.norm[n] = int64_t(n - 1);
            out.absorbed[n - 1] = true;
        }
        if (e.swiglu) {
            out.swiglu[n] = int64_t(n + len);
            out.absorbed[n + len] = true;
        }
        n += len - 1 + after;
    }
    return out;
}

void store_gemm_inputs_in_f16(const DeviceInfo& dev, const hetero_tensor_desc* t, size_t n_tensors, std::vector<Dispatch>& ds) {
    static const bool disabled = sdk::env_equals("HETERO_VK_XH", "0");
    if (disabled || !dev.storage16 || !coopmat_enabled(dev)) return;
    auto starts = [](const std::string& s, const char* p) { return s.rfind(p, 0) == 0; };
    for (size_t id = 0; id < n_tensors; ++id) {
        if (t[id].kind != HETERO_TENSOR_INTERNAL || t[id].dtype != HETERO_DTYPE_F32) continue;
        int64_t producer = -1;
        std::vector<size_t> consumers;
        bool ok = true;
        for (size_t i = 0; i < ds.size() && ok; ++i)
            for (uint32_t b = 0; b < kOperandBindings && ok; ++b) {
                if (ds[i].operand[b] != int32_t(id)) continue;
                if (is_output_operand(b)) {
                    ok = producer < 0 && b == kOut0;
                    producer = int64_t(i);
                } else {
                    ok = b == kIn0 && starts(ds[i].shader, "matmul_coop_");
                    consumers.push_back(i);
                }
            }
        if (!ok || producer < 0 || consumers.empty()) continue;
        std::string& ps = ds[size_t(producer)].shader;
        if (ps != "rmsnorm" && ps != "rmsnorm_sg" && ps != "elementwise" && ps != "attention_coop") continue;
        ps += "_h";
        for (size_t c : consumers) {
            std::string& cs = ds[c].shader;
            cs.insert(cs.rfind("_w") + 1, "xh_");  // matmul_coop[_multi]_w4 -> matmul_coop[_multi]_xh_w4
        }
    }
}

}  // namespace hetero::vk
