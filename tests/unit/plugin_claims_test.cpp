// A plugin's claims held to physical bounds: a device claiming 2^62 bytes
// of memory in the host's RAM, or a 1e30 GFLOP/s peak, is clamped; an
// op_supported estimate of 1e-15 s is raised to what 10 TB/s and
// 10 PFLOP/s allow, so a plan on such a device predicts a finite speed.
// One warning per provider names it. The claims come from the lazytest
// plugin (tests/plugins/lazy_plugin.cpp) through its options.
#include <hetero/model/model.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/solver/planner.hpp>
#include <hetero/solver/prior_cost_model.hpp>

#include <gtest/gtest.h>

#include "captured_log.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>

namespace {

using namespace hetero;

size_t lines_with(test::CapturedLog& log, const std::string& a, const std::string& b) {
    std::lock_guard<std::mutex> lock(log.m);
    return size_t(std::count_if(log.lines.begin(), log.lines.end(), [&](const std::string& l) {
        return l.find(a) != std::string::npos && l.find(b) != std::string::npos;
    }));
}

TEST(PluginClaims, AbsurdClaimsAreClampedWithOneWarningPerProvider) {
    RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_LAZY_PLUGIN_DIR};
    o.provider_options["lazytest"] = {{"devices", "2"}, {"claim_memory", std::to_string(uint64_t(1) << 62)}, {"claim_gflops", "1e30"},
                                      {"estimate", "1e-15"}};
    test::CapturedLog log;
    Registry reg(o);
    const std::vector<DeviceRef> devices = available_devices(reg.providers());
    ASSERT_EQ(devices.size(), 2u) << reg.describe_search();
    const uint64_t ram = uint64_t(::sysconf(_SC_PHYS_PAGES)) * uint64_t(::sysconf(_SC_PAGESIZE));
    for (const DeviceRef& d : devices) {
        // The device is in host memory (unified): at most the host's RAM.
        EXPECT_LE(d.props.memory_bytes, ram) << d.label();
        EXPECT_GT(d.props.memory_bytes, 0u) << d.label();
        EXPECT_LE(d.props.peak_gflops, 1e7) << d.label();
    }
    EXPECT_EQ(lines_with(log, "provider lazytest claims", "clamped to physical bounds"), 1u);
    EXPECT_EQ(lines_with(log, "provider lazytest claims", std::to_string(uint64_t(1) << 62) + " bytes of memory"), 1u);

    // A 4096 x 4096 f32 matrix-vector product moves 64 MiB: at least 6.7 us at 10 TB/s.
    const PriorCostModel cost(devices);
    OpShape mv;
    mv.op = HETERO_OP_MATMUL;
    mv.dtype = HETERO_DTYPE_F32;
    mv.n = 1;
    mv.k = mv.m = 4096;
    const double floor = 4096.0 * 4096 * 4 / PriorCostModel::kMaxBytesPerSecond;
    EXPECT_GE(cost.node_seconds(0, mv), floor);
    EXPECT_GE(cost.node_seconds(1, mv), floor);
    mv.n = 512;  // 2 * 512 * 4096^2 flops: at least 1.7 us at 10 PFLOP/s (bytes still decide)
    EXPECT_GE(cost.node_seconds(0, mv), 2.0 * 512 * 4096 * 4096 / PriorCostModel::kMaxFlopsPerSecond);
    EXPECT_EQ(lines_with(log, "provider lazytest estimates 1e-15 s", "clamped"), 1u);

    // The whole default model planned on it: a decoded token costs at least
    // its weights' bytes at 10 TB/s (the claim alone made that 1e-15 s a node).
    const ModelFile model = load_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    uint64_t weight_bytes = 0;
    for (const auto& [name, w] : model.weights) weight_bytes += w.bytes;
    PlanRequest req;
    req.n_ctx = 256;
    const Plan plan = solve_plan(model, devices, cost, req);
    EXPECT_GE(plan.predicted_seconds[kDecode], double(weight_bytes) / PriorCostModel::kMaxBytesPerSecond * 0.5);
}

}  // namespace
