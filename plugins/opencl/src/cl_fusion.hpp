// Fusions of the OpenCL provider: which nodes run inside another node's
// launch (Q/K/V and gate/up matmuls grouped over one x, a SwiGLU, RMSNorm,
// residual ADD or rope_store group fused into the matmul launch, a ROPE pair
// with its K/V stores in one rope_store launch), and the graph the memory
// plan is made from, in which a fused launch's inputs stay alive until its
// last node. HETERO_CL_FUSE=0 turns fusions off.
#pragma once

#include <hetero/sdk/provider.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace hetero::opencl {

// One launch of the matmul kernels: up to three MATMULs over the same x (a
// node group: Q, K and V; gate and up), optionally running the SWIGLU after
// a gate/up pair or, for a single MATMUL, the residual ADD after it; and the
// RMSNORM before it. SwiGLU and RMSNORM join decode launches only (rows of x
// up to the matvec kernels' limit, MatvecRows), never a GEMM.
struct MatmulLaunch {
    int count = 0;  // matrices; 0 = no matmul launch starts at this node
    int32_t x = -1;
    int32_t w[3] = {-1, -1, -1};
    int32_t y[3] = {-1, -1, -1};  // outputs; with `swiglu`, y[0] is the SWIGLU's
    int32_t bias = -1;
    // 1: the MATMUL's bias [M]; 2: a fused residual [N, M]; 3: each matrix
    // its own bias [M_i], in `biases` (a decode Q/K/V group with biases, as
    // Qwen2's attention has).
    int bias_mode = 0;
    int32_t biases[3] = {-1, -1, -1};
    bool swiglu = false;
    int32_t norm_weight = -1;  // >= 0: x is the input of an RMSNORM the launch runs first
    float norm_eps = 0.f;
    // >= 0: the Q/K/V launch also runs the rope_store group of nodes starting
    // here (fused into the planar decode kernel, else launched after it).
    int32_t rope_node = -1;
};

struct Fusions {
    std::vector<MatmulLaunch> matmul;  // per node: the matmul launch starting there
    std::vector<bool> absorbed;        // per node: run by an earlier node's launch
    sdk::Graph planned;
    std::vector<bool> rope_store;      // per node: a rope_store launch starts here (nodes n..n+3, see cl_fusion.cpp)
};

// The most activation rows a matmul over weights of this dtype runs on the
// decode (matvec) kernels for; more run as a GEMM.
using MatvecRows = std::function<int64_t(uint32_t weight_dtype)>;

Fusions find_fusions(const sdk::Graph& g, const MatvecRows& matvec_rows);

}  // namespace hetero::opencl
