#include "vk_lowering.hpp"

#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <utility>

namespace hetero::vk {

namespace {

using sdk::fail;

constexpr uint32_t kMatvecWG = 128, kMatvecRowsPerWG = 2;
// Quantized rows are walked one 32-element block per invocation and step.
// Shapes measured on an H100 (decode of a TinyLlama-sized model).
constexpr uint32_t kMatvecQ4WG = 64, kMatvecQ8WG = 128, kMatvecQuantRowsPerWG = 4;
// Q4_0 and K-quant rows at least this wide take kMatvecQ8WG invocations too
// (twice the lanes a row). H100, tg128 against 64 x 4 for every row, two
// rounds: Llama-7B shape Q4_K 148.9 -> 177.0 tok/s, Q4_0 193.5 -> 205.6;
// Mistral-7B Q4_0 197.2 -> 200.1; TinyLlama (rows of 2048, down 5632) Q4_K
// 470.2 -> 502.5, Q4_0 606.4 -> 629.5. All rows at 128 lost at TinyLlama.
constexpr int64_t kMatvecWideRow = 4096;
// Coopmat GEMM: the 128 x 128 tile shader takes a matmul of at least this many
// such tiles, run by kGemmBigWG invocations. On an H100 (TinyLlama prefill,
// 512 tokens) that is the gate/up pair (352 tiles: 540 -> 422 us); the down
// (64 tiles: 252 -> 390 us), output and Q/K/V projections are faster in
// 64 x 64 tiles, which fill more of the GPU.
constexpr uint64_t kGemmBigMinTiles = 256;
constexpr uint32_t kGemmBigWG = 256;
constexpr uint32_t kAttentionMaxHeadDim = 512;
// Elements of a row each rmsnorm invocation keeps in registers (MAX_PER in shaders/rmsnorm.comp).
constexpr uint32_t kRmsnormMaxPer = 16;
// Many query rows: the key/value-tile kernel (shaders/attention_tiled.comp).
constexpr int64_t kAttentionTiledMinRows = 8;
constexpr uint32_t kAttentionTiledRows = 32, kAttentionTiledMaxHeadDim = 64;
constexpr uint32_t kAttentionTiledSharedBytes = 4 * (2 * 32 * 65 + 32 * 64 + 32 * 33 + 128 + 32);
// Its tensor-core form (shaders/attention_coop.comp): 64-row blocks, head dims of 16 to 128 in steps of 16.
constexpr uint32_t kAttentionCoopRows = 64;
constexpr uint32_t kAttentionCoopSharedBytes = 2 * 3 * 64 * 72 + 4 * (4 * 16 * 68 + 128 + 4);

uint32_t ceil_div(uint64_t a, uint64_t b) { return uint32_t((a + b - 1) / b); }

// Tensor-core kernels where the device has them; HETERO_VK_COOPMAT=0 keeps
// the f32 GEMM and attention (for comparisons).
bool coopmat_enabled(const DeviceInfo& dev) {
    static const bool disabled = sdk::env_equals("HETERO_VK_COOPMAT", "0");
    return dev.coopmat_f16 && !disabled;
}

// The coopmat GEMM takes quantized weights.
bool use_coopmat(const DeviceInfo& dev, uint32_t w_dtype) {
    return coopmat_enabled(dev) && coop_gemm_weights(w_dtype);
}

// Shape of the coopmat GEMM over matrices of rows `ms` (one per member of a
// multi GEMM) and n tokens: 128 x 128 tiles where they still fill the GPU;
// else 128 x 64 for one matrix and 64 x 64 for several. On an H100 (512-token
// prefill, dim 2048) 128 x 64 tiles took the down projection from 255 to
// 219 us and the output projection from 107 to 91 us, but the Q/K/V group
// from 142 to 164 us. Tuning aids: HETERO_VK_GEMM="BIG_MIN,WG" (the fewest
// large tiles, the large tiles' invocations: 128 or 256) and
// HETERO_VK_GEMM_TALL=0|1 (128 x 64 never / always). Sets the specialisation
// and returns the tile: rows of W, rows of x.
struct GemmTile { uint32_t m, n; };
GemmTile coop_gemm_shape(Dispatch& d, std::initializer_list<uint64_t> ms, uint64_t n) {
    static const std::pair<uint64_t, uint32_t> cfg = [] {
        const char* e = std::getenv("HETERO_VK_GEMM");
        unsigned long long a = 0;
        unsigned b = 0;
        if (e && std::sscanf(e, "%llu,%u", &a, &b) == 2 && (b == 128 || b == 256)) return std::pair<uint64_t, uint32_t>(a, b);
        return std::pair<uint64_t, uint32_t>(kGemmBigMinTiles, kGemmBigWG);
    }();
    uint64_t big_tiles = 0;
    for (uint64_t m : ms) big_tiles += ceil_div(m, 2 * kGemmTile);
    const bool big = big_tiles * ceil_div(n, 2 * kGemmTile) >= cfg.first;
    static const int tall_env = [] {
        const char* e = std::getenv("HETERO_VK_GEMM_TALL");
        return e && (e[0] == '0' || e[0] == '1') && e[1] == 0 ? e[0] - '0' : -1;
    }();
    const bool tall = tall_env >= 0 ? tall_env == 1 : ms.size() == 1;
    if (big) {
        d.spec = {cfg.second, 1u};  // invocations, tile shape (see the shader)
        return {2 * kGemmTile, 2 * kGemmTile};
    }
    if (tall) {
        d.spec = {256u, 2u};
        return {2 * kGemmTile, kGemmTile};
    }
    d.spec = {2 * kGemmTile, 0u};
    return {kGemmTile, kGemmTile};
}

// HETERO_VK_MATVEC="WG,ROWS" overrides the quantized matvec shape (tuning aid).
void matvec_shape(uint32_t& wg, uint32_t& rows) {
    static const std::pair<uint32_t, uint32_t> env = [] {
        const char* e = std::getenv("HETERO_VK_MATVEC");
        unsigned a = 0, b = 0;
        if (e && std::sscanf(e, "%u,%u", &a, &b) == 2 && a >= 4 && a <= 256 && (a & (a - 1)) == 0 && b >= 1 && b <= 16)
            return std::pair<uint32_t, uint32_t>(a, b);
        return std::pair<uint32_t, uint32_t>(0, 0);
    }();
    if (env.first) { wg = env.first; rows = env.second; }
}

// Workgroup size and rows per workgroup of a quantized (any block type)
// matvec over rows of width k. A K-quant invocation takes 32 elements a
// step, as Q4_0's does. The 32-element types other than Q8_0 (2.5 to 6 bits
// a weight) take Q4_0's shape, as do Q2_K and Q3_K: not measured separately.
void quant_matvec_shape(uint32_t dtype, int64_t k, uint32_t& wg, uint32_t& rows) {
    wg = dtype == HETERO_DTYPE_Q8_0 ? kMatvecQ8WG : k >= kMatvecWideRow ? kMatvecQ8WG : kMatvecQ4WG;
    rows = kMatvecQuantRowsPerWG;
    matvec_shape(wg, rows);
}

// `count` workgroups as a 2-D grid (one dimension is limited to maxComputeWorkGroupCount[0]).
void grid(Dispatch& d, const DeviceInfo& dev, uint64_t count) {
    const uint64_t x = std::max<uint64_t>(1, std::min<uint64_t>(count, std::min<uint32_t>(dev.max_groups_x, 65535u)));
    d.groups[0] = uint32_t(x);
    d.groups[1] = std::max<uint32_t>(1, ceil_div(count, x));
}

Dispatch make(const std::string& shader, uint32_t node_index, std::initializer_list<int32_t> operands, int32_t out) {
    Dispatch d;
    d.shader = shader;
    d.push.node = node_index;
    uint32_t i = 0;
    for (int32_t t : operands) d.operand[i++] = t;
    d.operand[4] = out;  // push.tensor[] is filled with byte offsets when recording
    return d;
}

bool writes_16bit(const hetero_node& node, const hetero_tensor_desc* t) {
    const uint32_t out = t[node.output].dtype;
    return (node.op == HETERO_OP_CONVERT || node.op == HETERO_OP_STORE_ROWS) && out != HETERO_DTYPE_F32;
}

}  // namespace

void check_node_supported(const DeviceInfo& dev, const hetero_node& node, const hetero_tensor_desc* tensors) {
    const std::string op = sdk::op_name(node.op);
    if (node.op >= HETERO_OP_COUNT_1_2) fail(HETERO_ERR_UNSUPPORTED, "vulkan: no shader for op " + std::to_string(node.op));
    auto check_size = [&](int32_t id) {
        const uint64_t bytes = sdk::tensor_bytes(tensors[id]);
        if (bytes + dev.min_offset_align + 4 > dev.max_storage_range || sdk::element_count(tensors[id]) >= (int64_t(1) << 32))
            fail(HETERO_ERR_UNSUPPORTED, op + ": tensor " + std::to_string(id) + " (" + std::to_string(bytes) +
                                             " bytes) exceeds the device's storage buffer range of " +
                                             std::to_string(dev.max_storage_range) + " bytes");
    };
    for (uint32_t i = 0; i < node.n_inputs; ++i) check_size(node.inputs[i]);
    check_size(node.output);
    if (writes_16bit(node, tensors) && !dev.storage16)
        fail(HETERO_ERR_UNSUPPORTED, op + ": writing " + sdk::dtype_name(tensors[node.output].dtype) + " needs 16-bit storage access");
    // Block types other than Q8_0/Q4_0 (K-quants, Q4_1, Q5_0, Q5_1, IQ4_NL) are
    // read (matmul, embedding, conversion to f32); no shader writes them.
    if (node.op == HETERO_OP_CONVERT && sdk::is_quant_dtype(tensors[node.output].dtype) && !sdk::is_block_dtype(tensors[node.output].dtype))
        fail(HETERO_ERR_UNSUPPORTED, "convert: quantizing to " + std::string(sdk::dtype_name(tensors[node.output].dtype)) + " is not provided");
    if ((node.op == HETERO_OP_ATTENTION || node.op == HETERO_OP_ATTENTION_EXT) && tensors[node.inputs[0]].shape[2] > int64_t(kAttentionMaxHeadDim))
        fail(HETERO_ERR_UNSUPPORTED, "attention: head dim above " + std::to_string(kAttentionMaxHeadDim));
    if (node.op == HETERO_OP_MATMUL && tensors[node.inputs[0]].shape[0] > kMatvecMaxRows &&
        ceil_div(uint64_t(tensors[node.inputs[0]].shape[0]), kGemmTile) > 65535u)
        fail(HETERO_ERR_UNSUPPORTED, "matmul: too many rows for one dispatch");
}

std::vector<Dispatch> lower_node(const DeviceInfo& dev, const hetero_node& node, uint32_t ni, const hetero_tensor_desc* t,
                                 const ResidualFusion& fusion) {
    const int32_t* in = node.inputs;
    const int32_t out = fusion.residual >= 0 ? fusion.out : node.output;
    const hetero_tensor_desc& o = t[out];
    std::vector<Dispatch> ds;
    switch (node.op) {
        case HETERO_OP_EMBEDDING: {
            Dispatch d = make("embedding", ni, {in[0], in[1]}, out);
            const int64_t N = t[in[1]].shape[0], D = t[in[0]].shape[1];
            d.push.u[0] = uint32_t(N);
            d.push.u[1] = uint32_t(D);
            d.push.u[2] = uint32_t(t[in[0]].shape[0]);
            d.push.u[3] = t[in[0]].dtype;
            d.spec = {256};
            grid(d, dev, ceil_div(uint64_t(N * D), 256));
            ds.push_back(d);
            break;
        }
        case HETERO_OP_MATMUL: {
            const hetero_tensor_desc& x = t[in[0]];
            const hetero_tensor_desc& w = t[in[1]];
            const int64_t N = x.shape[0], K = sdk::row_width(x), M = w.shape[0];
            const bool bias = node.n_inputs == 3;
            const int32_t extra = fusion.residual >= 0 ? fusion.residual : bias ? in[2] : -1;
            const std::string wt = "w" + std::to_string(w.dtype);
            Dispatch d;
            if (N <= kMatvecMaxRows) {
                d = make((dev.subgroup_arithmetic ? "matvec_sg_" : "matvec_") + wt, ni, {in[0], in[1], extra}, out);
                uint32_t wg = kMatvecWG, rows = kMatvecRowsPerWG;
                if (sdk::is_quant_dtype(w.dtype)) quant_matvec_shape(w.dtype, K, wg, rows);
                d.spec = {wg, rows};
                grid(d, dev, ceil_div(uint64_t(M), rows));
                d.groups[2] = uint32_t(N);
            } else if (use_coopmat(dev, w.dtype)) {
                d = make("matmul_coop_" + wt, ni, {in[0], in[1], extra}, out);
                const GemmTile tile = coop_gemm_shape(d, {uint64_t(M)}, uint64_t(N));
                d.groups[0] = ceil_div(uint64_t(M), tile.m);
                d.groups[1] = ceil_div(uint64_t(N), tile.n);
            } else {
                d = make("matmul_" + wt, ni, {in[0], in[1], extra}, out);
                d.groups[0] = ceil_div(uint64_t(M), kGemmTile);
                d.groups[1] = ceil_div(uint64_t(N), kGemmTile);
            }
            d.push.u[0] = uint32_t(N);
            d.push.u[1] = uint32_t(M);
            d.push.u[2] = uint32_t(K);
            d.push.u[3] = fusion.residual >= 0 ? 2u : bias ? 1u : 0u;
            ds.push_back(d);
            break;
        }
        case HETERO_OP_RMSNORM:
        case HETERO_OP_SOFTMAX: {
            const bool rms = node.op == HETERO_OP_RMSNORM;
            Dispatch d = rms ? make(dev.subgroup_arithmetic ? "rmsnorm_sg" : "rmsnorm", ni, {in[0], in[1]}, out) : make("softmax", ni, {in[0]}, out);
            const int64_t D = sdk::inner_dim(t[in[0]]), rows = sdk::outer_rows(t[in[0]]);
            d.push.u[0] = uint32_t(rows);
            d.push.u[1] = uint32_t(D);
            d.push.f[0] = node.fparams[0];
            d.spec = {256};
            if (rms) {
                // Decode normalises one row: a wider workgroup shortens each
                // invocation's chain. The row length as a specialisation
                // constant lets the shader keep the row in registers.
                uint32_t wg = 256;
                const uint32_t max_wg = std::min<uint32_t>({1024u, dev.props.limits.maxComputeWorkGroupInvocations,
                                                            dev.props.limits.maxComputeWorkGroupSize[0]});
                if (rows <= 8)
                    while (wg * 2 <= max_wg && int64_t(wg) * 2 <= D) wg *= 2;
                d.spec = {wg, D <= int64_t(kRmsnormMaxPer) * wg ? uint32_t(D) : 0u};
            }
            grid(d, dev, uint64_t(rows));
            ds.push_back(d);
            break;
        }
        case HETERO_OP_ROPE: {
            Dispatch d = make("rope", ni, {in[0], in[1]}, out);
            const hetero_tensor_desc& x = t[in[0]];
            const int64_t N = x.shape[0], H = x.shape[1], Hd = x.shape[2];
            d.push.u[0] = uint32_t(N);
            d.push.u[1] = uint32_t(H);
            d.push.u[2] = uint32_t(Hd);
            d.push.u[3] = uint32_t(sdk::rope_dims(node, Hd));
            d.push.u[4] = uint32_t(node.iparams[0]);
            d.push.f[0] = node.fparams[0];
            d.spec = {256};
            grid(d, dev, ceil_div(uint64_t(N * H * ((Hd + 1) / 2)), 256));
            ds.push_back(d);
            break;
        }
        case HETERO_OP_ROPE_SCALED: {
            // Factors at binding 8 (in4); without them the shader never reads it: positions stand in.
            const bool factors = node.n_inputs > 2;
            Dispatch d = make("rope_scaled", ni, {in[0], in[1]}, out);
            d.operand[kFirstOutput + kOutputs] = factors ? in[2] : in[1];
            const hetero_tensor_desc& x = t[in[0]];
            const int64_t N = x.shape[0], H = x.shape[1], Hd = x.shape[2];
            d.push.u[0] = uint32_t(N);
            d.push.u[1] = uint32_t(H);
            d.push.u[2] = uint32_t(Hd);
            d.push.u[3] = uint32_t(sdk::rope_dims(node, Hd));
            d.push.u[4] = uint32_t(node.iparams[0]);
            d.push.u[8] = factors ? 1u : 0u;
            d.push.f[0] = node.fparams[0];
            d.push.f[1] = node.fparams[1] != 0.f ? node.fparams[1] : 1.f;
            d.spec = {256};
            grid(d, dev, ceil_div(uint64_t(N * H * ((Hd + 1) / 2)), 256));
            ds.push_back(d);
            break;
        }
        case HETERO_OP_ATTENTION:
        case HETERO_OP_ATTENTION_EXT: {
            Dispatch d = make("attention", ni, {in[0], in[1], in[2], in[3]}, out);
            const hetero_tensor_desc& q = t[in[0]];
            const hetero_tensor_desc& k = t[in[1]];
            d.push.u[0] = uint32_t(q.shape[0]);
            d.push.u[1] = uint32_t(q.shape[1]);
            d.push.u[2] = uint32_t(k.shape[1]);
            d.push.u[3] = uint32_t(q.shape[2]);
            d.push.u[4] = uint32_t(k.shape[0]);
            d.push.u[5] = k.dtype == HETERO_DTYPE_F16 ? 1u : 0u;
            d.push.f[0] = node.fparams[0];
            if (node.op == HETERO_OP_ATTENTION_EXT) {
                // Window and soft-cap (shaders/common.glsl); every variant applies them.
                d.push.u[6] = uint32_t(std::clamp<int64_t>(node.iparams[0], 0, INT32_MAX));
                d.push.f[1] = node.fparams[1] > 0.f ? node.fparams[1] : 0.f;
            }
            const bool many_rows = q.shape[0] >= kAttentionTiledMinRows && q.shape[1] <= 65535;
            // f16 caches only: the kernel computes in f16, which the f32-cache contract does not allow.
            if (many_rows && coopmat_enabled(dev) && k.dtype == HETERO_DTYPE_F16 && q.shape[2] % 16 == 0 && q.shape[2] <= 128 &&
                dev.props.limits.maxComputeSharedMemorySize >= kAttentionCoopSharedBytes) {
                d.shader = "attention_coop";
                d.spec = {uint32_t(q.shape[2])};
                d.groups[0] = ceil_div(uint64_t(q.shape[0]), kAttentionCoopRows);
                d.groups[1] = uint32_t(q.shape[1]);
            } else if (many_rows && q.shape[2] <= int64_t(kAttentionTiledMaxHeadDim) &&
                       dev.props.limits.maxComputeSharedMemorySize >= kAttentionTiledSharedBytes) {
                d.shader = "attention_tiled";
                d.groups[0] = ceil_div(uint64_t(q.shape[0]), kAttentionTiledRows);
                d.groups[1] = uint32_t(q.shape[1]);
            } else if (dev.compact_kernels) {
                // CPU implementations (lavapipe): the compact shader, in
                // narrow groups (they run a group's invocations a few at a
                // time, so wide groups only add barrier rounds).
                d.shader = "attention_basic";
                d.spec = {32};
                grid(d, dev, uint64_t(q.shape[0] * q.shape[1]));
            } else {
                // Shape of shaders/attention.comp: columns of 4 dims where
                // possible, `lanes` invocations per key for the score, the
                // rest of the workgroup in key groups for the value sum; each
                // invocation issues at most 8 key and 16 value loads a tile.
                const uint32_t hd = uint32_t(q.shape[2]);
                const uint32_t lim = std::min(dev.props.limits.maxComputeWorkGroupInvocations,
                                              dev.props.limits.maxComputeWorkGroupSize[0]);
                const uint32_t wg = lim >= 256 ? 256 : 128;
                const uint32_t nc = std::max(1u, hd % 4 == 0 ? hd / 4 : hd);
                const uint32_t groups = nc <= wg ? wg / nc : 1, cpt = ceil_div(nc, wg);
                uint32_t lanes = 1;
                while (lanes < wg && (ceil_div(nc, lanes) > 8 || ceil_div(wg / lanes, groups) * cpt > 16)) lanes *= 2;
                d.spec = {wg, hd, lanes};
                grid(d, dev, uint64_t(q.shape[0] * q.shape[1]));
            }
            ds.push_back(d);
            break;
        }
        case HETERO_OP_SWIGLU:
        case HETERO_OP_GEGLU:
        case HETERO_OP_SOFTCAP:
        case HETERO_OP_ADD:
        case HETERO_OP_MUL: {
            // SOFTCAP has one input: binding 2 gets x again and is not read.
            const bool unary = node.op == HETERO_OP_SOFTCAP;
            Dispatch d = make("elementwise", ni, {in[0], unary ? in[0] : in[1]}, out);
            const uint64_t n = uint64_t(sdk::element_count(t[in[0]]));
            const bool broadcast = !unary && t[in[1]].ndim == 1 && sdk::element_count(t[in[1]]) != int64_t(n);
            d.push.u[0] = uint32_t(n);
            d.push.u[1] = broadcast ? uint32_t(t[in[1]].shape[0]) : 0u;
            switch (node.op) {
                case HETERO_OP_ADD: d.push.u[2] = 0; break;
                case HETERO_OP_MUL: d.push.u[2] = 1; break;
                case HETERO_OP_SWIGLU: d.push.u[2] = 2; break;
                case HETERO_OP_GEGLU: d.push.u[2] = 3; break;
                default: d.push.u[2] = 4; break;
            }
            d.push.f[0] = node.fparams[0];
            d.spec = {256};
            grid(d, dev, ceil_div(n, 256));
            ds.push_back(d);
            break;
        }
        case HETERO_OP_CONVERT: {
            const uint32_t from = t[in[0]].dtype, to = o.dtype;
            const uint64_t n = uint64_t(sdk::element_count(o));
            Dispatch d;
            if (to == HETERO_DTYPE_F32) {
                d = make("to_f32", ni, {in[0]}, out);
                d.push.u[0] = uint32_t(n);
                d.push.u[1] = from;
                d.spec = {256};
                grid(d, dev, ceil_div(n, 256));
            } else if (to == HETERO_DTYPE_F16 || to == HETERO_DTYPE_BF16) {
                d = make("from_f32_half", ni, {in[0]}, out);
                d.push.u[0] = uint32_t(n);
                d.push.u[1] = to;
                d.spec = {256};
                grid(d, dev, ceil_div(n, 256));
            } else {
                d = make("from_f32_quant", ni, {in[0]}, out);
                d.push.u[0] = uint32_t(n / 32);
                d.push.u[1] = to;
                d.spec = {64};
                grid(d, dev, ceil_div(n / 32, 64));
            }
            ds.push_back(d);
            break;
        }
        case HETERO_OP_STORE_ROWS: {
            Dispatch d = make("store_rows", ni, {in[0], in[1]}, out);
            const int64_t N = t[in[0]].shape[0], D = sdk::row_width(t[in[0]]);
            d.push.u[0] = uint32_t(N);
            d.push.u[1] = uint32_t(D);
            d.push.u[2] = uint32_t(o.shape[0]);
            d.push.u[3] = o.dtype == HETERO_DTYPE_F16 ? 1u : 0u;
            d.spec = {256};
            grid(d, dev, ceil_div(uint64_t(N * D), 256));
            ds.push_back(d);
            break;
        }
        default: fail(HETERO_ERR_UNSUPPORTED, "vulkan: op " + std::to_string(node.op) + " has no shader");
    }
    return ds;
}

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
                    ok = producer < 0 && b == kFirstOutput;
                    producer = int64_t(i);
                } else {
                    ok = b == 0 && starts(ds[i].shader, "matmul_coop_");
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

Dispatch lower_group(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index, const hetero_tensor_desc* t,
                     const hetero_node* norm, const hetero_node* swiglu, const std::vector<hetero_node>& stores) {
    if (members.size() < 2 || members.size() > max_group_size(members[0])) fail(HETERO_ERR_INTERNAL, "vulkan: bad node group");
    const hetero_node &a = members[0], &b = members[1];
    if (a.op != HETERO_OP_MATMUL) {
        // Pairs: the first node's dispatch, widened to cover the second too.
        Dispatch d = lower_node(dev, a, first_index, t).at(0);
        d.shader += "_pair";
        d.operand[2] = b.inputs[0];
        d.operand[kFirstOutput + 1] = b.output;
        uint64_t count = 0;
        if (a.op == HETERO_OP_ROPE || a.op == HETERO_OP_ROPE_SCALED) {
            const hetero_tensor_desc &xa = t[a.inputs[0]], &xb = t[b.inputs[0]];
            d.push.u[5] = uint32_t(xb.shape[1]);
            count = uint64_t(xa.shape[0]) * uint64_t(xa.shape[1] + xb.shape[1]) * uint64_t((xa.shape[2] + 1) / 2);
            if (!stores.empty()) {
                // K's rotated rows and V go to the caches (see shaders/rope.comp, STORE).
                const hetero_tensor_desc& kc = t[stores[0].output];
                d.shader += "_store";
                d.operand[3] = stores[1].inputs[0];
                d.operand[kFirstOutput + 1] = stores[0].output;
                d.operand[kFirstOutput + 2] = stores[1].output;
                d.push.u[6] = uint32_t(kc.shape[0]);
                d.push.u[7] = kc.dtype == HETERO_DTYPE_F16 ? 1u : 0u;
                count += uint64_t(xb.shape[0]) * uint64_t(xb.shape[1]) * uint64_t((xb.shape[2] + 1) / 2);
            }
        } else {
            count = 2 * uint64_t(t[a.inputs[0]].shape[0]) * uint64_t(sdk::row_width(t[a.inputs[0]]));
        }
        grid(d, dev, ceil_div(count, 256));
        return d;
    }
    const hetero_tensor_desc& x = t[a.inputs[0]];
    const hetero_tensor_desc& w = t[a.inputs[1]];
    const int32_t none = -1;
    const std::string wt = "w" + std::to_string(w.dtype);
    const bool gemm = x.shape[0] > kMatvecMaxRows;
    if ((norm || swiglu) && gemm) fail(HETERO_ERR_INTERNAL, "vulkan: a norm or swiglu fused into a GEMM group");
    const std::string shader = gemm ? "matmul_coop_multi_"
                                    : std::string("matvec_multi_") + (norm ? "norm_" : "") + (swiglu ? "swiglu_" : "") +
                                          (dev.subgroup_arithmetic ? "sg_" : "");
    Dispatch d = make(shader + wt, first_index,
                      {norm ? norm->inputs[0] : a.inputs[0], a.inputs[1], b.inputs[1], members.size() > 2 ? members[2].inputs[1] : none},
                      swiglu ? swiglu->output : a.output);
    d.operand[kFirstOutput + 1] = swiglu ? none : b.output;
    d.operand[kFirstOutput + 2] = members.size() > 2 ? members[2].output : none;
    if (norm) {
        d.operand[kFirstOutput + kOutputs] = norm->inputs[1];
        d.push.f[0] = norm->fparams[0];
    }
    uint32_t m[kMaxGroup] = {0, 0, 0};
    for (size_t i = 0; i < members.size(); ++i) m[i] = uint32_t(t[members[i].inputs[1]].shape[0]);
    // Output rows per workgroup: the GEMM's tile, or the matvec's rows.
    uint32_t wg = 0, rows = 0, x_rows = 0;
    if (gemm) {
        const GemmTile tile = coop_gemm_shape(d, {m[0], m[1], m[2]}, uint64_t(x.shape[0]));
        rows = tile.m;
        x_rows = tile.n;
    } else {
        quant_matvec_shape(w.dtype, sdk::row_width(x), wg, rows);
        d.spec = {wg, rows};
    }
    uint64_t blocks = 0;
    for (size_t i = 0; i < members.size(); ++i) blocks += ceil_div(m[i], rows);
    if (swiglu) blocks = ceil_div(m[0], rows);  // each workgroup takes the same rows of gate and up
    if (gemm) {
        d.groups[0] = uint32_t(blocks);
        d.groups[1] = ceil_div(uint64_t(x.shape[0]), x_rows);
    } else {
        grid(d, dev, blocks);
        d.groups[2] = uint32_t(x.shape[0]);
    }
    d.push.u[0] = uint32_t(x.shape[0]);
    d.push.u[1] = m[0];
    d.push.u[2] = uint32_t(sdk::row_width(x));
    d.push.u[3] = 0;
    d.push.u[4] = m[1];
    d.push.u[5] = m[2];
    return d;
}

}  // namespace hetero::vk
