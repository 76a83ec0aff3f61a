// A device that fails mid-generation (HETERO_FAULT_INJECT makes a provider's
// executes fail from the Nth on) is dropped: ResilientSession re-plans on the
// devices left, replays the token history and greedy generation gives the
// tokens of a run that never failed.
#include <hetero/registry.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/resilient_session.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/sdk/provider.hpp>
#include <hetero/solver/planner.hpp>

#include "build_tree_registry.hpp"
#include "error_message.hpp"
#include "captured_log.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

namespace {

using hetero::DeviceRef;

constexpr const char* kPrompt = "Once upon a time";
constexpr int kTokens = 40;

hetero::SessionOptions options() {
    hetero::SessionOptions so;
    so.cache_type = hetero::CacheType::f32;
    so.max_batch = 3;  // prefill in chunks of 3 and 2 tokens, as the row-split tests do
    return so;
}

hetero::Sampler greedy() { return hetero::Sampler(hetero::SamplerOptions{0.f, 0, 1.f, 0}); }

// A registry of the build tree's plugins whose provider `faulty` fails from
// its Nth execute on (a fresh provider instance reads HETERO_FAULT_INJECT when
// it is created).
std::unique_ptr<hetero::Registry> faulty_registry(const std::string& faulty, int64_t n) {
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR};
    o.enabled = {faulty};
    const std::string spec = faulty + ":" + std::to_string(n);
    ::setenv("HETERO_FAULT_INJECT", spec.c_str(), 1);
    auto reg = std::make_unique<hetero::Registry>(o);
    ::unsetenv("HETERO_FAULT_INJECT");
    return reg;
}

// Every matmul cut in half between devices 0 and 1 in both phases; homes on 0.
hetero::Plan split_plan(const hetero::ModelFile& m, const std::vector<DeviceRef>& devs) {
    hetero::Plan plan = hetero::plan_single_device(int(m.hparams.n_layer), devs, 0);
    const std::vector<uint32_t> f32(size_t(m.hparams.n_layer), HETERO_DTYPE_F32);
    const hetero::ModelGraph g = hetero::build_model_graph(m, 1, 64, f32);
    for (const hetero::ModelNode& n : g.nodes) {
        if (!hetero::is_matmul_role(n.role)) continue;
        const int64_t rows = g.tensors[size_t(n.node.inputs[1])].desc.shape[0];
        const int64_t cut = rows / 2 / 8 * 8;
        for (int p = 0; p < hetero::kPhases; ++p) plan.layers[size_t(n.layer)].matmuls[size_t(p)][n.role] = {{0, 0, cut}, {1, cut, rows}};
    }
    return plan;
}

// Re-plans on whatever is left: everything on its first device.
hetero::Replanner single_device_replanner(const hetero::ModelFile& m) {
    return [&m](const std::vector<DeviceRef>& left) { return hetero::Replanned{hetero::plan_single_device(int(m.hparams.n_layer), left, 0), nullptr}; };
}

// Executes of device 1 in the prefill of the prompt and in one decode step, on `plan`.
std::pair<int64_t, int64_t> executes_of_second_device(const hetero::OpenedModel& m, const hetero::Plan& plan) {
    hetero::Session s(m.file, plan, options());
    const std::vector<int32_t> prompt = m.tokenizer->encode(kPrompt, true);
    s.forward(prompt, 0);
    const int64_t prefill = s.stats().at(1).runs;
    s.forward({prompt.back()}, int32_t(prompt.size()));
    return {prefill, s.stats().at(1).runs - prefill};
}

struct Outcome {
    std::vector<int32_t> tokens;
    std::vector<hetero::Recovery> recoveries;
    std::vector<std::string> warnings;
};

// Greedy generation on devices {healthy, faulty} split as split_plan does.
Outcome run_with_fault(const hetero::OpenedModel& m, const DeviceRef& healthy, const DeviceRef& faulty) {
    hetero::test::CapturedLog log;
    hetero::ResilientSession rs(m.file, split_plan(m.file, {healthy, faulty}), options(), single_device_replanner(m.file));
    hetero::Sampler g = greedy();
    Outcome o;
    o.tokens = hetero::generate(rs, *m.tokenizer, kPrompt, kTokens, g).tokens;
    o.recoveries = rs.recoveries();
    for (const std::string& line : log.lines)
        if (line.find("failed at position") != std::string::npos) o.warnings.push_back(line);
    EXPECT_EQ(rs.plan().used_devices().size(), 1u) << rs.plan().describe();
    return o;
}

std::vector<int32_t> expected_tokens(const hetero::OpenedModel& m, const DeviceRef& cpu) {
    hetero::Session s(m.file, hetero::plan_single_device(int(m.file.hparams.n_layer), {cpu}, 0), options());
    hetero::Sampler g = greedy();
    return hetero::generate(s, *m.tokenizer, kPrompt, kTokens, g).tokens;
}

// The device that fails is a second instance of `provider` (its own
// HETERO_FAULT_INJECT state); the healthy one is the cpu provider of the
// shared build-tree registry.
void expect_recovery(const std::string& provider) {
    hetero::Provider* cpu = hetero::test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    hetero::Provider* same_kind = hetero::test::build_tree_registry().find(provider);
    if (!same_kind || same_kind->device_count() == 0) GTEST_SKIP() << provider << " has no device here";
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const DeviceRef healthy{cpu, 0, cpu->device_props(0)};
    const std::vector<int32_t> expected = expected_tokens(m, healthy);
    ASSERT_GT(expected.size(), 30u);
    const auto [prefill, per_decode] =
        executes_of_second_device(m, split_plan(m.file, {healthy, {same_kind, 0, same_kind->device_props(0)}}));
    ASSERT_GT(prefill, 0);
    ASSERT_GT(per_decode, 0);
    const int32_t n_prompt = int32_t(m.tokenizer->encode(kPrompt, true).size());

    // In the middle of decode: during the 11th decode step.
    {
        auto reg = faulty_registry(provider, prefill + 10 * per_decode + 1);
        hetero::Provider* p = reg->find(provider);
        ASSERT_NE(p, nullptr);
        const Outcome o = run_with_fault(m, healthy, {p, 0, p->device_props(0)});
        EXPECT_EQ(o.tokens, expected);
        ASSERT_EQ(o.recoveries.size(), 1u);
        EXPECT_EQ(o.recoveries[0].device, provider + ":0");
        EXPECT_EQ(o.recoveries[0].position, n_prompt + 10);
        EXPECT_NE(o.recoveries[0].error.find("injected fault (HETERO_FAULT_INJECT)"), std::string::npos) << o.recoveries[0].error;
        EXPECT_EQ(o.recoveries[0].stats.size(), 2u);
        ASSERT_EQ(o.warnings.size(), 1u);
        EXPECT_NE(o.warnings[0].find(provider + ":0 failed at position"), std::string::npos) << o.warnings[0];
        EXPECT_NE(o.warnings[0].find("re-planned onto cpu:0"), std::string::npos) << o.warnings[0];
    }
    // In the prefill: its first execute.
    {
        auto reg = faulty_registry(provider, 1);
        hetero::Provider* p = reg->find(provider);
        const Outcome o = run_with_fault(m, healthy, {p, 0, p->device_props(0)});
        EXPECT_EQ(o.tokens, expected);
        ASSERT_EQ(o.recoveries.size(), 1u);
        EXPECT_EQ(o.recoveries[0].position, 0);
    }
}

TEST(FaultRecovery, CpuFailsMidDecodeOtherCpuInstanceFinishes) { expect_recovery("cpu"); }
TEST(FaultRecovery, OpenclFailsMidDecodeCpuFinishes) { expect_recovery("opencl"); }
TEST(FaultRecovery, VulkanFailsMidDecodeCpuFinishes) { expect_recovery("vulkan"); }

TEST(FaultRecovery, NoDeviceLeftIsAClearError) {
    auto reg = faulty_registry("cpu", 3);
    hetero::Provider* p = reg->find("cpu");
    ASSERT_NE(p, nullptr);
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const std::vector<DeviceRef> one = {{p, 0, p->device_props(0)}};
    hetero::ResilientSession rs(m.file, hetero::plan_single_device(int(m.file.hparams.n_layer), one, 0), options(),
                                single_device_replanner(m.file));
    hetero::Sampler g = greedy();
    try {
        hetero::generate(rs, *m.tokenizer, kPrompt, kTokens, g);
        FAIL() << "generation went on without a device";
    } catch (const hetero::DeviceFault&) {
        FAIL() << "the fault escaped as a DeviceFault";
    } catch (const hetero::Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("cpu:0 failed and no other device is left"), std::string::npos) << what;
        EXPECT_NE(what.find("injected fault (HETERO_FAULT_INJECT)"), std::string::npos) << what;
    }
}

TEST(FaultRecovery, ReplanFailureNamesBothErrors) {
    hetero::Provider* cpu = hetero::test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    auto reg = faulty_registry("cpu", 1);
    hetero::Provider* p = reg->find("cpu");
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    hetero::ResilientSession rs(m.file, split_plan(m.file, {{cpu, 0, cpu->device_props(0)}, {p, 0, p->device_props(0)}}), options(),
                                [](const std::vector<DeviceRef>&) -> hetero::Replanned { throw hetero::Error("no room for the model"); });
    hetero::Sampler g = greedy();
    const std::string what = hetero::test::error_message([&] { hetero::generate(rs, *m.tokenizer, kPrompt, kTokens, g); });
    EXPECT_NE(what.find("cpu:0 failed"), std::string::npos) << "generation without a plan: " << what;
    EXPECT_NE(what.find("no room for the model"), std::string::npos) << what;
}

TEST(FaultRecovery, ModelErrorsAreNotDeviceFaults) {
    // A full context is the caller's error, not the device's: no re-plan.
    hetero::Provider* cpu = hetero::test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    hetero::SessionOptions so = options();
    so.n_ctx = 8;
    bool replanned = false;
    hetero::ResilientSession rs(m.file, hetero::plan_single_device(int(m.file.hparams.n_layer), {{cpu, 0, cpu->device_props(0)}}, 0), so,
                                [&](const std::vector<DeviceRef>& left) {
                                    replanned = true;
                                    return hetero::Replanned{hetero::plan_single_device(int(m.file.hparams.n_layer), left, 0), nullptr};
                                });
    EXPECT_THROW(rs.forward(std::vector<int32_t>(9, 1), 0), hetero::Error);
    EXPECT_FALSE(replanned);
    EXPECT_TRUE(rs.recoveries().empty());
    // Positions beyond the history cannot be replayed.
    EXPECT_THROW(rs.forward({1}, 3), hetero::Error);
}

TEST(FaultRecovery, ConstraintsNamingTheLostDeviceAreDropped) {
    hetero::Provider* cpu = hetero::test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    hetero::PlanConstraints c;
    c.pins = {{0, 1, std::nullopt, "cpu:0"}, {2, -1, std::nullopt, "opencl:0"}};
    c.splits = {{0, -1, std::nullopt, {"cpu:0", "opencl:0", "cpu:1"}, {1, 2, 3}}, {0, -1, hetero::Role::up, {"cpu:0", "opencl:0"}, {}}};
    c.allow_splits = false;
    const std::vector<DeviceRef> left = {{cpu, 0, cpu->device_props(0)}, {cpu, 1, cpu->device_props(0)}};  // "cpu:0", "cpu:1"
    const hetero::PlanConstraints kept = hetero::constraints_on(c, left);
    ASSERT_EQ(kept.pins.size(), 1u);
    EXPECT_EQ(kept.pins[0].device, "cpu:0");
    ASSERT_EQ(kept.splits.size(), 1u);  // the second split has one device left
    EXPECT_EQ(kept.splits[0].devices, (std::vector<std::string>{"cpu:0", "cpu:1"}));
    EXPECT_EQ(kept.splits[0].ratio, (std::vector<double>{1, 3}));
    EXPECT_FALSE(kept.allow_splits);
}

TEST(FaultRecovery, InjectionSpecParsing) {
    ::setenv("HETERO_FAULT_INJECT", "opencl:7,cpu:12", 1);
    EXPECT_EQ(hetero::sdk::FaultInjection::from_env("cpu"), 12);
    EXPECT_EQ(hetero::sdk::FaultInjection::from_env("opencl"), 7);
    EXPECT_EQ(hetero::sdk::FaultInjection::from_env("vulkan"), 0);
    EXPECT_EQ(hetero::sdk::FaultInjection::from_env("cp"), 0);
    ::setenv("HETERO_FAULT_INJECT", "cpu:0", 1);
    EXPECT_EQ(hetero::sdk::FaultInjection::from_env("cpu"), 0);
    ::unsetenv("HETERO_FAULT_INJECT");
    EXPECT_EQ(hetero::sdk::FaultInjection::from_env("cpu"), 0);
}

}  // namespace
