// The prior cost model over real providers: the CPU plugin of the build tree
// (and its OpenCL and Vulkan plugins, where this machine has devices for
// them), and a plugin that speaks ABI 1.0 (tests/plugins/abi10_plugin.c) for
// the fallbacks a provider without the 1.1 hints gets.
#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/roofline.hpp>
#include <hetero/solver/prior_cost_model.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using hetero::DeviceRef;
using hetero::OpShape;
using hetero::PriorCostModel;

hetero::RegistryOptions only(const std::string& dir, std::vector<std::string> enabled = {}) {
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {dir};
    o.enabled = std::move(enabled);
    return o;
}

// Every device of the registry's providers that has devices.
std::vector<DeviceRef> all_devices(const hetero::Registry& reg) {
    std::vector<DeviceRef> out;
    for (hetero::Provider* p : reg.providers())
        for (uint32_t d = 0; d < p->device_count(); ++d) out.push_back(DeviceRef{p, d, p->device_props(d)});
    return out;
}

// OpShape's fields in order: op, dtype, n, k, m, kv.
OpShape matmul(int64_t n, int64_t k, int64_t m, uint32_t dtype = HETERO_DTYPE_Q4_0) {
    return OpShape{HETERO_OP_MATMUL, dtype, n, k, m};
}

// 32 query heads of 64 (k = 2048) over 4 KV heads (m = 256).
OpShape attention(int64_t n, int64_t kv) { return OpShape{HETERO_OP_ATTENTION, HETERO_DTYPE_F32, n, 2048, 256, kv}; }

OpShape elementwise(uint32_t op, int64_t n, int64_t k, uint32_t dtype = HETERO_DTYPE_F32) { return OpShape{op, dtype, n, k}; }

const std::string kAbi10Dir = HETERO_ABI10_PLUGIN_DIR;

}  // namespace

TEST(PriorCostModel, ShapesBecomeWellFormedNodes) {
    const std::vector<OpShape> shapes = {
        matmul(7, 2048, 5632), attention(1, 300), attention(64, 32), elementwise(HETERO_OP_RMSNORM, 3, 2048),
        elementwise(HETERO_OP_ROPE, 3, 2048), elementwise(HETERO_OP_SWIGLU, 3, 5632), elementwise(HETERO_OP_ADD, 3, 2048),
        elementwise(HETERO_OP_MUL, 3, 2048), elementwise(HETERO_OP_SOFTMAX, 3, 100), elementwise(HETERO_OP_CONVERT, 3, 64, HETERO_DTYPE_Q8_0),
        elementwise(HETERO_OP_STORE_ROWS, 3, 256, HETERO_DTYPE_F16), elementwise(HETERO_OP_EMBEDDING, 3, 2048, HETERO_DTYPE_Q4_0)};
    for (const OpShape& s : shapes) {
        const hetero::ShapeNode g = hetero::node_of_shape(s);
        EXPECT_EQ(hetero::sdk::check_node(g.node, g.tensors.data(), uint32_t(g.tensors.size())), "") << hetero::sdk::op_name(s.op);
        for (const auto& t : g.tensors) EXPECT_EQ(hetero::sdk::check_tensor(t), "") << hetero::sdk::op_name(s.op);
    }
    // Attention's cache is sized so that the roofline's mean attended rows is kv.
    const hetero::ShapeNode a = hetero::node_of_shape(attention(1, 300));
    EXPECT_DOUBLE_EQ(hetero::sdk::attention_mean_rows(a.tensors[1].shape[0]), 300.0);
    EXPECT_THROW(hetero::node_of_shape(elementwise(99, 1, 32)), hetero::Error);
    EXPECT_THROW(hetero::node_of_shape(matmul(0, 2048, 2048)), hetero::Error);
}

TEST(PriorCostModel, CpuMatmulGrowsWithTokensAndRows) {
    hetero::Registry reg(only(HETERO_BUILD_PLUGIN_DIR, {"cpu"}));
    ASSERT_NE(reg.find("cpu"), nullptr) << reg.describe_search();
    const PriorCostModel model(all_devices(reg));
    const double n1 = model.node_seconds(0, matmul(1, 2048, 2048));
    const double n64 = model.node_seconds(0, matmul(64, 2048, 2048));
    const double n512 = model.node_seconds(0, matmul(512, 2048, 2048));
    EXPECT_GT(n1, 0.0);
    EXPECT_LT(n1, n64);
    EXPECT_LT(n64, n512);
    EXPECT_LT(model.node_seconds(0, matmul(512, 2048, 2048)), model.node_seconds(0, matmul(512, 2048, 8192)));
    // Decode streams weights: Q8_0 holds more bytes than Q4_0, F32 more still.
    EXPECT_LT(model.node_seconds(0, matmul(1, 4096, 4096, HETERO_DTYPE_Q8_0)), model.node_seconds(0, matmul(1, 4096, 4096, HETERO_DTYPE_F32)));
    EXPECT_LT(model.node_seconds(0, attention(1, 64)), model.node_seconds(0, attention(1, 2048)));
    // Cached: the same shape answers the same.
    EXPECT_EQ(model.node_seconds(0, matmul(64, 2048, 2048)), n64);
    EXPECT_EQ(model.source(0), "prior (roofline from device props and provider estimates)");
}

TEST(PriorCostModel, ShapesTheProviderRejectsCostNegative) {
    hetero::Registry reg(only(HETERO_BUILD_PLUGIN_DIR, {"cpu"}));
    ASSERT_NE(reg.find("cpu"), nullptr);
    const PriorCostModel model(all_devices(reg));
    // Q4_0 rows must hold whole 32-element blocks.
    EXPECT_LT(model.node_seconds(0, matmul(1, 48, 64)), 0.0);

    hetero::Registry old(only(kAbi10Dir));
    ASSERT_NE(old.find("abi10test"), nullptr) << old.describe_search();
    const PriorCostModel old_model(all_devices(old));
    EXPECT_LT(old_model.node_seconds(0, attention(1, 64)), 0.0);  // HETERO_ERR_UNSUPPORTED
}

TEST(PriorCostModel, CpuHintsAndTransfers) {
    hetero::Registry reg(only(HETERO_BUILD_PLUGIN_DIR, {"cpu"}));
    ASSERT_NE(reg.find("cpu"), nullptr);
    const std::vector<DeviceRef> cpu = all_devices(reg);
    ASSERT_EQ(cpu.size(), 1u);
    const hetero_device_props& p = cpu[0].props;
    ASSERT_TRUE(HETERO_HAS_FIELD(hetero_device_props, &p, compile_seconds_hint));
    EXPECT_STREQ(p.resource, "host");
    EXPECT_GT(p.launch_seconds_hint, 0.0);

    // The same device twice: one device's memory to itself is free; two
    // devices in host memory copy at host speed.
    const PriorCostModel model({cpu[0], cpu[0]});
    EXPECT_EQ(model.launch_seconds(0), p.launch_seconds_hint);
    EXPECT_EQ(model.compile_seconds(0), 0.0);
    EXPECT_EQ(model.transfer_seconds(0, 0, 1 << 20), 0.0);
    EXPECT_EQ(model.transfer_seconds(0, 1, 0), 0.0);
    EXPECT_DOUBLE_EQ(model.transfer_seconds(0, 1, 10'000'000),
                     PriorCostModel::kUnifiedLatency + 1e7 / PriorCostModel::kHostCopyBytesPerSecond);
}

TEST(PriorCostModel, Abi10ProviderGetsFallbacks) {
    hetero::Registry reg(only(kAbi10Dir));
    hetero::Provider* p = reg.find("abi10test");
    ASSERT_NE(p, nullptr) << reg.describe_search();
    ASSERT_EQ(p->device_count(), 1u);
    const hetero_device_props props = p->device_props(0);
    // The registry keeps only what ABI 1.0 defines, whatever the plugin wrote past it.
    EXPECT_EQ(props.struct_size, offsetof(hetero_device_props, resource));
    EXPECT_FALSE(HETERO_HAS_FIELD(hetero_device_props, &props, resource));
    EXPECT_STREQ(props.resource, "");
    EXPECT_EQ(props.launch_seconds_hint, 0.0);
    EXPECT_EQ(props.compile_seconds_hint, 0.0);
    EXPECT_STREQ(props.name, "abi 1.0 test device");
    EXPECT_EQ(props.peak_gflops, 1000.0);
    // Dtype bits past ABI 1.0's seven dtypes are dropped (the plugin sets Q5_1's).
    EXPECT_EQ(props.dtype_mask, HETERO_DTYPE_BIT(HETERO_DTYPE_F32) | HETERO_DTYPE_BIT(HETERO_DTYPE_Q4_0));

    const PriorCostModel model({DeviceRef{p, 0, props}});
    EXPECT_EQ(model.launch_seconds(0), PriorCostModel::kDefaultLaunchOther);
    EXPECT_EQ(model.compile_seconds(0), 0.0);
    // No estimate from the provider: the roofline over its peak and bandwidth.
    const double decode = model.node_seconds(0, matmul(1, 4096, 4096));
    const double prefill = model.node_seconds(0, matmul(512, 4096, 4096));
    EXPECT_GT(decode, 0.0);
    EXPECT_LT(decode, prefill);
    // 512 x 4096 x 4096 x 2 flops at half of 1,000 GFLOP/s, plus one dispatch.
    EXPECT_NEAR(prefill, 2.0 * 512 * 4096 * 4096 / (0.5 * 1000e9) + PriorCostModel::kFallbackDispatchOther, 1e-6);
}

TEST(PriorCostModel, ResourceIdsGroupWhatRunsOnTheHost) {
    hetero::Registry reg(only(HETERO_BUILD_PLUGIN_DIR));
    hetero::Registry old(only(kAbi10Dir));
    std::vector<DeviceRef> devices = all_devices(reg);
    const std::vector<DeviceRef> legacy = all_devices(old);
    ASSERT_EQ(legacy.size(), 1u);
    devices.push_back(legacy[0]);
    devices.push_back(legacy[0]);  // two devices without a resource string: not known to share
    const std::vector<int> ids = hetero::resource_ids(devices);
    ASSERT_EQ(ids.size(), devices.size());
    int host = -1;
    bool other_host_device = false;
    for (size_t i = 0; i + 2 < devices.size(); ++i) {
        const hetero_device_props& p = devices[i].props;
        if (std::strcmp(p.resource, "host") != 0) continue;
        if (host < 0) host = ids[i];
        EXPECT_EQ(ids[i], host) << devices[i].label();
        other_host_device = other_host_device || devices[i].provider->name() != "cpu";
    }
    EXPECT_GE(host, 0) << "the CPU provider's device says resource \"host\"";
    // A GPU-kind 1.0 device without unified memory: its own resource each time.
    EXPECT_NE(ids[ids.size() - 1], ids[ids.size() - 2]);
    EXPECT_NE(ids.back(), host);
    // A 1.0 device of CPU kind or in host memory joins the host.
    DeviceRef cpu_like = legacy[0];
    cpu_like.props.kind = HETERO_DEVICE_CPU;
    DeviceRef unified = legacy[0];
    unified.props.flags = HETERO_DEVICE_FLAG_UNIFIED_MEMORY;
    const std::vector<DeviceRef> three = {devices[0], cpu_like, unified};
    if (std::strcmp(devices[0].props.resource, "host") == 0) {
        EXPECT_EQ(hetero::resource_ids(three), (std::vector<int>{0, 0, 0}));
    }
    if (!other_host_device) GTEST_SKIP() << "no OpenCL or Vulkan CPU device here (PoCL, lavapipe): only the CPU provider checked";
}
