// A provider built on the reference ops, used to check the conformance kit
// itself: with no fault it must pass every case, including while it
// quantizes activations to Q8_0 and rounds them to f16/bf16 the way real
// providers may; with option fault=<name> it carries one deliberate bug the
// kit must catch.
#include "reference_ops.hpp"

#include <hetero/sdk/host_memory.hpp>
#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using namespace hetero;

const std::vector<std::string> kFaults = {
    "none",               // a correct provider
    "q4_0_nibble_order",  // Q4_0 weights read with the high and low nibble swapped
    "matmul_skip_block",  // the last 32 elements of K are left out of every quantized dot product
    "attention_short",    // attends to rows 0..pos-1 instead of 0..pos
    "rope_wrong_pairs",   // adjacent and halves pairing swapped
    "softmax_no_max",     // exp without subtracting the row maximum
    "store_rows_clobber", // zeroes the cache rows it does not write
    "q8_0_truncate",      // convert to Q8_0 truncates instead of rounding
    "rmsnorm_mean_bias",  // divides the sum of squares by D + 1
    // Misbehaviour the tool's process isolation must survive and report:
    "crash_in_matmul",    // SIGSEGV in the first matmul it executes
    "hang_in_softmax",    // never returns from a softmax
    "exit_in_create",     // exit(0) while the provider is being created
    "refuse_everything",  // op_supported says no to every node
};

class SelftestProvider final : public sdk::HostMemoryProvider {
public:
    explicit SelftestProvider(const sdk::Options& o) {
        sdk::require_known_options(o, {"fault"}, "selftest");
        auto it = o.find("fault");
        fault_ = it == o.end() ? "none" : it->second;
        bool known = false;
        for (const auto& f : kFaults) known = known || f == fault_;
        if (!known) sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "option 'fault': unknown fault '" + fault_ + "'");
        if (fault_ == "exit_in_create") std::exit(0);
    }
    uint32_t device_count() override { return 1; }
    void device_props(uint32_t, hetero_device_props& p) override {
        p.kind = HETERO_DEVICE_CPU;
        p.flags = HETERO_DEVICE_FLAG_UNIFIED_MEMORY;
        std::snprintf(p.name, sizeof p.name, "reference ops");
        std::snprintf(p.driver, sizeof p.driver, "conformance self-test, fault=%s", fault_.c_str());
        p.dtype_mask = (1ull << HETERO_DTYPE_COUNT_1_0) - 1;
    }
    void check_supported(uint32_t, const hetero_node&, const hetero_tensor_desc*, uint32_t, double*) override {
        if (fault_ == "refuse_everything") sdk::fail(HETERO_ERR_UNSUPPORTED, "the self-test provider refuses every node (fault=refuse_everything)");
    }
    std::unique_ptr<sdk::Executable> compile(uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants) override {
        return std::make_unique<sdk::HostExecutable>(device, std::move(graph), constants);
    }
    std::unique_ptr<sdk::Event> execute(sdk::Executable& exe, const std::vector<sdk::BoundTensor>& bound, bool) override {
        auto& host = static_cast<sdk::HostExecutable&>(exe);
        std::vector<uint8_t*> ptrs = host.pointers(bound);
        const auto& g = exe.graph();
        for (const hetero_node& node : g.nodes) run(node, g.tensors, ptrs);
        return nullptr;
    }

private:
    // Runs one node, through the reference with the operands a real provider
    // (or a faulty one) would use.
    void run(hetero_node node, const std::vector<hetero_tensor_desc>& tensors, std::vector<uint8_t*> ptrs) {
        if (node.op == HETERO_OP_MATMUL && fault_ == "crash_in_matmul") std::raise(SIGSEGV);
        if (node.op == HETERO_OP_SOFTMAX && fault_ == "hang_in_softmax")
            for (;;) pause();
        std::vector<hetero_tensor_desc> descs = tensors;
        std::vector<std::vector<uint8_t>> scratch;
        auto replace = [&](int32_t id) -> uint8_t* {
            const auto& t = descs[size_t(id)];
            scratch.emplace_back(ptrs[size_t(id)], ptrs[size_t(id)] + sdk::tensor_bytes(t));
            ptrs[size_t(id)] = scratch.back().data();
            return scratch.back().data();
        };
        switch (node.op) {
            case HETERO_OP_MATMUL: {
                const auto& w = descs[size_t(node.inputs[1])];
                const int64_t k = sdk::row_width(descs[size_t(node.inputs[0])]);
                float* x = reinterpret_cast<float*>(replace(node.inputs[0]));
                const int64_t rows = descs[size_t(node.inputs[0])].shape[0];
                for (int64_t r = 0; r < rows; ++r) round_activations(w.dtype, x + r * k, k);
                if (w.dtype == HETERO_DTYPE_Q4_0 && fault_ == "q4_0_nibble_order") {
                    uint8_t* wq = replace(node.inputs[1]);
                    for (uint64_t b = 0; b < sdk::tensor_bytes(w) / sizeof(sdk::BlockQ4_0); ++b)
                        for (int j = 0; j < 16; ++j) {
                            uint8_t& q = reinterpret_cast<sdk::BlockQ4_0*>(wq)[b].qs[j];
                            q = uint8_t((q >> 4) | (q << 4));
                        }
                }
                if (sdk::is_block_dtype(w.dtype) && fault_ == "matmul_skip_block" && k > 32)
                    for (int64_t r = 0; r < rows; ++r) std::memset(x + r * k + k - 32, 0, 32 * sizeof(float));
                break;
            }
            case HETERO_OP_ATTENTION:
                if (fault_ == "attention_short") {
                    auto* pos = reinterpret_cast<int32_t*>(replace(node.inputs[3]));
                    for (int64_t i = 0; i < descs[size_t(node.inputs[3])].shape[0]; ++i) pos[i] = pos[i] > 0 ? pos[i] - 1 : 0;
                }
                break;
            case HETERO_OP_ROPE:
                if (fault_ == "rope_wrong_pairs") node.iparams[0] = node.iparams[0] == HETERO_ROPE_ADJACENT ? HETERO_ROPE_HALVES : HETERO_ROPE_ADJACENT;
                break;
            case HETERO_OP_SOFTMAX:
                if (fault_ == "softmax_no_max") return softmax_no_max(node, descs, ptrs);
                break;
            case HETERO_OP_STORE_ROWS:
                if (fault_ == "store_rows_clobber") std::memset(ptrs[size_t(node.output)], 0, sdk::tensor_bytes(descs[size_t(node.output)]));
                break;
            case HETERO_OP_RMSNORM:
                if (fault_ == "rmsnorm_mean_bias") {
                    // as if the mean of squares were taken over D + 1 elements
                    hetero::reference::run_node(node, descs.data(), ptrs.data());
                    const int64_t d = sdk::inner_dim(descs[size_t(node.output)]);
                    float* y = reinterpret_cast<float*>(ptrs[size_t(node.output)]);
                    const float factor = float(std::sqrt(double(d + 1) / double(d)));
                    for (int64_t e = 0; e < sdk::element_count(descs[size_t(node.output)]); ++e) y[e] *= factor;
                    return;
                }
                break;
            default: break;
        }
        hetero::reference::run_node(node, descs.data(), ptrs.data());
        if (node.op == HETERO_OP_CONVERT && fault_ == "q8_0_truncate" && descs[size_t(node.output)].dtype == HETERO_DTYPE_Q8_0) {
            const auto& xd = descs[size_t(node.inputs[0])];
            const float* x = reinterpret_cast<const float*>(ptrs[size_t(node.inputs[0])]);
            auto* out = reinterpret_cast<sdk::BlockQ8_0*>(ptrs[size_t(node.output)]);
            for (int64_t b = 0; b < sdk::element_count(xd) / 32; ++b) {
                const float d = sdk::f16_to_f32(out[b].d);
                for (int i = 0; i < 32; ++i) out[b].qs[i] = int8_t(d != 0.f ? std::trunc(x[b * 32 + i] / d) : 0.f);
            }
        }
    }

    // What real kernels may do to activations: Q8_0 blocks for quantized
    // weights, f16/bf16 rounding for half-precision weights.
    static void round_activations(uint32_t w_dtype, float* x, int64_t k) {
        if (sdk::is_block_dtype(w_dtype)) {
            for (int64_t b = 0; b < k; b += 32) {
                sdk::BlockQ8_0 q;
                sdk::quantize_block_q8_0(x + b, q);
                sdk::dequantize_block_q8_0(q, x + b);
            }
        } else if (w_dtype == HETERO_DTYPE_F16) {
            for (int64_t e = 0; e < k; ++e) x[e] = sdk::f16_to_f32(sdk::f32_to_f16(x[e]));
        } else if (w_dtype == HETERO_DTYPE_BF16) {
            for (int64_t e = 0; e < k; ++e) x[e] = sdk::bf16_to_f32(sdk::f32_to_bf16(x[e]));
        }
    }

    static void softmax_no_max(const hetero_node& node, const std::vector<hetero_tensor_desc>& descs, const std::vector<uint8_t*>& ptrs) {
        const auto& xd = descs[size_t(node.inputs[0])];
        const int64_t d = sdk::inner_dim(xd), rows = sdk::outer_rows(xd);
        const float scale = node.fparams[0] == 0.f ? 1.f : node.fparams[0];
        const float* x = reinterpret_cast<const float*>(ptrs[size_t(node.inputs[0])]);
        float* y = reinterpret_cast<float*>(ptrs[size_t(node.output)]);
        for (int64_t r = 0; r < rows; ++r) {
            float sum = 0.f;
            for (int64_t j = 0; j < d; ++j) sum += (y[r * d + j] = std::exp(x[r * d + j] * scale));
            for (int64_t j = 0; j < d; ++j) y[r * d + j] /= sum;
        }
    }

    std::string fault_;
};

}  // namespace

HETERO_SDK_EXPORT_PROVIDER(SelftestProvider, "selftest", "1.0", nullptr)
