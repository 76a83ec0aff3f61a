// A compiled subgraph on one OpenCL device: a kernel object per node with its
// arguments set once at compile time, internal tensors in one device arena
// laid out by the SDK's static memory plan, and a small error-flag buffer the
// kernels raise on out-of-range ids or positions.
#pragma once

#include "cl_device.hpp"

#include <hetero/sdk/dispatch_profile.hpp>
#include <hetero/sdk/provider.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace hetero::opencl {

// Where a kernel argument pair (buffer, byte offset) takes a bound tensor.
struct BoundArg {
    uint32_t tensor;
    cl_uint arg;  // index of the buffer argument; the offset follows it
    int32_t param_offset = -1;  // >= 0: the offset is this byte of the launch's params instead
    cl_mem last_mem = nullptr;
    uint64_t last_offset = ~uint64_t(0);
};

// One launch of the matmul kernels: up to three MATMULs over the same x (a
// node group: Q, K and V; gate and up), optionally running the SWIGLU after
// a gate/up pair (one activation row only) or, for a single MATMUL, the
// residual ADD after it; for one activation row also the RMSNORM before it.
struct MatmulLaunch {
    int count = 0;  // matrices; 0 = no matmul launch starts at this node
    int32_t x = -1;
    int32_t w[3] = {-1, -1, -1};
    int32_t y[3] = {-1, -1, -1};  // outputs; with `swiglu`, y[0] is the SWIGLU's
    int32_t bias = -1;
    int bias_mode = 0;  // 1: the MATMUL's bias [M]; 2: a fused residual [N, M]
    bool swiglu = false;
    int32_t norm_weight = -1;  // >= 0: x is the input of an RMSNORM the launch runs first
    float norm_eps = 0.f;
    // >= 0: the Q/K/V launch also runs the rope_store group of nodes starting
    // here (fused into the planar decode kernel, else launched after it).
    int32_t rope_node = -1;
};

struct Launch {
    cl_kernel kernel = nullptr;
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
};

class ClExecutable final : public sdk::Executable {
public:
    ClExecutable(uint32_t device_index, ClDevice& device, const Program& program, sdk::Graph graph,
                 const std::vector<sdk::BoundTensor>& constants);
    ~ClExecutable() override;
    ClExecutable(const ClExecutable&) = delete;
    ClExecutable& operator=(const ClExecutable&) = delete;

    // Enqueues every node; returns an event, or nullptr after waiting when
    // `want_event` is false.
    std::unique_ptr<sdk::Event> run(const std::vector<sdk::BoundTensor>& bound, bool want_event);

private:
    void add_node(uint32_t index, const hetero_node& node, const std::vector<sdk::BoundTensor>& constants);
    void add_matmul(const MatmulLaunch& mm, const std::vector<sdk::BoundTensor>& constants);
    // The decode launch of the planar kernels (its argument layout is theirs):
    // over the planar copies, or with none over the weights in place (Q4_0 /
    // Q8_0 rewritten planar, Q4_K / Q5_K as they are).
    void add_planar_matvec(const MatmulLaunch& mm, const std::vector<std::shared_ptr<const PlanarWeights>>& planar,
                           const std::string& name, const std::vector<sdk::BoundTensor>& constants);
    // Planar copies of the launch's weights for the planar matvec kernels, or
    // none where those cannot run it (weights not constant or not Q4_0/Q8_0/Q6_K,
    // no room for a copy, a work-group limit under 32).
    std::vector<std::shared_ptr<const PlanarWeights>> planar_copies(const MatmulLaunch& mm, int64_t K, size_t wg_cap,
                                                                    const std::vector<sdk::BoundTensor>& constants);
    // The device's copies of the launch's constant Q4_0/Q8_0/Q6_K weights
    // (PlanarWeightCache: planar planes, Q6_K's 224-byte blocks), made where
    // missing and kept for this executable's life; none if any is out of reach.
    std::vector<std::shared_ptr<const PlanarWeights>> weight_copies(const MatmulLaunch& mm, int64_t K,
                                                                    const std::vector<sdk::BoundTensor>& constants);
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
    bool planar_eligible(int32_t w, const std::vector<sdk::BoundTensor>& constants) const;
    // Whether the weights `ws` are read in the planar layout: all eligible,
    // and then rewritten (once; later executables find them so). The caller
    // must then bind them to kernels that take the layout.
    bool planar_constants(const int32_t* ws, int count, const std::vector<sdk::BoundTensor>& constants);
    bool planar_constants(const MatmulLaunch& mm, const std::vector<sdk::BoundTensor>& constants);
    // Whether the launch's Q4_K / Q5_K weights can be read in place by the
    // planar kernels' int8 form (kernels/kquant.cl): constant, 16-byte aligned.
    bool int8_kquant_matvec(const MatmulLaunch& mm, int64_t K, size_t wg_cap, const std::vector<sdk::BoundTensor>& constants);
    // Whether a prefill GEMM over `wtype` weights runs on tensor cores.
    bool mma_gemm(uint32_t wtype) const;
    // The launch converting a tensor-core GEMM's x to f16 in x16_.
    void add_x16_stage(const MatmulLaunch& mm, const std::vector<sdk::BoundTensor>& constants);
    // Nodes n..n+3: the ROPE pair and the K/V stores (see can_fuse_rope_store).
    void add_rope_store(uint32_t n, const std::vector<sdk::BoundTensor>& constants);
    cl_kernel make_kernel(const char* name);
    void release();
    // The launch's profile label and operand bytes (with HETERO_CL_PROFILE=1 only).
    void describe(Launch& l, const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs) const;
    // Runs the enqueued kernels to completion and adds their times to times_.
    void collect_times(const std::vector<cl_event>& events, std::chrono::steady_clock::time_point started);
    // Buffer and byte offset of an internal or constant tensor; none for a
    // bound one (known only at run).
    std::optional<std::pair<cl_mem, cl_ulong>> fixed_location(int32_t tensor, const std::vector<sdk::BoundTensor>& constants) const;
    void set_tensor(Launch& l, cl_uint arg, int32_t tensor, const std::vector<sdk::BoundTensor>& constants);
    // As set_tensor, with the byte offset written at `field` of `params`.
    void set_tensor_field(Launch& l, cl_uint arg, void* params, size_t field, int32_t tensor,
                          const std::vector<sdk::BoundTensor>& constants);

    ClDevice& device_;
    const Program& program_;
    cl_mem arena_ = nullptr;
    cl_mem error_flag_ = nullptr;
    // x of the tensor-core GEMMs as f16, written just before each reads it:
    // rounded once per launch, not once per weight tile, and half the bytes.
    cl_mem x16_ = nullptr;
    std::vector<uint64_t> internal_offset_;
    std::vector<Launch> launches_;
    std::shared_ptr<const std::vector<uint32_t>> node_ops_;  // op of each node, for error messages
    std::unique_ptr<sdk::DispatchTimes> times_;              // HETERO_CL_PROFILE=1 only
    std::vector<std::shared_ptr<const PlanarWeights>> planar_;  // copies the planar kernels read
    std::vector<int32_t> planar_reads_;  // sorted: constants bound in the planar layout
};

// Completion of one execution: waits on the read-back of the error flag that
// follows the last kernel, then reports what the kernels flagged.
class ClEvent final : public sdk::Event {
public:
    ClEvent(cl_command_queue queue, cl_mem flag, std::shared_ptr<const std::vector<uint32_t>> node_ops);
    ~ClEvent() override;
    ClEvent(const ClEvent&) = delete;
    ClEvent& operator=(const ClEvent&) = delete;
    void wait() override;
    // Host memory the flag is read into; `ev` is that read's completion.
    cl_int* flag_storage() { return flag_.data(); }
    void set_event(cl_event ev) { event_ = ev; }

private:
    cl_event event_ = nullptr;
    cl_command_queue queue_;
    cl_mem flag_mem_;
    std::shared_ptr<const std::vector<uint32_t>> node_ops_;
    std::array<cl_int, 4> flag_{};
    bool done_ = false;
};

}  // namespace hetero::opencl
