// Attention nodes: the tensor-core kernel (prefill with an f16 cache, head
// dims up to 256; its instance's program built on first need), the tiled
// kernel (prefill), else the per-row kernel (kernels/attention.cl,
// attention_mma.cl), which also takes ATTENTION_SEQS.
#include "cl_lowering.hpp"

#include <algorithm>
#include <climits>
#include <optional>

namespace hetero::opencl {
namespace {

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

void Lowering::add_attention(uint32_t index, const hetero_node& node) {
    const auto& T = graph_.tensors;
    const hetero_tensor_desc &q = T[size_t(node.inputs[0])], &k = T[size_t(node.inputs[1])];
    // ATTENTION_EXT's window and soft-cap, the last two arguments of every variant.
    const bool ext = node.op != HETERO_OP_ATTENTION;
    // ATTENTION_SEQS: rows of several sequences, each over its own part of
    // the stacked cache, on the per-row kernel (a decode step's rows).
    const cl_int seq_rows = node.op == HETERO_OP_ATTENTION_SEQS ? cl_int(node.iparams[1]) : 0;
    const cl_int window = ext ? cl_int(std::clamp<int64_t>(node.iparams[0], 0, INT_MAX)) : 0;
    const cl_float cap = ext && node.fparams[1] > 0.f ? node.fparams[1] : 0.f;
    const int64_t N = q.shape[0], H = q.shape[1], Hd = q.shape[2], C = k.shape[0], Hkv = k.shape[1];
    // Every kernel takes q, k, v, positions and out, then the shape.
    const BufferAt qa = at(node.inputs[0]), ka = at(node.inputs[1]), va = at(node.inputs[2]), pa = at(node.inputs[3]), ya = at(node.output);
    const cl_float scale = node.fparams[0];
    const cl_int kv_f16 = cl_int(k.dtype == HETERO_DTYPE_F16), node_id = cl_int(index);
    const cl_mem err = memory_.error_flag;
    Launch l;
    // Tensor cores round q and p to f16, which the error bound allows for
    // f16 caches only. The instance's program is built here the first time
    // a graph needs it; where that failed, the kernels below take the node.
    const MmaAttentionKernel* mma_kernel = mma_attention_kernel(Hd);
    const Program* mma_program = nullptr;
    if (!seq_rows && program_.mma() && tiled_attention_enabled() && k.dtype == HETERO_DTYPE_F16 && N >= kTiledAttentionMinRows && mma_kernel &&
        device_.info().local_mem >= mma_kernel->local_bytes())
        mma_program = device_.attention_program(*mma_kernel, Hd);
    if (mma_program && mma_program->group_size(mma_kernel->name, mma_kernel->group()) >= mma_kernel->group()) {
        l = start(*mma_program, mma_kernel->name);
        l.set_args<AttentionMmaParams>(qa, ka, va, pa, ya, cl_int(N), cl_int(H), cl_int(Hkv), cl_int(Hd), cl_int(C), scale, kv_f16, err,
                                       node_id, window, cap);
        l.dims = 2;
        l.local[0] = mma_kernel->group();
        l.global[0] = mma_kernel->group() * size_t(H);
        l.global[1] = (size_t(N) + size_t(mma_kernel->rows) - 1) / size_t(mma_kernel->rows);
    } else if (const auto t = seq_rows ? std::nullopt
                                       : plan_tiled_attention(N, H, Hkv, Hd, program_.group_size("attention_tiled", kTiledAttentionGroup),
                                                              device_.info().local_mem)) {
        l = start("attention_tiled");
        l.set_args<AttentionTiledParams>(qa, ka, va, pa, ya, cl_int(N), cl_int(H), cl_int(Hkv), cl_int(Hd), cl_int(C), scale, kv_f16, err,
                                         node_id, cl_int(t->heads_per_group), cl_int(t->slices), LocalFloats{t->tile_floats},
                                         LocalFloats{t->tile_floats}, LocalFloats{std::max<size_t>(t->partial_floats, 1)}, window, cap);
        l.dims = 2;
        l.local[0] = t->wg;
        l.global[0] = t->wg * size_t(Hkv) * size_t(t->head_chunks);
        l.global[1] = (size_t(N) + size_t(t->rows) - 1) / size_t(t->rows);
    } else {
        l = start("attention");
        const size_t wg = program_.group_size("attention", 256);
        if (size_t(Hd) > 8 * wg)
            sdk::fail(HETERO_ERR_UNSUPPORTED, "attention: head dim " + std::to_string(Hd) + " exceeds " + std::to_string(8 * wg) + " on this device");
        l.set_args<AttentionParams>(qa, ka, va, pa, ya, cl_int(H), cl_int(Hkv), cl_int(Hd), cl_int(C), scale, kv_f16, err, node_id,
                                    LocalFloats{wg}, LocalFloats{size_t(Hd)}, window, cap, seq_rows);
        l.dims = 2;
        l.local[0] = wg;
        l.global[0] = wg * size_t(H);
        l.global[1] = size_t(N);
    }
    finish(std::move(l), std::vector<int32_t>(node.inputs, node.inputs + node.n_inputs), {node.output});
}

}  // namespace hetero::opencl
