// Lowers the nodes of one graph to kernel launches on one OpenCL device:
// picks the kernel of each node or fused launch (cl_fusion.hpp), sets its
// arguments once (a bound tensor's buffer and offset are left to each run),
// sizes its grid, and decides which layout of the weights each matmul reads.
//
//   cl_lowering.cpp       the node -> launch switch, elementwise ops, ROPE + K/V stores
//   cl_attention.cpp      attention: tensor-core, tiled or per-row kernel
//   cl_matmul.cpp         matmul launches: planar matvec, matvec, GEMM, tensor-core GEMM
//   cl_weight_layout.cpp  which layout of the weights a matmul reads (planar, copies)
// Kernel parameter lists: cl_kernel_signatures.hpp; matmul kernel names:
// cl_matmul_kernels.hpp.
#pragma once

#include "cl_device.hpp"
#include "cl_fusion.hpp"
#include "cl_kernel_signatures.hpp"

#include <hetero/sdk/provider.hpp>

#include <memory>
#include <string>
#include <vector>

namespace hetero::opencl {

// One kernel launch of an executable.
struct Launch {
    KernelPtr kernel;
    cl_uint dims = 1;
    size_t global[3] = {1, 1, 1};
    size_t local[3] = {1, 1, 1};
    std::vector<BoundArg> bound;
    // Kernels that take their scalars as one struct (matvec_planar.cl):
    // its bytes and argument index, re-set when a bound offset in it changes.
    std::vector<unsigned char> params;
    cl_uint params_arg = 0;
    std::string label;   // kernel and shapes, for the profile
    uint64_t bytes = 0;  // operand traffic, for the profile's GB/s

    // set_args (cl_kernel_args.hpp) on this launch's kernel.
    template <class Params, class Before = KernelParams<>, class... V>
    void set_args(const V&... values) {
        opencl::set_args<Params, Before>(kernel.get(), bound, values...);
    }
};

// Kernels address tensors through typed pointers, so offsets must respect
// the element alignment: throws where `offset` does not.
void check_alignment(const hetero_tensor_desc& t, uint32_t id, uint64_t offset);
// Throws HETERO_ERR_INVALID_ARGUMENT: "tensor <id> (<name>)<what>".
[[noreturn]] void tensor_error(const hetero_tensor_desc& t, int64_t id, const std::string& what);

// Whether a prefill GEMM over `wtype` weights runs on tensor cores.
bool mma_gemm(const Program& program, uint32_t wtype);
// Up to this many tokens (a server's batched decode step) a matmul over
// `wtype` weights runs on the decode kernels; more run on the (tensor-core)
// GEMM. The fusions ask it too: a norm or SwiGLU joins decode launches only.
int64_t matvec_rows(const Program& program, uint32_t wtype);

// Bytes of x16, the f16 copy of x the tensor-core GEMMs read (0: none runs).
uint64_t x16_bytes(const sdk::Graph& g, const Fusions& fusions, const Program& program);

// Device memory of an executable that its launches use.
struct LaunchMemory {
    cl_mem arena = nullptr;               // internal tensors,
    std::vector<uint64_t> offset;         // at these offsets (per tensor; the static memory plan)
    cl_mem error_flag = nullptr;          // raised by kernels on out-of-range ids or positions
    cl_mem x16 = nullptr;                 // x of the tensor-core GEMMs as f16 (x16_bytes)
};

class Lowering {
public:
    Lowering(const sdk::Graph& graph, const std::vector<sdk::BoundTensor>& constants, ClDevice& device, const Program& program,
             const LaunchMemory& memory);

    // Appends the launches of node n: its own, or those of the fused launch
    // starting there; none for a node an earlier launch runs.
    void lower(uint32_t n, const Fusions& fusions);
    std::vector<Launch>& launches() { return launches_; }
    // Copies of weights the launches read; they must outlive them.
    std::vector<std::shared_ptr<const PlanarWeights>>& weight_copies() { return planar_; }

private:
    // cl_lowering.cpp
    // Where a kernel finds a tensor: internal and constant tensors now, bound
    // ones at each run.
    BufferAt at(int32_t tensor) const;
    Launch start(const char* kernel) const { return start(program_, kernel); }
    Launch start(const Program& program, const char* kernel) const;
    // Labels the launch for the profile and appends it.
    void finish(Launch l, const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs);
    void add_node(uint32_t index, const hetero_node& node);
    void add_embedding(uint32_t index, const hetero_node& node);
    void add_rmsnorm(const hetero_node& node);
    void add_rope(const hetero_node& node);
    void add_elementwise(const hetero_node& node);  // SWIGLU, GEGLU, SOFTCAP, ADD, MUL
    void add_softmax(const hetero_node& node);
    void add_convert(const hetero_node& node);
    void add_store_rows(uint32_t index, const hetero_node& node);
    // Nodes n..n+3: the ROPE pair and the K/V stores (see cl_fusion.cpp).
    void add_rope_store(uint32_t n);

    // cl_attention.cpp
    void add_attention(uint32_t index, const hetero_node& node);

    // cl_matmul.cpp
    void add_matmul(const MatmulLaunch& mm);
    bool biases_share_a_buffer(const MatmulLaunch& mm) const;
    void add_matmuls_apart(const MatmulLaunch& mm);
    // The decode launch of the planar kernels (its argument layout is theirs):
    // over the planar copies, or with none over the weights in place (Q4_0 /
    // Q8_0 rewritten planar, Q4_K / Q5_K as they are).
    void add_planar_matvec(const MatmulLaunch& mm, const std::vector<std::shared_ptr<const PlanarWeights>>& planar,
                           const std::string& name);
    // The launch converting a tensor-core GEMM's x to f16 in x16.
    void add_x16_stage(const MatmulLaunch& mm);

    // cl_weight_layout.cpp
    // Planar copies of the launch's weights for the planar matvec kernels, or
    // none where those cannot run it (weights not constant or not Q4_0/Q8_0/Q6_K,
    // no room for a copy, a work-group limit under 32).
    std::vector<std::shared_ptr<const PlanarWeights>> planar_copies(const MatmulLaunch& mm, int64_t K, size_t wg_cap);
    // The device's copies of the launch's constant Q4_0/Q8_0/Q6_K weights
    // (PlanarWeightCache: planar planes, Q6_K's 224-byte blocks), made where
    // missing and kept for this executable's life; none if any is out of reach.
    std::vector<std::shared_ptr<const PlanarWeights>> weight_copies(const MatmulLaunch& mm, int64_t K);
    // Whether the planar kernels can take the launch at all (switch on, work-
    // group limit of 32 or more, x's int8 form fits local memory).
    bool planar_kernel_fits(const MatmulLaunch& mm, uint32_t dtype, int64_t K, size_t wg_cap) const;
    // Whether the planar kernels are switched on and x's int8 form (row
    // width K) fits the device's local memory.
    bool planar_x_fits(int64_t K) const;
    // Whether every use of Q4_0/Q8_0 weights of row width K can read the
    // planar layout (switch on, x's int8 form fits local memory, each decode
    // kernel shape runs in 32 work-items).
    bool planar_layout_fits(uint32_t dtype, int64_t K) const;
    // Whether constant `w` may be rewritten in the planar layout: Q4_0/Q8_0,
    // in device memory, 16-byte aligned, planar_layout_fits.
    bool planar_eligible(int32_t w) const;
    // Whether the weights `ws` are read in the planar layout: all eligible,
    // and then rewritten (once; later executables find them so). The caller
    // must then bind them to kernels that take the layout.
    bool planar_constants(const int32_t* ws, int count);
    bool planar_constants(const MatmulLaunch& mm) { return planar_constants(mm.w, mm.count); }
    // Whether the launch's Q4_K / Q5_K weights can be read in place by the
    // planar kernels' int8 form (kernels/kquant.cl): constant, 16-byte aligned.
    bool int8_kquant_matvec(const MatmulLaunch& mm, int64_t K, size_t wg_cap) const;

    const sdk::Graph& graph_;
    const std::vector<sdk::BoundTensor>& constants_;
    ClDevice& device_;
    const Program& program_;
    const LaunchMemory& memory_;
    std::vector<Launch> launches_;
    std::vector<std::shared_ptr<const PlanarWeights>> planar_;  // copies the planar kernels read
    std::vector<int32_t> planar_reads_;  // sorted: constants bound in the planar layout
};

}  // namespace hetero::opencl
