// Threads meeting in one process: sessions on several host threads sharing one
// cpu provider (its thread pool takes jobs from all of them), and a plan
// over two device entries whose workers hand tensors over in both sync modes.
// Part of the ThreadSanitizer run (hetero_thread_tests).
#include <hetero/registry.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>

#include "story_model_plans.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace {

// Its own cpu provider instance with more pool threads than this machine
// may have cores, so that workers and submitters really interleave.
hetero::Registry& pool_registry() {
    static hetero::Registry reg([] {
        hetero::RegistryOptions o;
        o.use_default_dirs = false;
        o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR};
        o.enabled = {"cpu"};
        o.provider_options["cpu"]["threads"] = "4";
        return o;
    }());
    return reg;
}

std::vector<int32_t> greedy(const hetero::OpenedModel& m, const hetero::Plan& plan, hetero::SyncMode sync, int n) {
    hetero::SessionOptions so;
    so.cache_type = hetero::CacheType::f32;
    so.max_batch = 3;
    so.n_ctx = 64;
    so.sync = sync;
    hetero::Session s(m.file, plan, so);
    hetero::Sampler g(hetero::SamplerOptions{0.f, 0, 1.f, 0});
    return hetero::generate(s, *m.tokenizer, "Once upon a time", n, g).tokens;
}

TEST(Concurrency, SessionsOnSeveralThreadsShareOneProvider) {
    hetero::Provider* cpu = pool_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    const hetero::test::StoryModelPlans s = hetero::test::story_model_plans(cpu);
    const std::vector<int32_t> expected = greedy(s.m, s.one, hetero::SyncMode::predicted_poll, 24);
    std::vector<std::vector<int32_t>> got(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < got.size(); ++t)
        threads.emplace_back([&, t] {
            got[t] = greedy(s.m, t % 2 ? s.two : s.one, t < 2 ? hetero::SyncMode::predicted_poll : hetero::SyncMode::block, 24);
        });
    for (auto& th : threads) th.join();
    for (size_t t = 0; t < got.size(); ++t) EXPECT_EQ(got[t], expected) << "thread " << t;
}

TEST(Concurrency, TwoDeviceEntriesInBothSyncModes) {
    hetero::Provider* cpu = pool_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    const hetero::test::StoryModelPlans s = hetero::test::story_model_plans(cpu);
    const std::vector<int32_t> expected = greedy(s.m, s.one, hetero::SyncMode::block, 24);
    // Three entries: layers round the three, the head on the last.
    const hetero::Plan three = hetero::plan_even_layers(s.n_layer, {s.dev, s.dev, s.dev});
    ASSERT_EQ(three.used_devices().size(), 3u);
    for (hetero::SyncMode sync : {hetero::SyncMode::predicted_poll, hetero::SyncMode::block})
        EXPECT_EQ(greedy(s.m, three, sync, 24), expected) << (sync == hetero::SyncMode::block ? "block" : "predicted_poll");
}

}  // namespace
