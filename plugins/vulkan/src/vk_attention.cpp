// ATTENTION and ATTENTION_EXT dispatches: the tensor-core kernel for many
// query rows with f16 caches (shaders/attention_coop.comp), the key/value
// tile kernel for many rows of small heads (attention_tiled.comp), the
// compact kernel on CPU implementations (attention_basic.comp), else the
// per-row kernel (attention.comp) with its workgroup shape. On devices that
// cap a shader's loop iterations (llvmpipe), caches too long for one pass
// run as key segments of the compact kernel and a merge of their partial
// softmaxes (attention_merge.comp). ATTENTION_SEQS takes the per-row and
// compact kernels, each row over its own sequence of the stacked cache.
#include "vk_lowering.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <string>

namespace hetero::vk {

namespace {

// Many query rows: the key/value-tile kernel (shaders/attention_tiled.comp).
constexpr int64_t kAttentionTiledMinRows = 8;
constexpr uint32_t kAttentionTiledRows = 32, kAttentionTiledMaxHeadDim = 64;
constexpr uint32_t kAttentionTiledSharedBytes = 4 * (2 * 32 * 65 + 32 * 64 + 32 * 33 + 128 + 32);
// Its tensor-core form (shaders/attention_coop.comp): 64-row blocks, head dims of 16 to 128 in steps of 16.
constexpr uint32_t kAttentionCoopRows = 64;
constexpr uint32_t kAttentionCoopSharedBytes = 2 * 3 * 64 * 72 + 4 * (4 * 16 * 68 + 128 + 4);

// The compact kernel's workgroup (attention_basic.comp's WG).
constexpr uint32_t kBasicGroup = 32;

// Loop iterations one invocation runs over `keys` keys, counted as if no
// loop were unrolled (what a loop-capped device may not exceed).
// attention_tiled.comp, per tile of 32 keys: its K/V loads (32 x Hd over
// 128 invocations), 8 scores of Hd terms, 8 exponentials, Hd / 4 value sums
// of 32 keys; plus the set-up.
uint64_t tiled_iterations(uint64_t keys, uint64_t hd) {
    const uint64_t tile = 1 + ceil_div(32 * hd, 128) + 8 * (hd + 1) + 8 + ceil_div(hd, 4) * 33;
    return 64 + ceil_div(keys, 32) * tile;
}
// attention_basic.comp, per tile of kBasicGroup keys: a score of Hd terms,
// the two reductions, the value sums (key groups for small heads, else
// ceil(Hd / WG) dims over the tile's keys); plus the set-up.
uint64_t basic_iterations(uint64_t keys, uint64_t hd) {
    const uint64_t wg = kBasicGroup, groups = 2 * hd <= wg ? wg / hd : 1;
    const uint64_t values = groups > 1 ? ceil_div(wg, groups) : ceil_div(hd, wg) * (wg + 1);
    const uint64_t tile = 1 + hd + 2 * uint64_t(std::bit_width(wg)) + values;
    return 2 * ceil_div(hd, wg) + 8 + ceil_div(keys, wg) * tile;
}
// attention_merge.comp over `segments` partials (64 invocations).
uint64_t merge_iterations(uint64_t segments, uint64_t hd) { return 2 * segments + ceil_div(hd, 64) * (segments + 1) + 2; }

// What a kernel may use of a loop-capped device's iterations: half, for the
// loops a count misses. Unlimited elsewhere.
uint64_t loop_budget(const DeviceInfo& dev) { return dev.loop_iteration_cap > 0 ? dev.loop_iteration_cap / 2 : UINT64_MAX; }

// How attention over a cache of `cache_rows` runs in key segments of the
// compact kernel: keys per segment (0: no split needed), segments and the
// scratch bytes of their partials.
struct KeySplit {
    uint64_t keys = 0, segments = 1, scratch_bytes = 0;
};
KeySplit key_split(const DeviceInfo& dev, uint64_t rows, uint64_t heads, uint64_t hd, uint64_t cache_rows) {
    const uint64_t budget = loop_budget(dev);
    KeySplit k;
    if (basic_iterations(cache_rows, hd) <= budget) return k;
    // The longest whole number of tiles within the budget.
    const uint64_t tile = basic_iterations(2 * kBasicGroup, hd) - basic_iterations(kBasicGroup, hd);
    const uint64_t fixed = basic_iterations(0, hd);
    k.keys = budget > fixed + tile ? (budget - fixed) / tile * kBasicGroup : kBasicGroup;
    k.segments = ceil_div(cache_rows, k.keys);
    k.scratch_bytes = k.segments * rows * heads * (hd + 2) * sizeof(float);
    return k;
}

// The most cache rows one query row attends to: the whole cache, or one
// sequence of an ATTENTION_SEQS stack.
uint64_t attended_rows(const hetero_node& node, const hetero_tensor_desc& k) {
    return node.op == HETERO_OP_ATTENTION_SEQS ? uint64_t(node.iparams[1]) : uint64_t(k.shape[0]);
}

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
    if (n.node.op == HETERO_OP_ATTENTION_SEQS) args.seq_rows = uint32_t(n.node.iparams[1]);
    if (n.node.op != HETERO_OP_ATTENTION) {
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

void check_attention_supported(const DeviceInfo& dev, const hetero_node& node, const hetero_tensor_desc* t) {
    const hetero_tensor_desc& q = t[node.inputs[0]];
    const hetero_tensor_desc& k = t[node.inputs[1]];
    const uint64_t rows = uint64_t(q.shape[0]), heads = uint64_t(q.shape[1]), hd = uint64_t(q.shape[2]);
    const KeySplit split = key_split(dev, rows, heads, hd, attended_rows(node, k));
    if (split.keys == 0) return;
    const std::string what = "attention: " + std::to_string(k.shape[0]) + " cache rows run in " + std::to_string(split.segments) +
                             " segments of " + std::to_string(split.keys) + " keys on this device (its shaders stop looping after " +
                             std::to_string(dev.loop_iteration_cap) + " iterations)";
    if (split.segments > std::min<uint64_t>(dev.props.limits.maxComputeWorkGroupCount[2], 65535) ||
        merge_iterations(split.segments, hd) > loop_budget(dev))
        sdk::fail(HETERO_ERR_UNSUPPORTED, what + ", too many");
    if (split.scratch_bytes > dev.max_storage_range)
        sdk::fail(HETERO_ERR_UNSUPPORTED, what + ", whose partials (" + std::to_string(split.scratch_bytes) +
                                              " bytes) exceed the storage buffer range of " + std::to_string(dev.max_storage_range));
}

std::vector<Dispatch> lower_attention(const NodeLowering& n) {
    const hetero_tensor_desc& q = n.t[n.in()[0]];
    const hetero_tensor_desc& k = n.t[n.in()[1]];
    const auto& limits = n.dev.props.limits;
    const uint64_t rows = uint64_t(q.shape[0]), heads = uint64_t(q.shape[1]), hd = uint64_t(q.shape[2]);
    const uint64_t cache_rows = attended_rows(n.node, k);
    const bool seqs = n.node.op == HETERO_OP_ATTENTION_SEQS;
    // Too many keys for one pass on a loop-capped device: key segments of
    // the compact kernel, each writing partial softmaxes to the scratch
    // area, then their merge (check_attention_supported has checked sizes).
    if (const KeySplit split = key_split(n.dev, rows, heads, hd, cache_rows); split.keys > 0) {
        AttentionArgs args = attention_args(n);
        args.segment_keys = uint32_t(split.keys);
        args.partials = kScratchOperand;
        Dispatch part = dispatch("attention_basic", n.index, args);
        part.spec = {kBasicGroup};
        grid(part, n.dev, rows * heads);
        part.groups[2] = uint32_t(split.segments);
        part.scratch_bytes = split.scratch_bytes;
        Dispatch merge = dispatch("attention_merge", n.index,
                                  AttentionMergeArgs{.partials = kScratchOperand,
                                                     .y = n.out,
                                                     .groups = uint32_t(rows * heads),
                                                     .head_dim = uint32_t(hd),
                                                     .segments = uint32_t(split.segments)});
        grid(merge, n.dev, rows * heads);
        merge.scratch_bytes = split.scratch_bytes;
        return {part, merge};
    }
    Dispatch d = dispatch("attention", n.index, attention_args(n));
    // ATTENTION_SEQS: each row over its own sequence, on the per-row kernels.
    const bool many_rows = !seqs && q.shape[0] >= kAttentionTiledMinRows && q.shape[1] <= 65535;
    // f16 caches only: the kernel computes in f16, which the f32-cache contract does not allow.
    if (many_rows && coopmat_enabled(n.dev) && k.dtype == HETERO_DTYPE_F16 && q.shape[2] % 16 == 0 && q.shape[2] <= 128 &&
        limits.maxComputeSharedMemorySize >= kAttentionCoopSharedBytes) {
        d.shader = "attention_coop";
        d.spec = {uint32_t(q.shape[2])};
        d.groups[0] = ceil_div(uint64_t(q.shape[0]), kAttentionCoopRows);
        d.groups[1] = uint32_t(q.shape[1]);
    } else if (many_rows && q.shape[2] <= int64_t(kAttentionTiledMaxHeadDim) &&
               limits.maxComputeSharedMemorySize >= kAttentionTiledSharedBytes &&
               tiled_iterations(cache_rows, hd) <= loop_budget(n.dev)) {
        d.shader = "attention_tiled";
        d.groups[0] = ceil_div(uint64_t(q.shape[0]), kAttentionTiledRows);
        d.groups[1] = uint32_t(q.shape[1]);
    } else if (n.dev.compact_kernels) {
        // CPU implementations (lavapipe): the compact shader, in narrow
        // groups (they run a group's invocations a few at a time, so wide
        // groups only add barrier rounds).
        d.shader = "attention_basic";
        d.spec = {kBasicGroup};
        grid(d, n.dev, uint64_t(q.shape[0] * q.shape[1]));
    } else {
        d.spec = row_attention_shape(n.dev, uint32_t(q.shape[2]));
        grid(d, n.dev, uint64_t(q.shape[0] * q.shape[1]));
    }
    return {d};
}

}  // namespace hetero::vk
