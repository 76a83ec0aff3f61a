// ATTENTION and ATTENTION_EXT dispatches: the tensor-core kernel for many
// query rows with f16 caches (shaders/attention_coop.comp), the key/value
// tile kernel for many rows of small heads (attention_tiled.comp), the
// compact kernel on CPU implementations (attention_basic.comp), else the
// per-row kernel (attention.comp) with its workgroup shape.
#include "vk_lowering.hpp"

#include <algorithm>
#include <climits>

namespace hetero::vk {

namespace {

// Many query rows: the key/value-tile kernel (shaders/attention_tiled.comp).
constexpr int64_t kAttentionTiledMinRows = 8;
constexpr uint32_t kAttentionTiledRows = 32, kAttentionTiledMaxHeadDim = 64;
constexpr uint32_t kAttentionTiledSharedBytes = 4 * (2 * 32 * 65 + 32 * 64 + 32 * 33 + 128 + 32);
// Its tensor-core form (shaders/attention_coop.comp): 64-row blocks, head dims of 16 to 128 in steps of 16.
constexpr uint32_t kAttentionCoopRows = 64;
constexpr uint32_t kAttentionCoopSharedBytes = 2 * 3 * 64 * 72 + 4 * (4 * 16 * 68 + 128 + 4);

AttentionArgs attention_args(const NodeLowering& n) {
    const int32_t* in = n.in();
    const hetero_tensor_desc& q = n.t[in[0]];
    const hetero_tensor_desc& k = n.t[in[1]];
    AttentionArgs args{.q = in[0],
                       .k_cache = in[1],
                       .v_cache = in[2],
                       .positions = in[3],
                       .y = n.out,
                       .rows = uint32_t(q.shape[0]),
                       .heads = uint32_t(q.shape[1]),
                       .kv_heads = uint32_t(k.shape[1]),
                       .head_dim = uint32_t(q.shape[2]),
                       .cache_rows = uint32_t(k.shape[0]),
                       .cache_f16 = k.dtype == HETERO_DTYPE_F16 ? 1u : 0u,
                       .scale = n.node.fparams[0]};
    if (n.node.op == HETERO_OP_ATTENTION_EXT) {
        // Window and soft-cap (shaders/common.glsl); every variant applies them.
        args.window = uint32_t(std::clamp<int64_t>(n.node.iparams[0], 0, INT32_MAX));
        args.softcap = n.node.fparams[1] > 0.f ? n.node.fparams[1] : 0.f;
    }
    return args;
}

// Shape of shaders/attention.comp for head dim `hd`: columns of 4 dims where
// possible, `lanes` invocations per key for the score, the rest of the
// workgroup in key groups for the value sum; each invocation issues at most
// 8 key and 16 value loads a tile. Returns its specialisation: WG, HD, L.
std::vector<uint32_t> row_attention_shape(const DeviceInfo& dev, uint32_t hd) {
    const uint32_t lim = std::min(dev.props.limits.maxComputeWorkGroupInvocations, dev.props.limits.maxComputeWorkGroupSize[0]);
    const uint32_t wg = lim >= 256 ? 256 : 128;
    const uint32_t nc = std::max(1u, hd % 4 == 0 ? hd / 4 : hd);
    const uint32_t groups = nc <= wg ? wg / nc : 1, cpt = ceil_div(nc, wg);
    uint32_t lanes = 1;
    while (lanes < wg && (ceil_div(nc, lanes) > 8 || ceil_div(wg / lanes, groups) * cpt > 16)) lanes *= 2;
    return {wg, hd, lanes};
}

}  // namespace

Dispatch lower_attention(const NodeLowering& n) {
    const hetero_tensor_desc& q = n.t[n.in()[0]];
    const hetero_tensor_desc& k = n.t[n.in()[1]];
    const auto& limits = n.dev.props.limits;
    Dispatch d = dispatch("attention", n.index, attention_args(n));
    const bool many_rows = q.shape[0] >= kAttentionTiledMinRows && q.shape[1] <= 65535;
    // f16 caches only: the kernel computes in f16, which the f32-cache contract does not allow.
    if (many_rows && coopmat_enabled(n.dev) && k.dtype == HETERO_DTYPE_F16 && q.shape[2] % 16 == 0 && q.shape[2] <= 128 &&
        limits.maxComputeSharedMemorySize >= kAttentionCoopSharedBytes) {
        d.shader = "attention_coop";
        d.spec = {uint32_t(q.shape[2])};
        d.groups[0] = ceil_div(uint64_t(q.shape[0]), kAttentionCoopRows);
        d.groups[1] = uint32_t(q.shape[1]);
    } else if (many_rows && q.shape[2] <= int64_t(kAttentionTiledMaxHeadDim) &&
               limits.maxComputeSharedMemorySize >= kAttentionTiledSharedBytes) {
        d.shader = "attention_tiled";
        d.groups[0] = ceil_div(uint64_t(q.shape[0]), kAttentionTiledRows);
        d.groups[1] = uint32_t(q.shape[1]);
    } else if (n.dev.compact_kernels) {
        // CPU implementations (lavapipe): the compact shader, in narrow
        // groups (they run a group's invocations a few at a time, so wide
        // groups only add barrier rounds).
        d.shader = "attention_basic";
        d.spec = {32};
        grid(d, n.dev, uint64_t(q.shape[0] * q.shape[1]));
    } else {
        d.spec = row_attention_shape(n.dev, uint32_t(q.shape[2]));
        grid(d, n.dev, uint64_t(q.shape[0] * q.shape[1]));
    }
    return d;
}

}  // namespace hetero::vk
