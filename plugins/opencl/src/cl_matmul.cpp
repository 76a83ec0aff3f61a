// Matmul launches (MatmulLaunch, cl_fusion.hpp): the choice among the planar
// decode kernels, the plain matvec, the GEMM and the tensor-core GEMM, and
// the arguments and grid of each.
#include "cl_lowering.hpp"
#include "cl_matmul_kernels.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace hetero::opencl {
namespace {

// Where the planar kernels read the byte offsets of the matrices' weights and
// outputs in PlanarParams.
constexpr size_t kPqWField[3] = {offsetof(PlanarParams, w0off), offsetof(PlanarParams, w1off), offsetof(PlanarParams, w2off)};
constexpr size_t kPqYField[3] = {offsetof(PlanarParams, y0off), offsetof(PlanarParams, y1off), offsetof(PlanarParams, y2off)};

}  // namespace

// Up to this many tokens (a server's batched decode step) run on the decode
// kernels, a work-group row per token, instead of the prefill GEMM: its tiles
// of 32-128 tokens would be mostly padding, and its launch costs more than
// the weight reads the tokens share. The tensor-core GEMM's tiles are 128
// tokens: up to 32 tokens the decode kernels were as fast or faster (H200,
// 1.1B Q4_0, steps of 12 / 16 / 32 sequences: 2,820 / 3,015 / 3,273 tok/s
// against 1,525 / 1,927 / 3,291). HETERO_CL_MATVEC_TOKENS=N (1..64) sets it.
int64_t matvec_rows(const Program& program, uint32_t wtype) {
    static const long given = [] {
        const char* e = std::getenv("HETERO_CL_MATVEC_TOKENS");
        const long v = e && *e ? std::strtol(e, nullptr, 10) : 0;
        return v >= 1 && v <= 64 ? v : 0L;
    }();
    return given ? int64_t(given) : mma_gemm(program, wtype) ? 32 : 8;
}

bool mma_gemm(const Program& program, uint32_t wtype) {
    if (!program.mma() || !mma_weight_type(wtype)) return false;
    const size_t group = mma_tiling().group();
    return program.group_size(mma_gemm_kernel(wtype, false).c_str(), group) >= group &&
           (!sdk::is_block_dtype(wtype) || program.group_size(mma_gemm_kernel(wtype, true).c_str(), group) >= group);
}

uint64_t x16_bytes(const sdk::Graph& g, const Fusions& fusions, const Program& program) {
    uint64_t bytes = 0;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        const MatmulLaunch& mm = fusions.matmul[n];
        if (fusions.absorbed[n] || mm.count == 0) continue;
        const hetero_tensor_desc& x = g.tensors[size_t(mm.x)];
        if (x.shape[0] > 1 && mma_gemm(program, g.tensors[size_t(mm.w[0])].dtype))
            bytes = std::max<uint64_t>(bytes, 2 * uint64_t(sdk::element_count(x)));
    }
    return bytes;
}

void Lowering::add_matmul(const MatmulLaunch& mm) {
    const auto& T = graph_.tensors;
    const hetero_tensor_desc& x = T[size_t(mm.x)];
    const uint32_t wtype = T[size_t(mm.w[0])].dtype;
    const int64_t N = x.shape[0], K = sdk::row_width(x);
    const bool matvec = N <= matvec_rows(program_, wtype);
    const bool norm = mm.norm_weight >= 0;
    // A norm-fused launch normalises x once per work-group: 8 rows a group
    // amortise that better than 4 (H100, Q4_0: Q/K/V 21.2 -> 17.5 us).
    const size_t wg_cap = norm ? 256 : 128;
    // Q4_0/Q8_0 weights rewritten in the planar layout are read so by every
    // kernel; others may have a planar copy for decode.
    const bool planar_layout = planar_constants(mm);
    const std::vector<std::shared_ptr<const PlanarWeights>> planar =
        matvec && !planar_layout ? planar_copies(mm, K, wg_cap) : std::vector<std::shared_ptr<const PlanarWeights>>{};
    const bool in_place = matvec && planar.empty() && (planar_layout || int8_kquant_matvec(mm, K, wg_cap));
    std::string name = matvec ? matvec_kernel(wtype) : gemm_kernel(wtype, planar_layout);
    // The rope_store group runs inside the planar kernel, or after the launch.
    // (The fusions attach a rope_store group to one-token launches only, and
    // a norm or a SwiGLU to decode launches only.)
    const bool rope = mm.rope_node >= 0 && (!planar.empty() || in_place);
    if (fused_weight_type(wtype) && matvec)  // matvec_[swiglu_][norm_][planar_][rope_]<type>
        name = quant_matvec_kernel(wtype, mm.swiglu, norm, !planar.empty() || in_place, rope);
    if (mm.bias_mode == 3 && ((planar.empty() && !in_place) || !biases_share_a_buffer(mm))) return add_matmuls_apart(mm);
    if (!planar.empty() || in_place) return add_planar_matvec(mm, planar, name);
    // Quantized prefill GEMMs run on tensor cores where the program has them,
    // reading x as f16 from x16.
    const bool mma = !matvec && mma_gemm(program_, wtype);
    // Q6_K on tensor cores reads the 16-byte aligned copy the decode kernels
    // read (made here if prefill comes first), where there is room for one.
    const std::vector<std::shared_ptr<const PlanarWeights>> aligned =
        mma && wtype == HETERO_DTYPE_Q6_K && program_.group_size("gemm_mma_aligned_q6_k", mma_tiling().group()) >= mma_tiling().group()
            ? weight_copies(mm, K)
            : std::vector<std::shared_ptr<const PlanarWeights>>{};
    if (mma) {
        name = aligned.empty() ? mma_gemm_kernel(wtype, planar_layout) : "gemm_mma_aligned_q6_k";
        add_x16_stage(mm);
    }
    Launch l = start(name.c_str());
    const BufferAt unused{memory_.error_flag, 0};  // any valid buffer; the kernel never touches it
    BufferAt w[3] = {unused, unused, unused}, y[3] = {unused, unused, unused};
    cl_int M[3] = {0, 0, 0};
    std::vector<int32_t> inputs{mm.x}, outputs;
    int64_t rows = 0;
    for (int i = 0; i < mm.count; ++i) {
        w[i] = aligned.empty() ? at(mm.w[i]) : BufferAt{aligned[size_t(i)]->mem, 0};
        inputs.push_back(mm.w[i]);
        if (mm.y[i] >= 0) {
            y[i] = at(mm.y[i]);
            outputs.push_back(mm.y[i]);
        }
        M[i] = cl_int(T[size_t(mm.w[i])].shape[0]);
        rows += T[size_t(mm.w[i])].shape[0];
    }
    const BufferAt bias = mm.bias >= 0 ? at(mm.bias) : unused;
    if (mm.bias >= 0) inputs.push_back(mm.bias);
    l.set_args<MatmulOperands>(mma ? BufferAt{memory_.x16, 0} : at(mm.x), w[0], y[0], M[0], w[1], y[1], M[1], w[2], y[2], M[2], bias,
                               cl_int(mm.bias_mode));
    if (matvec) {
        size_t wg = program_.group_size(name.c_str(), wg_cap);
        const size_t lanes = std::min<size_t>(32, wg);
        // Work items per group: a row (rows_per_group of them).
        size_t items = size_t(rows), rows_per_group = wg / lanes;
        if (mm.swiglu) items = size_t(T[size_t(mm.w[0])].shape[0]);
        l.set_args<MatvecTail, MatmulOperands>(cl_int(K), cl_int(lanes), LocalFloats{wg});
        if (norm) {
            l.set_args<MatvecNormTail, MatvecParams>(at(mm.norm_weight), cl_float(mm.norm_eps), LocalFloats{size_t(K)});
            inputs.push_back(mm.norm_weight);
        }
        l.dims = 2;  // a work-group row per token
        l.local[0] = wg;
        l.global[0] = std::max<size_t>(1, (items + rows_per_group - 1) / rows_per_group) * wg;
        l.local[1] = 1;
        l.global[1] = size_t(N);
    } else {
        const GemmConfig& gc = program_.gemm();
        const size_t tile_m = mma ? size_t(mma_tiling().tile_m()) : size_t(gc.bm()), tile_n = mma ? size_t(mma_tiling().tile_n()) : size_t(gc.bn());
        const size_t group = mma ? mma_tiling().group() : size_t(gc.wg());
        size_t gemm_tiles = 0;
        for (int i = 0; i < mm.count; ++i) gemm_tiles += (size_t(T[size_t(mm.w[i])].shape[0]) + tile_m - 1) / tile_m;
        l.set_args<GemmTail, MatmulOperands>(cl_int(N), cl_int(K));
        l.dims = 2;
        l.local[0] = group;
        l.global[0] = std::max<size_t>(1, gemm_tiles) * group;
        l.global[1] = (size_t(N) + tile_n - 1) / tile_n;
    }
    finish(std::move(l), inputs, outputs);
    if (mm.rope_node >= 0) add_rope_store(uint32_t(mm.rope_node));
}

// The planar kernels read a group's biases from one buffer (bb) at three
// offsets: the model's constants, where they share one.
bool Lowering::biases_share_a_buffer(const MatmulLaunch& mm) const {
    const BufferAt first = at(mm.biases[0]);
    for (int i = 0; i < mm.count; ++i) {
        const BufferAt b = at(mm.biases[i]);
        if (b.bound >= 0 || b.mem != first.mem) return false;
    }
    return true;
}

// A group with a bias per matrix where no kernel takes it: one launch per
// matrix (each normalising x itself where the group had a fused RMSNORM),
// then the rope_store group.
void Lowering::add_matmuls_apart(const MatmulLaunch& mm) {
    for (int i = 0; i < mm.count; ++i) {
        MatmulLaunch one;
        one.count = 1;
        one.x = mm.x;
        one.w[0] = mm.w[i];
        one.y[0] = mm.y[i];
        one.bias = mm.biases[i];
        one.bias_mode = 1;
        one.norm_weight = mm.norm_weight;
        one.norm_eps = mm.norm_eps;
        add_matmul(one);
    }
    if (mm.rope_node >= 0) add_rope_store(uint32_t(mm.rope_node));
}

void Lowering::add_planar_matvec(const MatmulLaunch& mm, const std::vector<std::shared_ptr<const PlanarWeights>>& planar,
                                 const std::string& name) {
    const auto& T = graph_.tensors;
    const int64_t N = T[size_t(mm.x)].shape[0], K = sdk::row_width(T[size_t(mm.x)]);
    const bool rope = mm.rope_node >= 0;
    const hetero_node* rope_nodes = rope ? &graph_.nodes[size_t(mm.rope_node)] : nullptr;  // ROPE q, ROPE k, STORE k, STORE v
    Launch l = start(name.c_str());
    PlanarParams p{};
    // A tensor's buffer, its byte offset written at `field` of p (a bound
    // tensor's at each run).
    auto place = [&](int32_t tensor, size_t field) {
        const BufferAt a = at(tensor);
        std::memcpy(reinterpret_cast<unsigned char*>(&p) + field, &a.offset, sizeof a.offset);
        return PointerAt{a, int32_t(field)};
    };
    const PointerAt unused{BufferAt{memory_.error_flag, 0}};  // never touched
    const PointerAt x = place(mm.x, offsetof(PlanarParams, xoff));
    PointerAt w[3], y[3];
    std::vector<int32_t> inputs{mm.x}, outputs;
    int64_t tiles = 0;
    cl_int* M[3] = {&p.M0, &p.M1, &p.M2};
    for (int i = 0; i < 3; ++i) {
        if (i < mm.count && planar.empty()) w[i] = place(mm.w[i], kPqWField[i]);  // read in place
        else w[i] = PointerAt{BufferAt{i < mm.count ? planar[size_t(i)]->mem : memory_.error_flag, 0}};  // the planes start at 0
        if (i < mm.count) inputs.push_back(mm.w[i]);
        // Fused rope_store: rotated q, then the k and v caches.
        const int32_t yt = rope ? (i == 0 ? rope_nodes[0].output : rope_nodes[i + 1].output) : i < mm.count ? mm.y[i] : -1;
        y[i] = unused;
        if (yt >= 0) {
            y[i] = place(yt, kPqYField[i]);
            outputs.push_back(yt);
        }
        *M[i] = i < mm.count ? cl_int(T[size_t(mm.w[i])].shape[0]) : 0;
        tiles += (*M[i] + kPlanarRows - 1) / kPlanarRows;
    }
    if (mm.swiglu) tiles = (p.M0 + kPlanarRows - 1) / kPlanarRows;
    PointerAt bias = unused, norm, positions;
    if (mm.bias >= 0) {
        bias = place(mm.bias, offsetof(PlanarParams, boff));
        inputs.push_back(mm.bias);
    }
    if (mm.bias_mode == 3) {  // one buffer (biases_share_a_buffer), an offset per matrix
        constexpr size_t kField[3] = {offsetof(PlanarParams, boff), offsetof(PlanarParams, b1off), offsetof(PlanarParams, b2off)};
        for (int i = 0; i < mm.count; ++i) {
            const PointerAt b = place(mm.biases[i], kField[i]);
            if (i == 0) bias = b;
            inputs.push_back(mm.biases[i]);
        }
    }
    p.has_bias = mm.bias_mode;
    p.K = cl_int(K);
    const size_t wg = planar_group_size(size_t(tiles), program_.group_size(name.c_str(), 256), device_.info().compute_units);
    if (mm.norm_weight >= 0) {
        norm = place(mm.norm_weight, offsetof(PlanarParams, nwoff));
        inputs.push_back(mm.norm_weight);
        p.eps = mm.norm_eps;
    }
    if (rope) {
        const hetero_tensor_desc &q = T[size_t(rope_nodes[0].inputs[0])], &kc = T[size_t(rope_nodes[2].output)];
        positions = place(rope_nodes[0].inputs[1], offsetof(PlanarParams, poff));
        inputs.push_back(rope_nodes[0].inputs[1]);
        p.Hd = cl_int(q.shape[2]);
        p.rot = cl_int(sdk::rope_dims(rope_nodes[0], q.shape[2]));
        p.base = rope_nodes[0].fparams[0];
        p.C = cl_int(kc.shape[0]);
        p.cache_f16 = kc.dtype == HETERO_DTYPE_F16;
        p.node = mm.rope_node + 2;
    }
    l.set_args<PlanarMatvecParams>(x, w[0], y[0], w[1], y[1], w[2], y[2], bias, p, LocalFloats{planar_local_floats(K, wg)});
    if (mm.norm_weight >= 0) l.set_args<PlanarNormTail, PlanarMatvecParams>(norm);
    if (rope) l.set_args<PlanarRopeTail, Concat<PlanarMatvecParams, PlanarNormTail>>(positions, memory_.error_flag);
    l.params.resize(sizeof p);
    std::memcpy(l.params.data(), &p, sizeof p);
    l.params_arg = kFirstArgOf<PlanarMatvecParams, PlanarParams>;
    // A tile of kPlanarRows rows (gate and up rows each with SwiGLU) per
    // kPlanarLanes work-items.
    const size_t tiles_per_group = wg / kPlanarLanes;
    l.dims = 2;  // a work-group row per token
    l.local[0] = wg;
    l.global[0] = std::max<size_t>(1, (size_t(tiles) + tiles_per_group - 1) / tiles_per_group) * wg;
    l.local[1] = 1;
    l.global[1] = size_t(N);
    finish(std::move(l), inputs, outputs);
}

void Lowering::add_x16_stage(const MatmulLaunch& mm) {
    if (!memory_.x16) sdk::fail(HETERO_ERR_INTERNAL, "tensor-core GEMM without its f16 activation buffer");
    const uint64_t n = uint64_t(sdk::element_count(graph_.tensors[size_t(mm.x)]));  // a multiple of 32: K is
    Launch l = start("stage_x_f16");
    l.set_args<StageXF16Params>(at(mm.x), memory_.x16, cl_ulong(n / 4));
    l.dims = 1;
    l.local[0] = 64;
    l.global[0] = size_t((n / 4 + 63) / 64 * 64);
    finish(std::move(l), {mm.x}, {});
}

}  // namespace hetero::opencl
