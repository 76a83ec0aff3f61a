// A template execution provider on the hetero C++ SDK: one CPU device that
// computes on host memory and runs three ops in f32 — MATMUL (f32 weights,
// optional bias), RMSNORM and ADD. Everything else it refuses in
// op_supported, so the core gives those nodes to other providers and the
// conformance kit skips them.
//
// Copy this directory, rename the provider (the name below and in
// CMakeLists.txt), then replace the kernels with calls into your device.
// docs/writing-a-provider.md (installed in share/doc/hetero/) walks through it.
//
// What the SDK does for you (hetero/sdk/provider.hpp): it builds the C function
// table, turns exceptions (sdk::Error) into a status code plus the message
// last_error() returns, checks every graph (ids, shapes, dtypes, which tensor
// kinds may be read or written) before compile() sees it and every binding
// (bound once, inside its buffer, on the right device) before execute() sees
// it, and checks buffer ranges. hetero/sdk/host_memory.hpp adds host buffers
// and an executable that places internal tensors in one scratch arena.
#include <hetero/sdk/host_memory.hpp>
#include <hetero/sdk/provider.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

namespace {

using namespace hetero;

constexpr const char* kName = "example";  // [a-z0-9_]+, the <name> of libhetero-ep-<name>.so
constexpr const char* kVersion = "0.1.0";

float* f32(uint8_t* p) { return reinterpret_cast<float*>(p); }

// x [N, K] (rows) * W[M, K]^T (+ bias [M]) -> out [N, M] (rows).
void matmul(const hetero_node& node, const std::vector<hetero_tensor_desc>& t, const std::vector<uint8_t*>& p) {
    const hetero_tensor_desc& w = t[size_t(node.inputs[1])];
    const int64_t n = t[size_t(node.inputs[0])].shape[0], k = w.shape[1], m = w.shape[0];
    const float* x = f32(p[size_t(node.inputs[0])]);
    const float* wt = f32(p[size_t(node.inputs[1])]);
    const float* bias = node.n_inputs == 3 ? f32(p[size_t(node.inputs[2])]) : nullptr;
    float* out = f32(p[size_t(node.output)]);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
            double acc = 0.0;  // a real device accumulates in f32; the kit's bound allows for that
            for (int64_t e = 0; e < k; ++e) acc += double(x[i * k + e]) * double(wt[j * k + e]);
            out[i * m + j] = float(acc + (bias ? double(bias[j]) : 0.0));
        }
}

// Every innermost row of x: x / sqrt(mean(x^2) + eps) * weight.
void rmsnorm(const hetero_node& node, const std::vector<hetero_tensor_desc>& t, const std::vector<uint8_t*>& p) {
    const hetero_tensor_desc& xd = t[size_t(node.inputs[0])];
    const int64_t d = sdk::inner_dim(xd), rows = sdk::outer_rows(xd);
    const float* x = f32(p[size_t(node.inputs[0])]);
    const float* w = f32(p[size_t(node.inputs[1])]);
    float* out = f32(p[size_t(node.output)]);
    for (int64_t r = 0; r < rows; ++r) {
        double ss = 0.0;
        for (int64_t e = 0; e < d; ++e) ss += double(x[r * d + e]) * double(x[r * d + e]);
        const double inv = 1.0 / std::sqrt(ss / double(d) + double(node.fparams[0]));
        for (int64_t e = 0; e < d; ++e) out[r * d + e] = float(double(x[r * d + e]) * inv * double(w[e]));
    }
}

// a + b, with b the same shape as a or one row [D] added to every row.
void add(const hetero_node& node, const std::vector<hetero_tensor_desc>& t, const std::vector<uint8_t*>& p) {
    const hetero_tensor_desc& ad = t[size_t(node.inputs[0])];
    const hetero_tensor_desc& bd = t[size_t(node.inputs[1])];
    const int64_t count = sdk::element_count(ad), b_count = sdk::element_count(bd);
    const float* a = f32(p[size_t(node.inputs[0])]);
    const float* b = f32(p[size_t(node.inputs[1])]);
    float* out = f32(p[size_t(node.output)]);
    for (int64_t e = 0; e < count; ++e) out[e] = a[e] + b[e % b_count];
}

class ExampleProvider final : public sdk::HostMemoryProvider {
public:
    // Options come from the config's "options" object for this provider. Refuse
    // what you do not know: a typo must not pass silently.
    explicit ExampleProvider(const sdk::Options& options) { sdk::require_known_options(options, {}, kName); }

    // Called by the SDK before any function that takes a device index. A
    // provider with a real driver discovers its devices here, once (see
    // sdk::DiscoverOnce), and throws sdk::Error with the reason when it finds
    // none: device_count() then answers 0 and the reason is the message.
    uint32_t device_count() override { return 1; }

    // `props` arrives zero-filled and full-size; the SDK copies to the caller
    // only as many bytes as the caller's struct has.
    void device_props(uint32_t, hetero_device_props& props) override {
        props.kind = HETERO_DEVICE_CPU;
        props.flags = HETERO_DEVICE_FLAG_UNIFIED_MEMORY;  // buffers are host memory: no copies to or from the CPU
        std::snprintf(props.name, sizeof props.name, "example device (host CPU, f32 reference loops)");
        std::snprintf(props.driver, sizeof props.driver, "hetero template provider %s", kVersion);
        std::snprintf(props.resource, sizeof props.resource, "host");  // shares the host's cores with the cpu provider
        props.dtype_mask = HETERO_DTYPE_BIT(HETERO_DTYPE_F32);         // weight dtypes it computes with
        props.compute_units = std::max(1u, std::thread::hardware_concurrency());
    }

    // The node is already well formed (the SDK checked its shapes and dtypes).
    // Throw HETERO_ERR_UNSUPPORTED with the reason for anything you cannot run.
    void check_supported(uint32_t, const hetero_node& node, const hetero_tensor_desc* t, uint32_t,
                         double* est_seconds) override {
        switch (node.op) {
            case HETERO_OP_MATMUL:
                if (t[node.inputs[1]].dtype != HETERO_DTYPE_F32)
                    sdk::fail(HETERO_ERR_UNSUPPORTED, std::string("matmul: weights of dtype ") + sdk::dtype_name(t[node.inputs[1]].dtype) +
                                                          " (this provider computes with f32 weights only)");
                break;
            case HETERO_OP_RMSNORM:
            case HETERO_OP_ADD: break;
            default: sdk::fail(HETERO_ERR_UNSUPPORTED, std::string(sdk::op_name(node.op)) + " is not implemented by this provider");
        }
        if (est_seconds) *est_seconds = -1.0;  // no estimate: the core measures or uses its roofline
    }

    // HostExecutable resolves constants now and places internal tensors in one
    // arena; a device provider would build its kernels or command lists here.
    std::unique_ptr<sdk::Executable> compile(uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>& constants) override {
        return std::make_unique<sdk::HostExecutable>(device, std::move(graph), constants);
    }

    // Runs the nodes in order. Returning nullptr means "done already"; an
    // asynchronous device returns an sdk::Event whose wait() blocks.
    std::unique_ptr<sdk::Event> execute(sdk::Executable& exe, const std::vector<sdk::BoundTensor>& bound, bool) override {
        auto& host = static_cast<sdk::HostExecutable&>(exe);
        const std::vector<uint8_t*>& ptrs = host.pointers(bound);
        const sdk::Graph& g = exe.graph();
        for (const hetero_node& node : g.nodes) {
            switch (node.op) {
                case HETERO_OP_MATMUL: matmul(node, g.tensors, ptrs); break;
                case HETERO_OP_RMSNORM: rmsnorm(node, g.tensors, ptrs); break;
                case HETERO_OP_ADD: add(node, g.tensors, ptrs); break;
                default: sdk::fail(HETERO_ERR_UNSUPPORTED, std::string(sdk::op_name(node.op)) + " is not implemented by this provider");
            }
        }
        return nullptr;
    }
};

}  // namespace

// The plugin's one exported symbol, hetero_ep_init. The last argument may be a
// function returning nullptr when the provider can run on this machine, or a
// static string saying why not (e.g. a missing CPU feature).
HETERO_SDK_EXPORT_PROVIDER(ExampleProvider, kName, kVersion, nullptr)
