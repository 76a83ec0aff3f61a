// A provider that counts how often it was created and how often it
// discovered its devices, for the tests of lazy device discovery. It
// computes nothing. Options: devices=N (what discovery finds, default 1),
// fail=1 (discovery fails with a known reason), discover_ms=T (discovery
// takes T ms, so that concurrent first callers overlap). For the tests of
// claims held to physical bounds: claim_memory=BYTES (its device's memory),
// claim_gflops=G (its peak), estimate=S (op_supported accepts every node
// and estimates S seconds for it). For the tests of crash containment:
// crash_in_execute=1 (compile succeeds, and the first execute outside the
// probe dereferences null), crash_in_compile=1 (the first compile does).
#include <hetero/sdk/host_memory.hpp>
#include <hetero/sdk/provider.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <thread>

namespace {

using namespace hetero;

std::atomic<int> g_creates{0};
std::atomic<int> g_discoveries{0};

class LazyTestProvider final : public sdk::HostMemoryProvider {
public:
    explicit LazyTestProvider(const sdk::Options& o) {
        sdk::require_known_options(o, {"devices", "fail", "discover_ms", "bad_strings", "claim_memory", "claim_gflops", "estimate",
                                       "crash_outside_probe", "crash_in_execute", "crash_in_compile"},
                                   "lazytest");
        crash_outside_probe_ = sdk::option_int(o, "crash_outside_probe", 0, 0, 1) == 1;
        crash_in_execute_ = sdk::option_int(o, "crash_in_execute", 0, 0, 1) == 1;
        crash_in_compile_ = sdk::option_int(o, "crash_in_compile", 0, 0, 1) == 1;
        claim_memory_ = uint64_t(sdk::option_int(o, "claim_memory", 0, 0, INT64_MAX));
        claim_gflops_ = sdk::option_double(o, "claim_gflops", 0, 0, 1e300);
        estimate_ = sdk::option_double(o, "estimate", -1, 0, 1e300);
        bad_strings_ = sdk::option_int(o, "bad_strings", 0, 0, 1) == 1;
        wanted_ = uint32_t(sdk::option_int(o, "devices", 1, 0, 8));
        fail_ = sdk::option_int(o, "fail", 0, 0, 1) == 1;
        delay_ms_ = sdk::option_int(o, "discover_ms", 0, 0, 1000);
        ++g_creates;
    }

    uint32_t device_count() override {
        discovery_.run([this] { discover(); });
        return found_;
    }

    void device_props(uint32_t device, hetero_device_props& p) override {
        if (crash_outside_probe_ && !in_probe()) *static_cast<volatile int*>(nullptr) = 1;  // a crash the probe cannot see
        p.kind = HETERO_DEVICE_CPU;
        p.flags = HETERO_DEVICE_FLAG_UNIFIED_MEMORY;
        std::snprintf(p.name, sizeof p.name, "lazy test device %u", device);
        std::snprintf(p.driver, sizeof p.driver, "counts discoveries");
        if (bad_strings_) {
            // Invalid UTF-8 in the name, and a driver string with no terminator.
            std::snprintf(p.name, sizeof p.name, "bad \xff\xfe name \xc3");
            std::memset(p.driver, 'x', sizeof p.driver);
        }
        p.dtype_mask = HETERO_DTYPE_BIT(HETERO_DTYPE_F32);
        p.memory_bytes = claim_memory_;
        p.peak_gflops = claim_gflops_;
    }

    void check_supported(uint32_t, const hetero_node&, const hetero_tensor_desc*, uint32_t, double* est_seconds) override {
        if (estimate_ < 0) sdk::fail(HETERO_ERR_UNSUPPORTED, "the lazy test provider computes nothing");
        if (est_seconds) *est_seconds = estimate_;
    }
    std::unique_ptr<sdk::Executable> compile(uint32_t device, sdk::Graph graph, const std::vector<sdk::BoundTensor>&) override {
        if (crash_in_compile_ && !in_probe()) *static_cast<volatile int*>(nullptr) = 1;
        if (crash_in_execute_) return std::make_unique<sdk::Executable>(device, std::move(graph));
        sdk::fail(HETERO_ERR_UNSUPPORTED, "the lazy test provider computes nothing");
    }
    std::unique_ptr<sdk::Event> execute(sdk::Executable&, const std::vector<sdk::BoundTensor>&, bool) override {
        if (crash_in_execute_ && !in_probe()) *static_cast<volatile int*>(nullptr) = 1;
        sdk::fail(HETERO_ERR_UNSUPPORTED, "the lazy test provider computes nothing");
    }

private:
    void discover() {
        ++g_discoveries;
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
        if (fail_) sdk::fail(HETERO_ERR_UNSUPPORTED, "simulated driver failure: lazytest has no driver");
        found_ = wanted_;
    }

    // The registry's probe runs the plugin in hetero-plugin-probe (comm is cut at 15 characters).
    static bool in_probe() {
        char comm[32] = {};
        if (FILE* f = std::fopen("/proc/self/comm", "r")) {
            if (!std::fgets(comm, sizeof comm, f)) comm[0] = 0;
            std::fclose(f);
        }
        return std::strncmp(comm, "hetero-plugin-p", 15) == 0;
    }

    bool crash_outside_probe_ = false;
    bool crash_in_execute_ = false, crash_in_compile_ = false;
    bool bad_strings_ = false;
    uint64_t claim_memory_ = 0;
    double claim_gflops_ = 0, estimate_ = -1;
    uint32_t wanted_ = 1, found_ = 0;
    bool fail_ = false;
    int64_t delay_ms_ = 0;
    sdk::DiscoverOnce discovery_;
};

}  // namespace

// Read by the tests through dlsym.
extern "C" HETERO_EP_EXPORT int hetero_lazytest_creates() { return g_creates.load(); }
extern "C" HETERO_EP_EXPORT int hetero_lazytest_discoveries() { return g_discoveries.load(); }

HETERO_SDK_EXPORT_PROVIDER(LazyTestProvider, "lazytest", "0.1.0", nullptr)
