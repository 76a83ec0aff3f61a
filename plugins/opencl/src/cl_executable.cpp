#include "cl_executable.hpp"

#include "cl_buffer.hpp"
#include "cl_util.hpp"

#include <hetero/sdk/fusion.hpp>
#include <hetero/sdk/host_memory.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstring>
#include <optional>

namespace hetero::opencl {
namespace {

// Mirrors the dtype numbers of kernels/common.cl.
static_assert(HETERO_DTYPE_F32 == 0 && HETERO_DTYPE_F16 == 1 && HETERO_DTYPE_BF16 == 2 && HETERO_DTYPE_Q8_0 == 3 &&
              HETERO_DTYPE_Q4_0 == 4 && HETERO_DTYPE_Q4_K == 7 && HETERO_DTYPE_Q5_K == 8 && HETERO_DTYPE_Q6_K == 9);

constexpr cl_int kFlagInit[4] = {0, INT_MAX, 0, 0};
constexpr cl_int kErrIdRange = 1, kErrPosRange = 2;

template <class T>
void set_arg(cl_kernel k, cl_uint i, const T& v) {
    cl_check(clSetKernelArg(k, i, sizeof(T), &v), "clSetKernelArg");
}
void set_local(cl_kernel k, cl_uint i, size_t floats) {
    cl_check(clSetKernelArg(k, i, floats * sizeof(float), nullptr), "clSetKernelArg (local)");
}

size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

// The scalars of a planar launch (PlanarParams in kernels/matvec_planar.cl),
// and where its arguments are: buffers x, (w, y) per matrix, bias, then the
// struct, the local memory, the norm weights, the positions, the error flag.
struct PlanarParams {
    cl_ulong xoff, w0off, y0off, w1off, y1off, w2off, y2off, boff, nwoff, poff;
    cl_int M0, M1, M2, has_bias, K, Hd, rot, C, cache_f16, node;
    cl_float eps, base;
};
static_assert(sizeof(PlanarParams) == 128, "PlanarParams must match the kernels' layout");
constexpr cl_uint kPqX = 0, kPqBias = 7, kPqParams = 8, kPqLocal = 9, kPqNorm = 10, kPqPos = 11, kPqErr = 12;
constexpr cl_uint pq_w(int i) { return cl_uint(1 + 2 * i); }
constexpr cl_uint pq_y(int i) { return cl_uint(2 + 2 * i); }
constexpr size_t kPqYField[3] = {offsetof(PlanarParams, y0off), offsetof(PlanarParams, y1off), offsetof(PlanarParams, y2off)};
constexpr size_t kPqWField[3] = {offsetof(PlanarParams, w0off), offsetof(PlanarParams, w1off), offsetof(PlanarParams, w2off)};

// Kernels address tensors through typed pointers, so offsets must respect
// the element alignment (2 bytes for f16/bf16 and GGUF blocks).
uint64_t alignment_of(uint32_t dtype) {
    switch (dtype) {
        case HETERO_DTYPE_F32: case HETERO_DTYPE_I32: return 4;
        case HETERO_DTYPE_I8: return 1;
        default: return 2;
    }
}

[[noreturn]] void tensor_error(const hetero_tensor_desc& t, int64_t id, const std::string& what) {
    sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "tensor " + std::to_string(id) + (t.name && *t.name ? " (" + std::string(t.name) + ")" : "") + what);
}

void check_alignment(const hetero_tensor_desc& t, uint32_t id, uint64_t offset) {
    const uint64_t a = alignment_of(t.dtype);
    if (offset % a != 0)
        tensor_error(t, id, ": binding offset " + std::to_string(offset) + " is not a multiple of " + std::to_string(a) +
                                " bytes as its dtype " + sdk::dtype_name(t.dtype) + " needs");
}

// A dtype as kernel names spell it: f32, q8_0, q4_k, iq4_nl, ... (sdk's
// name, lower case).
std::string kernel_dtype(uint32_t dtype) {
    std::string s = sdk::dtype_name(dtype);
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// matvec_<type> (kernels/matvec.cl, kquant.cl, quant_other.cl).
std::string matvec_kernel(uint32_t dtype) { return "matvec_" + kernel_dtype(dtype); }

// gemm_[planar_]<type>, and on tensor cores gemm_mma_[planar_]<type>; planar
// for Q4_0/Q8_0 rewritten in the planar layout.
std::string gemm_kernel(uint32_t dtype, bool planar) { return std::string("gemm_") + (planar ? "planar_" : "") + kernel_dtype(dtype); }

std::string mma_gemm_kernel(uint32_t dtype, bool planar) {
    return std::string("gemm_mma_") + (planar ? "planar_" : "") + kernel_dtype(dtype);
}

// matvec_[swiglu_][norm_][planar_][rope_]<type> for fused_weight_type types.
std::string quant_matvec_kernel(uint32_t dtype, bool swiglu, bool norm, bool planar, bool rope = false) {
    return std::string("matvec_") + (swiglu ? "swiglu_" : "") + (norm ? "norm_" : "") + (planar ? "planar_" : "") + (rope ? "rope_" : "") +
           kernel_dtype(dtype);
}

// Rows per tile of the planar matvec kernels (gate and up rows each with
// SwiGLU) and the work-items that share a tile (PQ_ROWS and PQ_LANES of
// kernels/matvec_planar.cl).
constexpr int64_t kPlanarRows = 2;
constexpr size_t kPlanarLanes = 32;

// Local memory (in floats) of a planar matvec work-group of `wg` items over
// rows of width k: x as int8, its steps and block sums (each padded to 4),
// two arrays of k / 8, the lanes' reduction space and 16 bytes to align the
// whole to 16 (the layout in kernels/matvec_planar.cl).
size_t planar_local_floats(int64_t k, size_t wg) {
    return size_t(k / 4 + 2 * ((k / 32 + 3) & ~int64_t(3)) + k / 4) + wg * 2 * size_t(kPlanarRows) + 4;
}

// Largest planar work-group (of up to `cap` items) that still gives every
// compute unit a group: larger groups quantize x fewer times, more groups
// keep more loads in flight.
size_t planar_group_size(size_t tiles, size_t cap, uint32_t compute_units) {
    size_t wg = std::max(cap, kPlanarLanes);
    while (wg > 2 * kPlanarLanes && (tiles * kPlanarLanes + wg - 1) / wg < size_t(compute_units)) wg /= 2;
    return wg;
}

// Releases a launch's kernel when building the launch throws.
struct KernelGuard {
    Launch& l;
    bool armed = true;
    ~KernelGuard() {
        if (armed && l.kernel) clReleaseKernel(l.kernel);
    }
};

// Which nodes run inside another node's launch (see MatmulLaunch), and the
// graph the memory plan is made from, in which a fused launch's inputs stay
// alive until its last node. HETERO_CL_FUSE=0 turns fusions off.
struct Fusions {
    std::vector<MatmulLaunch> matmul;  // per node: the matmul launch starting there
    std::vector<bool> absorbed;        // per node: run by an earlier node's launch
    sdk::Graph planned;
    std::vector<bool> rope_store;      // per node: a rope_store launch starts here
};

// Nodes n..n+3 are ROPE(q), ROPE(k), STORE_ROWS(k_rope) and STORE_ROWS(v),
// all at the same positions, and only the K store reads k_rope: one
// rope_store launch runs them (see kernels/elementwise.cl).
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
    if (rk.inputs[1] != pos || sk.inputs[1] != pos || sv.inputs[1] != pos || sk.inputs[0] != rk.output) return false;
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

// A MATMUL that may share a launch with its neighbours: quantized weights,
// no bias, an internal product.
bool groupable(const sdk::Graph& g, const hetero_node& n) {
    return n.op == HETERO_OP_MATMUL && n.n_inputs == 2 && fused_weight_type(g.tensors[size_t(n.inputs[1])].dtype) &&
           g.tensors[size_t(n.output)].kind == HETERO_TENSOR_INTERNAL;
}

// Groups the MATMUL at n with up to two following ones over the same x, and
// the SWIGLU after a gate/up pair; returns the number of MATMULs.
size_t group_matmuls(const sdk::Graph& g, size_t n, const std::vector<sdk::ResidualFusion>& residual, const std::vector<uint32_t>& uses,
                     Fusions& f) {
    const auto& T = g.tensors;
    const size_t nn = g.nodes.size();
    const hetero_node& node = g.nodes[n];
    MatmulLaunch& mm = f.matmul[n];
    size_t len = 1;
    while (len < 3 && n + len < nn) {
        const hetero_node& next = g.nodes[n + len];
        if (!groupable(g, next) || next.inputs[0] != node.inputs[0] || residual[n + len].residual >= 0 ||
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
    // gate/up + SWIGLU, one activation row: one kernel writes silu(gate) * up.
    if (len != 2 || n + 2 >= nn || T[size_t(mm.x)].shape[0] != 1) return len;
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

// For one activation row: the RMSNORM right before the launch at n (which
// spans `count` nodes) runs inside it when only that launch reads its output.
void fuse_norm_before(const sdk::Graph& g, size_t n, size_t count, const std::vector<uint32_t>& uses, Fusions& f) {
    MatmulLaunch& mm = f.matmul[n];
    if (n == 0 || f.absorbed[n - 1]) return;
    const hetero_node& norm = g.nodes[n - 1];
    if (norm.op != HETERO_OP_RMSNORM || norm.n_inputs != 2 || norm.output != mm.x || mm.bias_mode != 0) return;
    const auto& T = g.tensors;
    const hetero_tensor_desc &x = T[size_t(norm.inputs[0])], &w = T[size_t(norm.inputs[1])], &y = T[size_t(norm.output)];
    if (y.kind != HETERO_TENSOR_INTERNAL || x.dtype != HETERO_DTYPE_F32 || w.dtype != HETERO_DTYPE_F32 || x.shape[0] != 1 ||
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
    if (mm.count != 3 || mm.norm_weight < 0 || mm.bias_mode != 0 || r >= g.nodes.size() || !f.rope_store[r]) return;
    const hetero_node &rq = g.nodes[r], &rk = g.nodes[r + 1], &sv = g.nodes[r + 3];
    const hetero_tensor_desc& q = g.tensors[size_t(rq.inputs[0])];
    // The planar kernel knows ROPE's plain frequencies only.
    if (rq.op != HETERO_OP_ROPE || rq.inputs[0] != mm.y[0] || rk.inputs[0] != mm.y[1] || sv.inputs[0] != mm.y[2] || q.shape[0] != 1 ||
        rq.iparams[0] == HETERO_ROPE_HALVES || q.shape[2] % 2 != 0)
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

Fusions find_fusions(const sdk::Graph& g) {
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
        if (!groupable(g, node)) continue;
        const size_t len = group_matmuls(g, n, residual, uses, f);
        fuse_norm_before(g, n, len + (mm.swiglu ? 1 : 0), uses, f);
    }
    if (enabled)
        for (size_t n = 0; n < nn; ++n)
            if (f.matmul[n].count == 3) attach_rope_store(g, n, uses, f);
    return f;
}

// Prefill attention (attention_tiled) takes nodes with at least this many
// query rows; fewer rows (decode) leave most of its work-group idle, so they
// keep the per-row kernel.
constexpr int64_t kTiledAttentionMinRows = 16;
// Its work-group size: 8 heads x 16 rows for a GQA-8 model with head dim 64.
// Each group streams the whole K/V context, so more rows per group pay
// (H100, 512 rows: 395 / 290 / 231 us per layer with 32 / 64 / 128).
constexpr size_t kTiledAttentionGroup = 128;
// Its head dims: at most two slices per row, whose key/value tiles and partial
// scores take 40 KiB of local memory (16 KiB up to one slice).
constexpr int64_t kTiledAttentionMaxHeadDim = 2 * kAttentionSlice;

// HETERO_CL_ATTN_TILED=0 keeps every attention on the per-row kernel (for
// comparisons).
bool tiled_attention_enabled() {
    static const bool enabled = !sdk::env_equals("HETERO_CL_ATTN_TILED", "0");
    return enabled;
}

// Work-group shape of attention_tiled for one node (see kernels/attention.cl).
struct TiledAttention {
    size_t wg = 0;
    int slices = 1;           // work-items per (row, head), each ATTN_SLICE dims
    int heads_per_group = 1;  // query heads of one KV head per work-group
    int head_chunks = 1;      // work-groups that split one GQA group's heads
    int rows = 1;             // query rows per work-group
    size_t tile_floats = 0, partial_floats = 0;
};

// The tiled kernel's shape for a node, or nothing where the per-row kernel
// should run it: few rows, wide heads, or a device that cannot give it a
// useful work-group or its local memory.
std::optional<TiledAttention> plan_tiled_attention(int64_t N, int64_t H, int64_t Hkv, int64_t Hd, size_t wg,
                                                   uint64_t local_mem) {
    if (!tiled_attention_enabled() || N < kTiledAttentionMinRows || Hd > kTiledAttentionMaxHeadDim || wg < 16) return std::nullopt;
    TiledAttention t;
    t.wg = wg;
    t.slices = int((Hd + kAttentionSlice - 1) / kAttentionSlice);
    const int64_t group = H / Hkv, per_group = int64_t(wg) / t.slices;
    t.head_chunks = int((group + per_group - 1) / per_group);
    t.heads_per_group = int((group + t.head_chunks - 1) / t.head_chunks);
    t.rows = int(per_group / t.heads_per_group);
    t.tile_floats = size_t(kAttentionTileKeys) * size_t(t.slices) * size_t(kAttentionSlice);
    t.partial_floats = t.slices > 1 ? size_t(kAttentionTileKeys) * wg : 0;
    // Room for the kernel's own local variable and the implementation's.
    const uint64_t need = (2 * t.tile_floats + t.partial_floats) * sizeof(float) + 256;
    if (need > local_mem) return std::nullopt;
    return t;
}

}  // namespace

ClExecutable::ClExecutable(uint32_t device_index, ClDevice& device, const Program& program, sdk::Graph graph,
                           const std::vector<sdk::BoundTensor>& constants)
    : sdk::Executable(device_index, std::move(graph)), device_(device), program_(program) {
    const sdk::Graph& g = this->graph();
    const Fusions fusions = find_fusions(g);
    const sdk::MemoryPlan plan = sdk::plan_internal_memory(fusions.planned);
    internal_offset_ = plan.offset;
    cl_int err = CL_SUCCESS;
    const uint64_t arena = std::max<uint64_t>(plan.arena_bytes, sdk::kHostAlign);
    if (arena > device.info().max_alloc && device.info().max_alloc)
        sdk::fail(HETERO_ERR_OUT_OF_MEMORY, "internal tensors need " + std::to_string(arena) + " bytes, more than the device's largest allocation (" +
                                                std::to_string(device.info().max_alloc) + ")");
    arena_ = clCreateBuffer(device.context(), CL_MEM_READ_WRITE, arena, nullptr, &err);
    cl_check(err, "allocating the internal-tensor arena", HETERO_ERR_OUT_OF_MEMORY);
    sdk::log(HETERO_LOG_DEBUG, "opencl",
             device.info().name + ": executable of " + std::to_string(g.nodes.size()) + " nodes, internal tensors " + std::to_string(arena >> 20) + " MiB");
    error_flag_ = clCreateBuffer(device.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof kFlagInit,
                                 const_cast<cl_int*>(kFlagInit), &err);
    if (err != CL_SUCCESS) {
        release();
        cl_check(err, "allocating the error flag", HETERO_ERR_OUT_OF_MEMORY);
    }

    try {
        for (size_t t = 0; t < g.tensors.size(); ++t)
            if (g.tensors[t].kind == HETERO_TENSOR_CONSTANT) check_alignment(g.tensors[t], uint32_t(t), constants[t].offset);
        uint64_t x16_bytes = 0;
        for (size_t n = 0; n < g.nodes.size(); ++n) {
            const MatmulLaunch& mm = fusions.matmul[n];
            if (fusions.absorbed[n] || mm.count == 0) continue;
            const hetero_tensor_desc& x = g.tensors[size_t(mm.x)];
            if (x.shape[0] > 1 && mma_gemm(g.tensors[size_t(mm.w[0])].dtype)) x16_bytes = std::max<uint64_t>(x16_bytes, 2 * uint64_t(sdk::element_count(x)));
        }
        if (x16_bytes > 0) {
            x16_ = clCreateBuffer(device.context(), CL_MEM_READ_WRITE, x16_bytes, nullptr, &err);
            cl_check(err, "allocating the f16 activations of the tensor-core GEMMs", HETERO_ERR_OUT_OF_MEMORY);
        }
        auto ops = std::make_shared<std::vector<uint32_t>>();
        for (const hetero_node& node : g.nodes) ops->push_back(node.op);
        for (size_t n = 0; n < g.nodes.size(); ++n) {
            if (fusions.absorbed[n]) continue;
            if (fusions.matmul[n].count > 0) add_matmul(fusions.matmul[n], constants);
            else if (fusions.rope_store[n]) add_rope_store(uint32_t(n), constants);
            else add_node(uint32_t(n), g.nodes[n], constants);
        }
        node_ops_ = std::move(ops);
        if (profiling_enabled()) {
            std::vector<std::string> labels;
            std::vector<uint64_t> bytes;
            for (const Launch& l : launches_) {
                labels.push_back(l.label);
                bytes.push_back(l.bytes);
            }
            times_ = std::make_unique<sdk::DispatchTimes>("opencl", std::move(labels), std::move(bytes));
        }
    } catch (...) {
        release();
        throw;
    }
}

ClExecutable::~ClExecutable() {
    // Kernels may still be queued; let them finish before their memory goes.
    clFinish(device_.queue());
    if (times_) times_->report();
    release();
}

void ClExecutable::describe(Launch& l, const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs) const {
    if (!profiling_enabled()) return;  // only the profile reads labels
    char name[128] = {};
    clGetKernelInfo(l.kernel, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr);
    l.label = name;
    const auto& T = graph().tensors;
    for (size_t i = 0; i < inputs.size(); ++i) {
        l.label += (i ? ", " : " ") + sdk::shape_label(T[size_t(inputs[i])]);
        l.bytes += sdk::tensor_bytes(T[size_t(inputs[i])]);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
        l.label += (i ? ", " : " -> ") + sdk::shape_label(T[size_t(outputs[i])]);
        l.bytes += sdk::tensor_bytes(T[size_t(outputs[i])]);
    }
}

void ClExecutable::collect_times(const std::vector<cl_event>& events, std::chrono::steady_clock::time_point started) {
    clFinish(device_.queue());
    const double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
    std::vector<double> us(events.size());
    cl_ulong first = ~cl_ulong(0), last = 0;
    for (size_t i = 0; i < events.size(); ++i) {
        cl_ulong a = 0, b = 0;
        clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START, sizeof a, &a, nullptr);
        clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof b, &b, nullptr);
        us[i] = double(b - a) * 1e-3;
        first = std::min(first, a);
        last = std::max(last, b);
        clReleaseEvent(events[i]);
    }
    times_->add_run(us, events.empty() ? 0.0 : double(last - first) * 1e-3, host_us);
}

void ClExecutable::release() {
    for (auto& l : launches_)
        if (l.kernel) clReleaseKernel(l.kernel);
    launches_.clear();
    if (arena_) clReleaseMemObject(arena_);
    if (error_flag_) clReleaseMemObject(error_flag_);
    if (x16_) clReleaseMemObject(x16_);
    arena_ = error_flag_ = x16_ = nullptr;
}

cl_kernel ClExecutable::make_kernel(const char* name) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program_.get(), name, &err);
    cl_check(err, (std::string("clCreateKernel ") + name).c_str(), HETERO_ERR_COMPILE_FAILED);
    return k;
}

std::optional<std::pair<cl_mem, cl_ulong>> ClExecutable::fixed_location(int32_t tensor,
                                                                         const std::vector<sdk::BoundTensor>& constants) const {
    switch (graph().tensors[size_t(tensor)].kind) {
        case HETERO_TENSOR_INTERNAL: return std::pair{arena_, cl_ulong(internal_offset_[size_t(tensor)])};
        case HETERO_TENSOR_CONSTANT: {
            const sdk::BoundTensor& c = constants[size_t(tensor)];
            // Weights another executable had rewritten in the planar layout
            // are readable only by the kernels that take it.
            const ClBuffer& b = cl_buffer(c.buffer);
            const hetero_tensor_desc& t = graph().tensors[size_t(tensor)];
            if (!std::binary_search(planar_reads_.begin(), planar_reads_.end(), tensor) &&
                !b.planar_regions_overlapping(c.offset, sdk::tensor_bytes(t)).empty())
                tensor_error(t, tensor, " is bound over weights this provider keeps in its planar layout, as a different tensor or "
                                        "by an op that reads them in the GGUF layout");
            return std::pair{b.mem(), cl_ulong(b.base() + c.offset)};
        }
        default: return std::nullopt;
    }
}

void ClExecutable::set_tensor(Launch& l, cl_uint arg, int32_t tensor, const std::vector<sdk::BoundTensor>& constants) {
    if (const auto at = fixed_location(tensor, constants)) {
        set_arg(l.kernel, arg, at->first);
        set_arg(l.kernel, arg + 1, at->second);
    } else {
        l.bound.push_back(BoundArg{uint32_t(tensor), arg});
    }
}

void ClExecutable::set_tensor_field(Launch& l, cl_uint arg, void* params, size_t field, int32_t tensor,
                                    const std::vector<sdk::BoundTensor>& constants) {
    cl_ulong offset = 0;  // a bound tensor's is written at each run
    if (const auto at = fixed_location(tensor, constants)) {
        set_arg(l.kernel, arg, at->first);
        offset = at->second;
    } else {
        l.bound.push_back(BoundArg{uint32_t(tensor), arg, int32_t(field)});
    }
    std::memcpy(static_cast<unsigned char*>(params) + field, &offset, sizeof offset);
}

void ClExecutable::add_planar_matvec(const MatmulLaunch& mm, const std::vector<std::shared_ptr<const PlanarWeights>>& planar,
                                     const std::string& name, const std::vector<sdk::BoundTensor>& constants) {
    const auto& T = graph().tensors;
    const int64_t K = sdk::row_width(T[size_t(mm.x)]);
    const bool rope = mm.rope_node >= 0;
    const hetero_node* rope_nodes = rope ? &graph().nodes[size_t(mm.rope_node)] : nullptr;  // ROPE q, ROPE k, STORE k, STORE v
    Launch l;
    l.kernel = make_kernel(name.c_str());
    KernelGuard guard{l};
    PlanarParams p{};
    set_tensor_field(l, kPqX, &p, offsetof(PlanarParams, xoff), mm.x, constants);
    std::vector<int32_t> inputs{mm.x}, outputs;
    int64_t tiles = 0;
    cl_int* M[3] = {&p.M0, &p.M1, &p.M2};
    for (int i = 0; i < 3; ++i) {
        if (i < mm.count && planar.empty())
            set_tensor_field(l, pq_w(i), &p, kPqWField[i], mm.w[i], constants);  // read in place
        else
            set_arg(l.kernel, pq_w(i), i < mm.count ? planar[size_t(i)]->mem : error_flag_);  // the planes start at 0
        if (i < mm.count) inputs.push_back(mm.w[i]);
        // Fused rope_store: rotated q, then the k and v caches.
        const int32_t y = rope ? (i == 0 ? rope_nodes[0].output : rope_nodes[i + 1].output) : i < mm.count ? mm.y[i] : -1;
        if (y >= 0) {
            set_tensor_field(l, pq_y(i), &p, kPqYField[i], y, constants);
            outputs.push_back(y);
        } else {
            set_arg(l.kernel, pq_y(i), error_flag_);  // never touched
        }
        *M[i] = i < mm.count ? cl_int(T[size_t(mm.w[i])].shape[0]) : 0;
        tiles += (*M[i] + kPlanarRows - 1) / kPlanarRows;
    }
    if (mm.swiglu) tiles = (p.M0 + kPlanarRows - 1) / kPlanarRows;
    if (mm.bias >= 0) {
        set_tensor_field(l, kPqBias, &p, offsetof(PlanarParams, boff), mm.bias, constants);
        inputs.push_back(mm.bias);
    } else {
        set_arg(l.kernel, kPqBias, error_flag_);
    }
    p.has_bias = mm.bias_mode;
    p.K = cl_int(K);
    const size_t wg = planar_group_size(size_t(tiles), program_.group_size(name.c_str(), 256), device_.info().compute_units);
    set_local(l.kernel, kPqLocal, planar_local_floats(K, wg));
    if (mm.norm_weight >= 0) {
        set_tensor_field(l, kPqNorm, &p, offsetof(PlanarParams, nwoff), mm.norm_weight, constants);
        inputs.push_back(mm.norm_weight);
        p.eps = mm.norm_eps;
    }
    if (rope) {
        const hetero_tensor_desc &q = T[size_t(rope_nodes[0].inputs[0])], &kc = T[size_t(rope_nodes[2].output)];
        set_tensor_field(l, kPqPos, &p, offsetof(PlanarParams, poff), rope_nodes[0].inputs[1], constants);
        inputs.push_back(rope_nodes[0].inputs[1]);
        p.Hd = cl_int(q.shape[2]);
        p.rot = cl_int(sdk::rope_dims(rope_nodes[0], q.shape[2]));
        p.base = rope_nodes[0].fparams[0];
        p.C = cl_int(kc.shape[0]);
        p.cache_f16 = kc.dtype == HETERO_DTYPE_F16;
        set_arg(l.kernel, kPqErr, error_flag_);
        p.node = mm.rope_node + 2;
    }
    l.params.resize(sizeof p);
    std::memcpy(l.params.data(), &p, sizeof p);
    l.params_arg = kPqParams;
    set_arg(l.kernel, kPqParams, p);
    // A tile of kPlanarRows rows (gate and up rows each with SwiGLU) per
    // kPlanarLanes work-items.
    const size_t tiles_per_group = wg / kPlanarLanes;
    l.dims = 1;
    l.local[0] = wg;
    l.global[0] = std::max<size_t>(1, (size_t(tiles) + tiles_per_group - 1) / tiles_per_group) * wg;
    describe(l, inputs, outputs);
    guard.armed = false;
    launches_.push_back(std::move(l));
}

void ClExecutable::add_matmul(const MatmulLaunch& mm, const std::vector<sdk::BoundTensor>& constants) {
    const auto& T = graph().tensors;
    const hetero_tensor_desc& x = T[size_t(mm.x)];
    const uint32_t wtype = T[size_t(mm.w[0])].dtype;
    const int64_t N = x.shape[0], K = sdk::row_width(x);
    const bool matvec = N == 1;
    const bool norm = mm.norm_weight >= 0;
    // A norm-fused launch normalises x once per work-group: 8 rows a group
    // amortise that better than 4 (H100, Q4_0: Q/K/V 21.2 -> 17.5 us).
    const size_t wg_cap = norm ? 256 : 128;
    // Q4_0/Q8_0 weights rewritten in the planar layout are read so by every
    // kernel; others may have a planar copy for decode.
    const bool planar_layout = planar_constants(mm, constants);
    const std::vector<std::shared_ptr<const PlanarWeights>> planar = matvec && !planar_layout ? planar_copies(mm, K, wg_cap, constants)
                                                                                              : std::vector<std::shared_ptr<const PlanarWeights>>{};
    const bool in_place = matvec && planar.empty() && (planar_layout || int8_kquant_matvec(mm, K, wg_cap, constants));
    std::string name = matvec ? matvec_kernel(wtype) : gemm_kernel(wtype, planar_layout);
    // The rope_store group runs inside the planar kernel, or after the launch.
    const bool rope = mm.rope_node >= 0 && (!planar.empty() || in_place);
    if (fused_weight_type(wtype) && matvec)  // matvec_[swiglu_][norm_][planar_][rope_]<type>
        name = quant_matvec_kernel(wtype, mm.swiglu, norm, !planar.empty() || in_place, rope);
    if (!planar.empty() || in_place) return add_planar_matvec(mm, planar, name, constants);
    // Quantized prefill GEMMs run on tensor cores where the program has them,
    // reading x as f16 from x16_.
    const bool mma = !matvec && mma_gemm(wtype);
    // Q6_K on tensor cores reads the 16-byte aligned copy the decode kernels
    // read (made here if prefill comes first), where there is room for one.
    const std::vector<std::shared_ptr<const PlanarWeights>> aligned =
        mma && wtype == HETERO_DTYPE_Q6_K && program_.group_size("gemm_mma_aligned_q6_k", mma_tiling().group()) >= mma_tiling().group()
            ? weight_copies(mm, K, constants)
            : std::vector<std::shared_ptr<const PlanarWeights>>{};
    if (mma) {
        name = aligned.empty() ? mma_gemm_kernel(wtype, planar_layout) : "gemm_mma_aligned_q6_k";
        add_x16_stage(mm, constants);
    }
    Launch l;
    l.kernel = make_kernel(name.c_str());
    KernelGuard guard{l};
    auto unused = [&](cl_uint arg) {  // any valid buffer; the kernel never touches it
        set_arg(l.kernel, arg, error_flag_);
        set_arg(l.kernel, arg + 1, cl_ulong(0));
    };
    if (mma) {
        set_arg(l.kernel, 0, x16_);
        set_arg(l.kernel, 1, cl_ulong(0));
    } else {
        set_tensor(l, 0, mm.x, constants);
    }
    std::vector<int32_t> inputs{mm.x}, outputs;
    int64_t rows = 0;
    for (int i = 0; i < 3; ++i) {
        const cl_uint a = cl_uint(2 + 5 * i);
        const int64_t M = i < mm.count ? T[size_t(mm.w[i])].shape[0] : 0;
        if (i < mm.count) {
            if (aligned.empty()) {
                set_tensor(l, a, mm.w[i], constants);
            } else {
                set_arg(l.kernel, a, aligned[size_t(i)]->mem);
                set_arg(l.kernel, a + 1, cl_ulong(0));
            }
            inputs.push_back(mm.w[i]);
        } else {
            unused(a);
        }
        const int32_t y = i < mm.count ? mm.y[i] : -1;
        if (y >= 0) {
            set_tensor(l, a + 2, y, constants);
            outputs.push_back(y);
        } else {
            unused(a + 2);
        }
        set_arg(l.kernel, a + 4, cl_int(M));
        rows += M;
    }
    if (mm.bias >= 0) {
        set_tensor(l, 17, mm.bias, constants);
        inputs.push_back(mm.bias);
    } else {
        unused(17);
    }
    set_arg(l.kernel, 19, cl_int(mm.bias_mode));
    if (matvec) {
        size_t wg = program_.group_size(name.c_str(), wg_cap);
        const size_t lanes = std::min<size_t>(32, wg);
        // Work items per group: a row (rows_per_group of them).
        size_t items = size_t(rows), rows_per_group = wg / lanes;
        if (mm.swiglu) items = size_t(T[size_t(mm.w[0])].shape[0]);
        set_arg(l.kernel, 20, cl_int(K));
        set_arg(l.kernel, 21, cl_int(lanes));
        set_local(l.kernel, 22, wg);
        if (norm) {
            set_tensor(l, 23, mm.norm_weight, constants);
            inputs.push_back(mm.norm_weight);
            set_arg(l.kernel, 25, cl_float(mm.norm_eps));
            set_local(l.kernel, 26, size_t(K));
        }
        l.dims = 1;
        l.local[0] = wg;
        l.global[0] = std::max<size_t>(1, (items + rows_per_group - 1) / rows_per_group) * wg;
    } else {
        const GemmConfig& gc = program_.gemm();
        const size_t tile_m = mma ? size_t(mma_tiling().tile_m()) : size_t(gc.bm()), tile_n = mma ? size_t(mma_tiling().tile_n()) : size_t(gc.bn());
        const size_t group = mma ? mma_tiling().group() : size_t(gc.wg());
        size_t gemm_tiles = 0;
        for (int i = 0; i < mm.count; ++i) gemm_tiles += (size_t(T[size_t(mm.w[i])].shape[0]) + tile_m - 1) / tile_m;
        set_arg(l.kernel, 20, cl_int(N));
        set_arg(l.kernel, 21, cl_int(K));
        l.dims = 2;
        l.local[0] = group;
        l.global[0] = std::max<size_t>(1, gemm_tiles) * group;
        l.global[1] = (size_t(N) + tile_n - 1) / tile_n;
    }
    describe(l, inputs, outputs);
    guard.armed = false;
    launches_.push_back(std::move(l));
    if (mm.rope_node >= 0) add_rope_store(uint32_t(mm.rope_node), constants);
}

bool ClExecutable::planar_x_fits(int64_t K) const {
    return planar_weights_enabled() && planar_local_floats(K, 256) * sizeof(float) <= device_.info().local_mem;
}

bool ClExecutable::planar_kernel_fits(const MatmulLaunch& mm, uint32_t dtype, int64_t K, size_t wg_cap) const {
    return planar_x_fits(K) &&
           program_.group_size(quant_matvec_kernel(dtype, mm.swiglu, mm.norm_weight >= 0, true).c_str(), wg_cap) >= kPlanarLanes;
}

bool ClExecutable::planar_layout_fits(uint32_t dtype, int64_t K) const {
    if (!planar_x_fits(K)) return false;
    // Every launch shape of the decode kernels, so that any use of the
    // weights can take the layout.
    for (const bool swiglu : {false, true})
        for (const bool norm : {false, true})
            for (const bool rope : {false, true})
                if (!(rope && (swiglu || !norm)) &&
                    program_.group_size(quant_matvec_kernel(dtype, swiglu, norm, true, rope).c_str(), kPlanarLanes) < kPlanarLanes)
                    return false;
    return true;
}

bool ClExecutable::planar_eligible(int32_t w, const std::vector<sdk::BoundTensor>& constants) const {
    const hetero_tensor_desc& t = graph().tensors[size_t(w)];
    if (t.kind != HETERO_TENSOR_CONSTANT || (t.dtype != HETERO_DTYPE_Q4_0 && t.dtype != HETERO_DTYPE_Q8_0)) return false;
    const sdk::BoundTensor& c = constants[size_t(w)];
    // Device memory only (imported host pages may be the model file's,
    // read-only), and 16-byte aligned for the kernels' vector loads.
    return !cl_buffer(c.buffer).host() && c.offset % 16 == 0 && planar_layout_fits(t.dtype, sdk::row_width(t));
}

bool ClExecutable::mma_gemm(uint32_t wtype) const {
    if (!program_.mma() || !mma_weight_type(wtype)) return false;
    const size_t group = mma_tiling().group();
    return program_.group_size(mma_gemm_kernel(wtype, false).c_str(), group) >= group &&
           (!sdk::is_block_dtype(wtype) || program_.group_size(mma_gemm_kernel(wtype, true).c_str(), group) >= group);
}

void ClExecutable::add_x16_stage(const MatmulLaunch& mm, const std::vector<sdk::BoundTensor>& constants) {
    if (!x16_) sdk::fail(HETERO_ERR_INTERNAL, "tensor-core GEMM without its f16 activation buffer");
    const uint64_t n = uint64_t(sdk::element_count(graph().tensors[size_t(mm.x)]));  // a multiple of 32: K is
    Launch l;
    l.kernel = make_kernel("stage_x_f16");
    KernelGuard guard{l};
    set_tensor(l, 0, mm.x, constants);
    set_arg(l.kernel, 2, x16_);
    set_arg(l.kernel, 3, cl_ulong(n / 4));
    l.dims = 1;
    l.local[0] = 64;
    l.global[0] = size_t((n / 4 + 63) / 64 * 64);
    describe(l, {mm.x}, {});
    guard.armed = false;
    launches_.push_back(std::move(l));
}

bool ClExecutable::planar_constants(const int32_t* ws, int count, const std::vector<sdk::BoundTensor>& constants) {
    for (int i = 0; i < count; ++i)
        if (!planar_eligible(ws[i], constants)) return false;
    const auto& T = graph().tensors;
    for (int i = 0; i < count; ++i) {
        const hetero_tensor_desc& t = T[size_t(ws[i])];
        const sdk::BoundTensor& c = constants[size_t(ws[i])];
        const int64_t K = sdk::row_width(t), M = int64_t(sdk::element_count(t) / uint64_t(K));
        if (!rewrite_planar(*static_cast<ClBuffer*>(c.buffer), device_.context(), device_.queue(), program_.get(), c.offset, t.dtype, M, K))
            tensor_error(t, ws[i], " is bound over part of weights this provider rewrote in its planar layout");
        planar_reads_.insert(std::upper_bound(planar_reads_.begin(), planar_reads_.end(), ws[i]), ws[i]);
    }
    return count > 0;
}

bool ClExecutable::planar_constants(const MatmulLaunch& mm, const std::vector<sdk::BoundTensor>& constants) {
    return planar_constants(mm.w, mm.count, constants);
}

bool ClExecutable::int8_kquant_matvec(const MatmulLaunch& mm, int64_t K, size_t wg_cap, const std::vector<sdk::BoundTensor>& constants) {
    const auto& T = graph().tensors;
    const uint32_t dtype = T[size_t(mm.w[0])].dtype;
    if ((dtype != HETERO_DTYPE_Q4_K && dtype != HETERO_DTYPE_Q5_K) || !planar_kernel_fits(mm, dtype, K, wg_cap)) return false;
    // The kernels load whole 16-byte block headers: constants starting on a
    // 16-byte boundary only (super-blocks are 144 or 176 bytes, so every one
    // then does).
    for (int i = 0; i < mm.count; ++i)
        if (T[size_t(mm.w[i])].kind != HETERO_TENSOR_CONSTANT || constants[size_t(mm.w[i])].offset % 16 != 0) return false;
    return true;
}

std::vector<std::shared_ptr<const PlanarWeights>> ClExecutable::planar_copies(const MatmulLaunch& mm, int64_t K, size_t wg_cap,
                                                                               const std::vector<sdk::BoundTensor>& constants) {
    const auto& T = graph().tensors;
    const uint32_t dtype = T[size_t(mm.w[0])].dtype;
    if ((dtype != HETERO_DTYPE_Q4_0 && dtype != HETERO_DTYPE_Q8_0 && dtype != HETERO_DTYPE_Q6_K) || !planar_kernel_fits(mm, dtype, K, wg_cap))
        return {};
    return weight_copies(mm, K, constants);
}

std::vector<std::shared_ptr<const PlanarWeights>> ClExecutable::weight_copies(const MatmulLaunch& mm, int64_t K,
                                                                               const std::vector<sdk::BoundTensor>& constants) {
    const auto& T = graph().tensors;
    const uint32_t dtype = T[size_t(mm.w[0])].dtype;
    for (int i = 0; i < mm.count; ++i)
        if (T[size_t(mm.w[i])].kind != HETERO_TENSOR_CONSTANT) return {};
    std::vector<std::shared_ptr<const PlanarWeights>> copies;
    for (int i = 0; i < mm.count; ++i) {
        const sdk::BoundTensor& c = constants[size_t(mm.w[i])];
        copies.push_back(device_.planar_weights().get(device_.context(), device_.queue(), program_.get(), device_.info().max_alloc,
                                                      device_.info().global_mem, cl_buffer(c.buffer).mem(), cl_buffer(c.buffer).base() + c.offset, dtype, T[size_t(mm.w[i])].shape[0], K));
        if (!copies.back()) return {};
    }
    planar_.insert(planar_.end(), copies.begin(), copies.end());
    return copies;
}

void ClExecutable::add_rope_store(uint32_t n, const std::vector<sdk::BoundTensor>& constants) {
    const auto& G = graph();
    const hetero_node &rq = G.nodes[n], &rk = G.nodes[n + 1], &sk = G.nodes[n + 2], &sv = G.nodes[n + 3];
    const hetero_tensor_desc &q = G.tensors[size_t(rq.inputs[0])], &k = G.tensors[size_t(rk.inputs[0])], &kc = G.tensors[size_t(sk.output)];
    const int64_t N = q.shape[0], Hq = q.shape[1], Hk = k.shape[1], Hd = q.shape[2];
    const int64_t rot = sdk::rope_dims(rq, Hd);
    Launch l;
    l.kernel = make_kernel("rope_store");
    KernelGuard guard{l};
    set_tensor(l, 0, rq.inputs[0], constants);
    set_tensor(l, 2, rq.inputs[1], constants);
    set_tensor(l, 4, rq.output, constants);
    set_tensor(l, 6, rk.inputs[0], constants);
    set_tensor(l, 8, sk.output, constants);
    set_tensor(l, 10, sv.inputs[0], constants);
    set_tensor(l, 12, sv.output, constants);
    set_arg(l.kernel, 14, cl_int(Hq));
    set_arg(l.kernel, 15, cl_int(Hk));
    set_arg(l.kernel, 16, cl_int(Hd));
    set_arg(l.kernel, 17, cl_int(rot));
    set_arg(l.kernel, 18, cl_int(rq.iparams[0] == HETERO_ROPE_HALVES));
    set_arg(l.kernel, 19, cl_float(rq.fparams[0]));
    set_arg(l.kernel, 20, cl_int(kc.shape[0]));
    set_arg(l.kernel, 21, cl_int(kc.dtype == HETERO_DTYPE_F16));
    set_arg(l.kernel, 22, error_flag_);
    set_arg(l.kernel, 23, cl_int(n + 2));
    // ROPE_SCALED's parameters; positions stand in for absent factors (never read).
    const bool scaled = rq.op == HETERO_OP_ROPE_SCALED, factors = scaled && rq.n_inputs > 2;
    set_tensor(l, 24, rq.inputs[factors ? 2 : 1], constants);
    set_arg(l.kernel, 26, cl_int(scaled));
    set_arg(l.kernel, 27, cl_int(factors));
    set_arg(l.kernel, 28, cl_float(scaled && rq.fparams[1] != 0.f ? rq.fparams[1] : 1.f));
    const size_t items = size_t(Hd - rot / 2);
    const size_t wg = std::min(program_.group_size("rope_store", 64), round_up(items, 8));
    l.dims = 3;
    l.local[0] = wg;
    l.global[0] = round_up(items, wg);
    l.global[1] = size_t(Hq + 2 * Hk);
    l.global[2] = size_t(N);
    std::vector<int32_t> reads = {rq.inputs[0], rk.inputs[0], sv.inputs[0], rq.inputs[1]};
    if (factors) reads.push_back(rq.inputs[2]);
    describe(l, reads, {rq.output, sk.output, sv.output});
    guard.armed = false;
    launches_.push_back(std::move(l));
}

void ClExecutable::add_node(uint32_t index, const hetero_node& node, const std::vector<sdk::BoundTensor>& constants) {
    const auto& T = graph().tensors;
    auto in = [&](uint32_t i) -> const hetero_tensor_desc& { return T[size_t(node.inputs[i])]; };
    const hetero_tensor_desc& out = T[size_t(node.output)];
    Launch l;
    // The kernel is owned by `l` from here on; a throw below releases it.
    KernelGuard guard{l};
    auto tensor = [&](cl_uint arg, int32_t id) { set_tensor(l, arg, id, constants); };
    auto grid1 = [&](size_t items, size_t wg) {
        l.dims = 1;
        l.local[0] = wg;
        l.global[0] = round_up(std::max<size_t>(items, 1), wg);
    };
    const cl_int node_id = cl_int(index);

    switch (node.op) {
        case HETERO_OP_EMBEDDING: {
            l.kernel = make_kernel("embedding");
            const cl_int V = cl_int(in(0).shape[0]), D = cl_int(in(0).shape[1]);
            const bool planar = planar_constants(&node.inputs[0], 1, constants);
            set_arg(l.kernel, 11, cl_ulong(planar ? sdk::element_count(in(0)) / sdk::kQBlock : 0));
            tensor(0, node.inputs[0]);
            set_arg(l.kernel, 2, cl_int(in(0).dtype));
            tensor(3, node.inputs[1]);
            tensor(5, node.output);
            set_arg(l.kernel, 7, D);
            set_arg(l.kernel, 8, V);
            set_arg(l.kernel, 9, error_flag_);
            set_arg(l.kernel, 10, node_id);
            const size_t wg = program_.group_size("embedding", 64);
            l.dims = 2;
            l.local[0] = wg;
            l.global[0] = round_up(size_t(D), wg);
            l.global[1] = size_t(in(1).shape[0]);
            break;
        }
        case HETERO_OP_RMSNORM: {
            l.kernel = make_kernel("rmsnorm");
            const int64_t D = sdk::inner_dim(in(0)), rows = sdk::element_count(in(0)) / D;
            tensor(0, node.inputs[0]);
            tensor(2, node.inputs[1]);
            tensor(4, node.output);
            set_arg(l.kernel, 6, cl_int(D));
            set_arg(l.kernel, 7, cl_float(node.fparams[0]));
            const size_t wg = program_.group_size("rmsnorm", 256);
            set_local(l.kernel, 8, wg);
            grid1(size_t(rows) * wg, wg);
            break;
        }
        case HETERO_OP_ROPE: {
            l.kernel = make_kernel("rope");
            const int64_t N = in(0).shape[0], H = in(0).shape[1], Hd = in(0).shape[2];
            const int64_t rot = sdk::rope_dims(node, Hd);
            tensor(0, node.inputs[0]);
            tensor(2, node.inputs[1]);
            tensor(4, node.output);
            set_arg(l.kernel, 6, cl_int(H));
            set_arg(l.kernel, 7, cl_int(Hd));
            set_arg(l.kernel, 8, cl_int(rot));
            set_arg(l.kernel, 9, cl_int(node.iparams[0] == HETERO_ROPE_HALVES));
            set_arg(l.kernel, 10, cl_float(node.fparams[0]));
            const size_t items = size_t(Hd - rot / 2);
            const size_t wg = std::min(program_.group_size("rope", 64), round_up(items, 8));
            l.dims = 3;
            l.local[0] = wg;
            l.global[0] = round_up(items, wg);
            l.global[1] = size_t(H);
            l.global[2] = size_t(N);
            break;
        }
        case HETERO_OP_ROPE_SCALED: {
            l.kernel = make_kernel("rope_scaled");
            const int64_t N = in(0).shape[0], H = in(0).shape[1], Hd = in(0).shape[2];
            const int64_t rot = sdk::rope_dims(node, Hd);
            const bool factors = node.n_inputs > 2;
            tensor(0, node.inputs[0]);
            tensor(2, node.inputs[1]);
            tensor(4, node.output);
            set_arg(l.kernel, 6, cl_int(H));
            set_arg(l.kernel, 7, cl_int(Hd));
            set_arg(l.kernel, 8, cl_int(rot));
            set_arg(l.kernel, 9, cl_int(node.iparams[0] == HETERO_ROPE_HALVES));
            set_arg(l.kernel, 10, cl_float(node.fparams[0]));
            // Without factors the kernel never reads arguments 11-12: positions stand in.
            tensor(11, node.inputs[factors ? 2 : 1]);
            set_arg(l.kernel, 13, cl_int(factors));
            set_arg(l.kernel, 14, cl_float(node.fparams[1] != 0.f ? node.fparams[1] : 1.f));
            const size_t items = size_t(Hd - rot / 2);
            const size_t wg = std::min(program_.group_size("rope_scaled", 64), round_up(items, 8));
            l.dims = 3;
            l.local[0] = wg;
            l.global[0] = round_up(items, wg);
            l.global[1] = size_t(H);
            l.global[2] = size_t(N);
            break;
        }
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT: {
            const auto &q = in(0), &k = in(1);
            // ATTENTION_EXT's window and soft-cap, the last two arguments of every variant.
            const bool ext = node.op == HETERO_OP_ATTENTION_EXT;
            const cl_int window = ext ? cl_int(std::clamp<int64_t>(node.iparams[0], 0, INT_MAX)) : 0;
            const cl_float cap = ext && node.fparams[1] > 0.f ? node.fparams[1] : 0.f;
            const int64_t N = q.shape[0], H = q.shape[1], Hd = q.shape[2], C = k.shape[0], Hkv = k.shape[1];
            // Both kernels take q, k, v, positions, out, then these scalars
            // from argument `first` on (the tiled one has N before them).
            auto common_args = [&](cl_uint first) {
                tensor(0, node.inputs[0]);
                tensor(2, node.inputs[1]);
                tensor(4, node.inputs[2]);
                tensor(6, node.inputs[3]);
                tensor(8, node.output);
                set_arg(l.kernel, first, cl_int(H));
                set_arg(l.kernel, first + 1, cl_int(Hkv));
                set_arg(l.kernel, first + 2, cl_int(Hd));
                set_arg(l.kernel, first + 3, cl_int(C));
                set_arg(l.kernel, first + 4, cl_float(node.fparams[0]));
                set_arg(l.kernel, first + 5, cl_int(k.dtype == HETERO_DTYPE_F16));
                set_arg(l.kernel, first + 6, error_flag_);
                set_arg(l.kernel, first + 7, node_id);
            };
            // Tensor cores round q and p to f16, which the error bound allows
            // for f16 caches only.
            const MmaAttentionKernel* mma_kernel = mma_attention_kernel(Hd);
            if (program_.mma() && tiled_attention_enabled() && k.dtype == HETERO_DTYPE_F16 && N >= kTiledAttentionMinRows &&
                mma_kernel && program_.group_size(mma_kernel->name, mma_kernel->group()) >= mma_kernel->group() &&
                device_.info().local_mem >= mma_kernel->local_bytes) {
                l.kernel = make_kernel(mma_kernel->name);
                set_arg(l.kernel, 10, cl_int(N));
                common_args(11);
                set_arg(l.kernel, 19, window);
                set_arg(l.kernel, 20, cap);
                l.dims = 2;
                l.local[0] = mma_kernel->group();
                l.global[0] = mma_kernel->group() * size_t(H);
                l.global[1] = (size_t(N) + size_t(mma_kernel->rows) - 1) / size_t(mma_kernel->rows);
                break;
            }
            if (const auto t = plan_tiled_attention(N, H, Hkv, Hd, program_.group_size("attention_tiled", kTiledAttentionGroup),
                                                    device_.info().local_mem)) {
                l.kernel = make_kernel("attention_tiled");
                set_arg(l.kernel, 10, cl_int(N));
                common_args(11);
                set_arg(l.kernel, 19, cl_int(t->heads_per_group));
                set_arg(l.kernel, 20, cl_int(t->slices));
                set_local(l.kernel, 21, t->tile_floats);
                set_local(l.kernel, 22, t->tile_floats);
                set_local(l.kernel, 23, std::max<size_t>(t->partial_floats, 1));
                set_arg(l.kernel, 24, window);
                set_arg(l.kernel, 25, cap);
                l.dims = 2;
                l.local[0] = t->wg;
                l.global[0] = t->wg * size_t(Hkv) * size_t(t->head_chunks);
                l.global[1] = (size_t(N) + size_t(t->rows) - 1) / size_t(t->rows);
                break;
            }
            l.kernel = make_kernel("attention");
            const size_t wg = program_.group_size("attention", 256);
            if (size_t(Hd) > 8 * wg)
                sdk::fail(HETERO_ERR_UNSUPPORTED, "attention: head dim " + std::to_string(Hd) + " exceeds " + std::to_string(8 * wg) + " on this device");
            common_args(10);
            set_local(l.kernel, 18, wg);
            set_local(l.kernel, 19, size_t(Hd));
            set_arg(l.kernel, 20, window);
            set_arg(l.kernel, 21, cap);
            l.dims = 2;
            l.local[0] = wg;
            l.global[0] = wg * size_t(H);
            l.global[1] = size_t(N);
            break;
        }
        case HETERO_OP_SWIGLU: {
            l.kernel = make_kernel("swiglu");
            const auto n = cl_ulong(sdk::element_count(out));
            tensor(0, node.inputs[0]);
            tensor(2, node.inputs[1]);
            tensor(4, node.output);
            set_arg(l.kernel, 6, n);
            grid1(size_t(n), program_.group_size("swiglu", 256));
            break;
        }
        case HETERO_OP_GEGLU: {
            l.kernel = make_kernel("geglu");
            const auto n = cl_ulong(sdk::element_count(out));
            tensor(0, node.inputs[0]);
            tensor(2, node.inputs[1]);
            tensor(4, node.output);
            set_arg(l.kernel, 6, n);
            grid1(size_t(n), program_.group_size("geglu", 256));
            break;
        }
        case HETERO_OP_SOFTCAP: {
            l.kernel = make_kernel("softcap");
            const auto n = cl_ulong(sdk::element_count(out));
            tensor(0, node.inputs[0]);
            tensor(2, node.output);
            set_arg(l.kernel, 4, n);
            set_arg(l.kernel, 5, cl_float(node.fparams[0]));
            grid1(size_t(n), program_.group_size("softcap", 256));
            break;
        }
        case HETERO_OP_ADD:
        case HETERO_OP_MUL: {
            l.kernel = make_kernel("binary");
            const auto n = cl_ulong(sdk::element_count(out));
            const bool same = sdk::element_count(in(1)) == sdk::element_count(in(0));
            tensor(0, node.inputs[0]);
            tensor(2, node.inputs[1]);
            tensor(4, node.output);
            set_arg(l.kernel, 6, n);
            set_arg(l.kernel, 7, cl_int(same ? 0 : in(1).shape[0]));
            set_arg(l.kernel, 8, cl_int(node.op == HETERO_OP_MUL));
            grid1(size_t(n), program_.group_size("binary", 256));
            break;
        }
        case HETERO_OP_SOFTMAX: {
            l.kernel = make_kernel("softmax");
            const int64_t D = sdk::inner_dim(in(0)), rows = sdk::element_count(in(0)) / D;
            tensor(0, node.inputs[0]);
            tensor(2, node.output);
            set_arg(l.kernel, 4, cl_int(D));
            set_arg(l.kernel, 5, cl_float(node.fparams[0] == 0.f ? 1.f : node.fparams[0]));
            const size_t wg = program_.group_size("softmax", 256);
            set_local(l.kernel, 6, wg);
            grid1(size_t(rows) * wg, wg);
            break;
        }
        case HETERO_OP_CONVERT: {
            const uint32_t src = in(0).dtype, dst = out.dtype;
            const auto n = cl_ulong(sdk::element_count(out));
            const char* name = src != HETERO_DTYPE_F32          ? "convert_to_f32"
                               : dst == HETERO_DTYPE_Q8_0 ? "quantize_q8_0"
                               : dst == HETERO_DTYPE_Q4_0 ? "quantize_q4_0"
                                                          : "convert_from_f32";
            l.kernel = make_kernel(name);
            const bool planar = src != HETERO_DTYPE_F32 && planar_constants(&node.inputs[0], 1, constants);
            tensor(0, node.inputs[0]);
            if (sdk::is_block_dtype(dst)) {
                tensor(2, node.output);
                set_arg(l.kernel, 4, cl_ulong(n / sdk::kQBlock));
                grid1(size_t(n / sdk::kQBlock), program_.group_size(name, 64));
            } else {
                set_arg(l.kernel, 2, cl_int(src != HETERO_DTYPE_F32 ? src : dst));
                tensor(3, node.output);
                set_arg(l.kernel, 5, n);
                if (src != HETERO_DTYPE_F32) set_arg(l.kernel, 6, cl_ulong(planar ? n / sdk::kQBlock : 0));
                grid1(size_t(n), program_.group_size(name, 256));
            }
            break;
        }
        case HETERO_OP_STORE_ROWS: {
            l.kernel = make_kernel("store_rows");
            const int64_t N = in(0).shape[0], D = sdk::row_width(in(0)), C = out.shape[0];
            tensor(0, node.inputs[0]);
            tensor(2, node.inputs[1]);
            tensor(4, node.output);
            set_arg(l.kernel, 6, cl_int(D));
            set_arg(l.kernel, 7, cl_int(C));
            set_arg(l.kernel, 8, cl_int(out.dtype == HETERO_DTYPE_F16));
            set_arg(l.kernel, 9, error_flag_);
            set_arg(l.kernel, 10, node_id);
            const size_t wg = program_.group_size("store_rows", 64);
            l.dims = 2;
            l.local[0] = wg;
            l.global[0] = round_up(size_t(D), wg);
            l.global[1] = size_t(N);
            break;
        }
        default: sdk::fail(HETERO_ERR_UNSUPPORTED, std::string("op ") + sdk::op_name(node.op) + " is not provided");
    }
    describe(l, std::vector<int32_t>(node.inputs, node.inputs + node.n_inputs), {node.output});
    guard.armed = false;
    launches_.push_back(std::move(l));
}

std::unique_ptr<sdk::Event> ClExecutable::run(const std::vector<sdk::BoundTensor>& bound, bool want_event) {
    const auto& T = graph().tensors;
    for (size_t t = 0; t < T.size(); ++t)
        if (T[t].kind == HETERO_TENSOR_BOUND) check_alignment(T[t], uint32_t(t), bound[t].offset);
    cl_command_queue q = device_.queue();
    std::vector<cl_event> timed;
    const auto started = std::chrono::steady_clock::now();
    for (size_t li = 0; li < launches_.size(); ++li) {
        Launch& l = launches_[li];
        // Only bound tensors change between executions; skip unchanged args.
        bool params_changed = false;
        for (BoundArg& a : l.bound) {
            const sdk::BoundTensor& b = bound[a.tensor];
            const cl_mem mem = cl_buffer(b.buffer).mem();
            if (mem != a.last_mem) {
                set_arg(l.kernel, a.arg, mem);
                a.last_mem = mem;
            }
            if (const cl_ulong offset = cl_buffer(b.buffer).base() + b.offset; offset != a.last_offset) {
                if (a.param_offset >= 0) {
                    std::memcpy(l.params.data() + a.param_offset, &offset, sizeof offset);
                    params_changed = true;
                } else {
                    set_arg(l.kernel, a.arg + 1, offset);
                }
                a.last_offset = offset;
            }
        }
        if (params_changed)
            cl_check(clSetKernelArg(l.kernel, l.params_arg, l.params.size(), l.params.data()), "clSetKernelArg (params)");
        cl_event* ev = nullptr;
        if (times_) ev = &timed.emplace_back();
        const cl_int err = clEnqueueNDRangeKernel(q, l.kernel, l.dims, nullptr, l.global, l.local, 0, nullptr, ev);
        if (err != CL_SUCCESS) {
            for (BoundArg& a : l.bound) a.last_mem = nullptr;  // re-set everything next time
            for (cl_event e : timed)
                if (e) clReleaseEvent(e);
            cl_check(err, "clEnqueueNDRangeKernel", err == CL_OUT_OF_RESOURCES ? HETERO_ERR_DEVICE_LOST : HETERO_ERR_INTERNAL);
        }
        // Hand the first kernel to the device at once, and a few more soon
        // after, so it computes while the host enqueues the rest (~5 us per
        // enqueue on NVIDIA) instead of waiting for the final flush.
        if (li == 0 || li == 8) clFlush(q);
    }
    if (times_) {
        collect_times(timed, started);
    }
    auto ev = std::make_unique<ClEvent>(q, error_flag_, node_ops_);
    cl_event done = nullptr;
    cl_check(clEnqueueReadBuffer(q, error_flag_, CL_FALSE, 0, sizeof kFlagInit, ev->flag_storage(), 0, nullptr, &done),
             "reading the error flag", HETERO_ERR_DEVICE_LOST);
    ev->set_event(done);
    clFlush(q);
    if (want_event) return ev;
    ev->wait();
    return nullptr;
}

ClEvent::ClEvent(cl_command_queue queue, cl_mem flag, std::shared_ptr<const std::vector<uint32_t>> node_ops)
    : queue_(queue), flag_mem_(flag), node_ops_(std::move(node_ops)) {
    clRetainMemObject(flag_mem_);
}

ClEvent::~ClEvent() {
    // The flag is read into this object; it must land before the memory goes.
    if (event_) {
        clWaitForEvents(1, &event_);
        clReleaseEvent(event_);
    }
    clReleaseMemObject(flag_mem_);
}

void ClEvent::wait() {
    if (done_ || !event_) return;
    const cl_int err = clWaitForEvents(1, &event_);
    cl_int status = CL_COMPLETE;
    clGetEventInfo(event_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    done_ = true;
    if (err != CL_SUCCESS || status < 0)
        sdk::fail(HETERO_ERR_DEVICE_LOST, std::string("OpenCL execution failed: ") + cl_error_name(err != CL_SUCCESS ? err : status));
    if (flag_[0] == 0) return;
    // Clear the flag for the next execution, then report the first bad node.
    clEnqueueWriteBuffer(queue_, flag_mem_, CL_TRUE, 0, sizeof kFlagInit, kFlagInit, 0, nullptr, nullptr);
    const uint32_t node = uint32_t(flag_[1]);
    const char* op = node < node_ops_->size() ? sdk::op_name((*node_ops_)[node]) : "?";
    std::string what;
    if (flag_[0] & kErrIdRange) what = "token id outside the embedding table";
    if (flag_[0] & kErrPosRange) what += std::string(what.empty() ? "" : "; ") + "position outside the KV cache";
    sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "node " + std::to_string(node) + " (" + op + "): " + what);
}

}  // namespace hetero::opencl
