// Matmuls cut by output rows across two devices give the tokens one device
// gives: the scheduler's hand-over, merge and weight slices are exact.
#include <hetero/registry.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>

#include "build_tree_registry.hpp"

#include <gtest/gtest.h>

namespace {

hetero::Registry& split_registry() { return hetero::test::build_tree_registry(); }

std::vector<int32_t> greedy_tokens(const hetero::ModelFile& model, const hetero::Tokenizer& tok, const hetero::Plan& plan, int n) {
    hetero::SessionOptions so;
    so.cache_type = hetero::CacheType::f32;
    so.max_batch = 3;  // the prompt runs as prefill chunks of 3 and 2 tokens, then decode
    hetero::Session session(model, plan, so);
    hetero::Sampler greedy(hetero::SamplerOptions{0.f, 0, 1.f, 0});
    return hetero::generate(session, tok, "Once upon a time", n, greedy).tokens;
}

// Every matmul of every layer and of the head cut between devices a and b, in
// both phases, with a's share `num/den` of the rows rounded to 32.
hetero::Plan split_everything(const hetero::ModelFile& m, const std::vector<hetero::DeviceRef>& devs, size_t a, size_t b, int num, int den) {
    hetero::Plan plan = hetero::plan_single_device(int(m.hparams.n_layer), devs, a);
    const std::vector<uint32_t> f32(size_t(m.hparams.n_layer), HETERO_DTYPE_F32);
    const hetero::ModelGraph g = hetero::build_model_graph(m, 1, 64, f32);
    for (const hetero::ModelNode& n : g.nodes) {
        if (!hetero::is_matmul_role(n.role)) continue;
        const int64_t rows = g.tensors[size_t(n.node.inputs[1])].desc.shape[0];
        const int64_t cut = std::clamp<int64_t>(rows * num / den / 32 * 32, 0, rows);
        std::vector<hetero::Share> shares;
        if (cut > 0) shares.push_back({a, 0, cut});
        if (cut < rows) shares.push_back({b, cut, rows});
        for (int p = 0; p < hetero::kPhases; ++p) plan.layers[size_t(n.layer)].matmuls[size_t(p)][n.role] = shares;
    }
    return plan;
}

class RowSplit : public testing::TestWithParam<std::string> {};

TEST_P(RowSplit, EveryMatmulSplitGivesTheSameTokens) {
    hetero::Provider* cpu = split_registry().find("cpu");
    hetero::Provider* other = split_registry().find(GetParam());
    ASSERT_NE(cpu, nullptr);
    if (!other || other->device_count() == 0) GTEST_SKIP() << GetParam() << " has no device here";
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const std::vector<hetero::DeviceRef> devs = {{cpu, 0, cpu->device_props(0)}, {other, 0, other->device_props(0)}};
    const auto expected = greedy_tokens(m.file, *m.tokenizer, hetero::plan_single_device(int(m.file.hparams.n_layer), devs, 0), 40);
    ASSERT_GT(expected.size(), 20u);
    for (auto [num, den] : {std::pair{1, 2}, std::pair{1, 4}, std::pair{3, 4}}) {
        const hetero::Plan plan = split_everything(m.file, devs, 0, 1, num, den);
        ASSERT_EQ(plan.used_devices().size(), 2u);
        EXPECT_EQ(greedy_tokens(m.file, *m.tokenizer, plan, 40), expected) << "cpu share " << num << "/" << den << "\n" << plan.describe();
    }
    // Homes on the other device, matmuls split back onto the cpu.
    hetero::Plan flipped = split_everything(m.file, devs, 1, 0, 1, 2);
    EXPECT_EQ(greedy_tokens(m.file, *m.tokenizer, flipped, 40), expected) << flipped.describe();
}

TEST(RowSplitCpu, SplitOntoTheSameProviderTwice) {
    // Two device entries of one provider: shares, merges and hand-overs
    // through imported host memory, with no second driver involved.
    hetero::Provider* cpu = split_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    hetero::OpenedModel m = hetero::open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const std::vector<hetero::DeviceRef> devs = {{cpu, 0, cpu->device_props(0)}, {cpu, 0, cpu->device_props(0)}};
    const auto expected = greedy_tokens(m.file, *m.tokenizer, hetero::plan_single_device(int(m.file.hparams.n_layer), devs, 0), 40);
    const hetero::Plan plan = split_everything(m.file, devs, 0, 1, 1, 2);
    EXPECT_EQ(greedy_tokens(m.file, *m.tokenizer, plan, 40), expected) << plan.describe();
}

INSTANTIATE_TEST_SUITE_P(Providers, RowSplit, testing::Values("opencl", "vulkan"), [](const auto& i) { return i.param; });

}  // namespace
