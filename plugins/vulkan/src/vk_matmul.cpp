// MATMUL dispatches: the matrix-vector shader for decode (shaders/matvec.comp),
// the tensor-core GEMM (matmul_coop.comp) or the f32 tiled GEMM (matmul.comp)
// for more rows, and their multi-matrix forms for node groups (Q/K/V,
// gate/up) with a fused RMSNORM or SWIGLU; the workgroup shape and grid of
// each.
#include "vk_lowering.hpp"

#include <hetero/sdk/quant.hpp>

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

std::string weight_suffix(const hetero_tensor_desc& w) { return "w" + std::to_string(w.dtype); }

// The arguments of a multi-matrix dispatch: the members' matrices over one
// x (a fused norm's input), the SWIGLU's output in place of the pair's.
MultiMatmulArgs multi_matmul_args(const std::vector<hetero_node>& members, const hetero_tensor_desc* t, const hetero_node* norm,
                                  const hetero_node* swiglu) {
    const hetero_node &a = members[0], &b = members[1];
    const hetero_node* c = members.size() > 2 ? &members[2] : nullptr;
    const hetero_tensor_desc& x = t[a.inputs[0]];
    MultiMatmulArgs args{.x = norm ? norm->inputs[0] : a.inputs[0],
                         .w = {a.inputs[1], b.inputs[1], c ? c->inputs[1] : -1},
                         .y = {swiglu ? swiglu->output : a.output, swiglu ? -1 : b.output, c ? c->output : -1},
                         .norm_weight = norm ? norm->inputs[1] : -1,
                         .rows = uint32_t(x.shape[0]),
                         .in_dim = uint32_t(sdk::row_width(x)),
                         .out_dims = {0, 0, 0},
                         .eps = norm ? norm->fparams[0] : 0.f};
    for (size_t i = 0; i < members.size(); ++i) args.out_dims[i] = uint32_t(t[members[i].inputs[1]].shape[0]);
    return args;
}

}  // namespace

Dispatch lower_matmul(const NodeLowering& n, const ResidualFusion& fusion) {
    const int32_t* in = n.in();
    const hetero_tensor_desc& x = n.t[in[0]];
    const hetero_tensor_desc& w = n.t[in[1]];
    const int64_t N = x.shape[0], K = sdk::row_width(x), M = w.shape[0];
    const bool residual = fusion.residual >= 0, bias = n.node.n_inputs == 3;
    const MatmulArgs args{.x = in[0],
                          .w = in[1],
                          .extra = residual ? fusion.residual : bias ? in[2] : -1,
                          .y = n.out,
                          .rows = uint32_t(N),
                          .out_dim = uint32_t(M),
                          .in_dim = uint32_t(K),
                          .extra_kind = residual ? MatmulExtra::Residual : bias ? MatmulExtra::Bias : MatmulExtra::None};
    const std::string wt = weight_suffix(w);
    if (N <= kMatvecMaxRows) {
        Dispatch d = dispatch((n.dev.subgroup_arithmetic ? "matvec_sg_" : "matvec_") + wt, n.index, args);
        uint32_t wg = kMatvecWG, rows = kMatvecRowsPerWG;
        if (sdk::is_quant_dtype(w.dtype)) quant_matvec_shape(w.dtype, K, wg, rows);
        d.spec = {wg, rows};
        grid(d, n.dev, ceil_div(uint64_t(M), rows));
        d.groups[2] = uint32_t(N);
        return d;
    }
    if (use_coopmat(n.dev, w.dtype)) {
        Dispatch d = dispatch("matmul_coop_" + wt, n.index, args);
        const GemmTile tile = coop_gemm_shape(d, {uint64_t(M)}, uint64_t(N));
        d.groups[0] = ceil_div(uint64_t(M), tile.m);
        d.groups[1] = ceil_div(uint64_t(N), tile.n);
        return d;
    }
    Dispatch d = dispatch("matmul_" + wt, n.index, args);
    d.groups[0] = ceil_div(uint64_t(M), kGemmTile);
    d.groups[1] = ceil_div(uint64_t(N), kGemmTile);
    return d;
}

Dispatch lower_matmul_group(const DeviceInfo& dev, const std::vector<hetero_node>& members, uint32_t first_index,
                            const hetero_tensor_desc* t, const hetero_node* norm, const hetero_node* swiglu) {
    const hetero_tensor_desc& x = t[members[0].inputs[0]];
    const hetero_tensor_desc& w = t[members[0].inputs[1]];
    const bool gemm = x.shape[0] > kMatvecMaxRows;
    if ((norm || swiglu) && gemm) fail(HETERO_ERR_INTERNAL, "vulkan: a norm or swiglu fused into a GEMM group");
    const std::string shader = gemm ? "matmul_coop_multi_"
                                    : std::string("matvec_multi_") + (norm ? "norm_" : "") + (swiglu ? "swiglu_" : "") +
                                          (dev.subgroup_arithmetic ? "sg_" : "");
    const MultiMatmulArgs args = multi_matmul_args(members, t, norm, swiglu);
    Dispatch d = dispatch(shader + weight_suffix(w), first_index, args);
    const uint32_t* m = args.out_dims;
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
    return d;
}

}  // namespace hetero::vk
