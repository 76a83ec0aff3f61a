// A batched decode step gives every sequence the logits it gets decoded
// alone: sequences prefilled into one session's KV cache, then advanced
// together (Session::decode_batch), against one session per sequence doing
// one token at a time. Sequences join and leave between steps and are
// listed in changing order, so every step binds other caches to its rows;
// plans split over two devices (layers, and matmuls cut by rows) and several
// architectures (biases, per-head norms, sliding windows, soft-caps) too.
#include "test_data.hpp"

#include <hetero/error.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/resilient_session.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/schedule/schedule.hpp>
#include <hetero/solver/planner.hpp>
#include <hetero/solver/prior_cost_model.hpp>

#include "build_tree_registry.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace hetero {
namespace {

namespace fs = std::filesystem;

Registry& registry() { return test::build_tree_registry(); }

int32_t argmax(const float* v, size_t n) { return int32_t(std::max_element(v, v + n) - v); }

// Four prompts of different lengths and how many tokens each decodes.
struct Stream {
    std::vector<int32_t> prompt;
    int steps = 0;
};

std::vector<Stream> streams(int32_t n_vocab) {
    auto ids = [&](std::initializer_list<int32_t> v) {
        std::vector<int32_t> out;
        for (int32_t t : v) out.push_back(t % n_vocab);
        return out;
    };
    return {{ids({1, 403, 281, 30, 77}), 24},
            {ids({1, 9, 18}), 9},
            {ids({1, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261}), 31},
            {ids({1, 42}), 17}};
}

// Each stream alone: greedy tokens and each step's logits.
struct Decoded {
    std::vector<int32_t> tokens;
    std::vector<std::vector<float>> logits;  // per decoded token, the logits it was chosen from
};

SessionOptions options(int32_t n_seq) {
    SessionOptions so;
    so.n_ctx = 64;
    so.n_seq = n_seq;
    so.max_batch = 4;  // prompts run as chunks of 4 tokens and fewer
    return so;
}

Decoded decode_alone(const ModelFile& model, const Plan& plan, const Stream& s) {
    Session session(model, plan, options(1));
    Decoded d;
    const std::vector<float>* logits = &session.forward(s.prompt, 0);
    const size_t V = size_t(model.hparams.n_vocab);
    for (int i = 0; i < s.steps; ++i) {
        d.logits.push_back(*logits);
        d.tokens.push_back(argmax(logits->data(), V));
        logits = &session.forward({d.tokens.back()}, int32_t(s.prompt.size()) + i);
    }
    return d;
}

// All streams in one session of `slots` sequences, stream i in slot slot_of[i]:
// prefilled one after another, then decoded together; a stream that finished
// leaves the batch. Steps list the streams in rotating order.
std::vector<Decoded> decode_together(BatchEvaluator& session, int32_t n_vocab, const std::vector<Stream>& all, const std::vector<int32_t>& slot_of) {
    const size_t V = size_t(n_vocab);
    std::vector<Decoded> out(all.size());
    std::vector<std::vector<float>> pending(all.size());
    for (size_t i = 0; i < all.size(); ++i) pending[i] = session.forward_seq(slot_of[i], all[i].prompt, 0);
    for (int step = 0;; ++step) {
        std::vector<size_t> active;
        for (size_t i = 0; i < all.size(); ++i)
            if (int(out[i].tokens.size()) < all[i].steps) active.push_back(i);
        if (active.empty()) break;
        std::rotate(active.begin(), active.begin() + step % int(active.size()), active.end());
        std::vector<SeqToken> batch;
        for (size_t i : active) {
            out[i].logits.push_back(pending[i]);
            out[i].tokens.push_back(argmax(pending[i].data(), V));
            batch.push_back({slot_of[i], out[i].tokens.back(), int32_t(all[i].prompt.size() + out[i].tokens.size()) - 1});
        }
        const std::vector<float>& logits = session.decode_batch(batch);
        EXPECT_EQ(logits.size(), batch.size() * V);
        for (size_t r = 0; r < active.size(); ++r) pending[active[r]].assign(logits.begin() + std::ptrdiff_t(r * V), logits.begin() + std::ptrdiff_t((r + 1) * V));
    }
    return out;
}

// Tokens equal; logits equal within `tolerance` (0: bit for bit).
void expect_same(const std::vector<Decoded>& together, const std::vector<Decoded>& alone, float tolerance, const std::string& what) {
    for (size_t i = 0; i < alone.size(); ++i) {
        EXPECT_EQ(together[i].tokens, alone[i].tokens) << what << ": stream " << i;
        float worst = 0;
        for (size_t t = 0; t < std::min(together[i].logits.size(), alone[i].logits.size()); ++t)
            for (size_t v = 0; v < alone[i].logits[t].size(); ++v) worst = std::max(worst, std::fabs(together[i].logits[t][v] - alone[i].logits[t][v]));
        EXPECT_LE(worst, tolerance) << what << ": stream " << i << " logits differ by up to " << worst;
    }
}

struct Case {
    std::string provider;
    std::string model;  // a path, or "random:<arch>:<dtype name>" written for the test
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
    std::string m = info.param.model;
    for (char& c : m)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
    return info.param.provider + "_" + m.substr(m.size() > 24 ? m.size() - 24 : 0);
}

std::string model_path(const std::string& spec) {
    if (spec.rfind("random:", 0) != 0) return spec;
    const size_t colon = spec.find(':', 7);
    const std::string arch = spec.substr(7, colon - 7), dtype = spec.substr(colon + 1);
    const std::string path = test::temp_path("batch_" + arch + "_" + dtype + ".gguf").string();
    if (!fs::exists(test::removed_at_exit(path))) {
        RandomModelShape shape = random_model_preset("tiny-k");
        shape.n_vocab = 300;
        write_random_model(path, shape, dtype == "q4_0" ? HETERO_DTYPE_Q4_0 : dtype == "q8_0" ? HETERO_DTYPE_Q8_0 : HETERO_DTYPE_F32, 11, arch);
    }
    return path;
}

class BatchDecode : public testing::TestWithParam<Case> {};

TEST_P(BatchDecode, EverySequenceGetsTheLogitsItGetsAlone) {
    Provider* p = registry().find(GetParam().provider);
    if (!p || p->device_count() == 0) GTEST_SKIP() << GetParam().provider << " has no device here";
    OpenedModel m = open_model(model_path(GetParam().model));
    const Plan plan = plan_single_device(int(m.file.hparams.n_layer), {{p, 0, p->device_props(0)}}, 0);
    const std::vector<Stream> all = streams(m.file.hparams.n_vocab);
    std::vector<Decoded> alone;
    for (const Stream& s : all) alone.push_back(decode_alone(m.file, plan, s));
    // Both forms of the step: one ATTENTION_SEQS a layer over stacked caches
    // (the default where the provider has it), and per-sequence attention
    // over caches of their own (HETERO_STACKED_KV=0).
    for (const bool stacked : {true, false}) {
        if (stacked) ::unsetenv("HETERO_STACKED_KV");
        else ::setenv("HETERO_STACKED_KV", "0", 1);
        Session session(m.file, plan, options(6));
        ::unsetenv("HETERO_STACKED_KV");
        EXPECT_EQ(session.stacked_caches(), stacked) << GetParam().provider;
        // Slots out of order and not contiguous: 5, 0, 3, 2.
        const std::vector<Decoded> together = decode_together(session, m.file.hparams.n_vocab, all, {5, 0, 3, 2});
        // The cpu provider computes each row as it computes a row alone; a GPU
        // provider may take another kernel for several rows (PoCL's OpenCL
        // quantizes a batch's activations to 8 bits for Q4_0 weights).
        expect_same(together, alone, GetParam().provider == "cpu" ? 0.f : 0.05f, GetParam().model + (stacked ? " stacked" : " per sequence"));
    }
}

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const char* p : {"cpu", "opencl", "vulkan"}) {
        out.push_back({p, HETERO_SOURCE_DIR "/models/stories260K.gguf"});
        out.push_back({p, "random:llama:q4_0"});
    }
    for (const char* arch : {"qwen2", "qwen3", "gemma2", "mistral"}) out.push_back({"cpu", std::string("random:") + arch + ":q8_0"});
    return out;
}

INSTANTIATE_TEST_SUITE_P(Providers, BatchDecode, testing::ValuesIn(cases()), case_name);

// Layers over two devices and every matmul cut by rows between them: the
// batched step's hand-overs, merges and views cross devices.
TEST(BatchDecodeSplit, PlansOverTwoDevices) {
    Provider* cpu = registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    Provider* other = registry().find("opencl");
    if (!other || other->device_count() == 0) other = cpu;  // two entries of one provider: hand-overs still cross tasks
    OpenedModel m = open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const std::vector<DeviceRef> devs = {{cpu, 0, cpu->device_props(0)}, {other, 0, other->device_props(0)}};
    Plan plan = plan_even_layers(int(m.file.hparams.n_layer), devs);
    const ModelGraph g = build_model_graph(m.file, 1, 64, std::vector<uint32_t>(size_t(m.file.hparams.n_layer), HETERO_DTYPE_F32));
    for (const ModelNode& n : g.nodes) {
        if (!is_matmul_role(n.role) || n.layer % 2 == 1) continue;
        const int64_t rows = g.tensors[size_t(n.node.inputs[1])].desc.shape[0];
        const int64_t cut = rows / 2 / 32 * 32;
        if (cut == 0) continue;
        plan.layers[size_t(n.layer)].matmuls[kDecode][n.role] = {{0, 0, cut}, {1, cut, rows}};
    }
    const std::vector<Stream> all = streams(m.file.hparams.n_vocab);
    std::vector<Decoded> alone;
    for (const Stream& s : all) alone.push_back(decode_alone(m.file, plan, s));
    Session session(m.file, plan, options(4));
    expect_same(decode_together(session, m.file.hparams.n_vocab, all, {0, 1, 2, 3}), alone, other == cpu ? 0.f : 0.05f, plan.describe());
}

// The batched step's schedule: the per-sequence nodes run in tasks of their
// own (no executable binds a view beside its base), views are never handed
// over themselves, and the step is scheduled with the decode placement.
// The story model planned on the cpu provider alone.
class BatchDecodeSchedule : public testing::Test {
protected:
    void SetUp() override {
        Provider* cpu = registry().find("cpu");
        ASSERT_NE(cpu, nullptr);
        plan = plan_single_device(n_layer, {{cpu, 0, cpu->device_props(0)}}, 0);
    }
    OpenedModel m = open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const int n_layer = int(m.file.hparams.n_layer);
    Plan plan;
};

TEST_F(BatchDecodeSchedule, SequenceBlocksAreTasksOfTheirOwn) {
    const ModelGraph g = build_batch_graph(m.file, 3, 64, std::vector<uint32_t>(size_t(n_layer), HETERO_DTYPE_F32));
    EXPECT_EQ(g.n_seq, 3);
    EXPECT_EQ(g.head_rows, 3);
    const Schedule s = make_schedule(g, plan);
    EXPECT_EQ(s.phase, kDecode);
    int blocks = 0;
    for (const ScheduledTask& t : s.tasks) {
        std::set<int> seqs;
        for (size_t i : t.nodes) seqs.insert(g.nodes[i].seq);
        const bool block = *seqs.rbegin() >= 0;
        if (block) {
            ++blocks;
            EXPECT_EQ(seqs.count(-1), 0u) << t.name;
            EXPECT_EQ(seqs.size(), 3u) << t.name;
        }
    }
    EXPECT_EQ(blocks, n_layer);
    for (const HandOver& h : s.hand_overs) EXPECT_LT(g.tensors[size_t(h.tensor)].view_of, 0) << h.name;
    EXPECT_THROW(build_batch_graph(m.file, 1, 64, std::vector<uint32_t>(size_t(n_layer), HETERO_DTYPE_F32)), Error);
}

// Over stacked caches the step has no per-sequence nodes: a store pair and
// one ATTENTION_SEQS a layer, reading the host-filled cache_rows, and the
// step has the tasks of a one-sequence step.
TEST_F(BatchDecodeSchedule, StackedCachesMakeOneTask) {
    const std::vector<uint32_t> f32(size_t(n_layer), HETERO_DTYPE_F32);
    const ModelGraph g = build_batch_graph(m.file, 3, 64, f32, 5);
    int attentions = 0, stores = 0;
    for (const ModelNode& n : g.nodes) {
        EXPECT_EQ(n.seq, -1);
        if (n.node.op == HETERO_OP_ATTENTION_SEQS) {
            ++attentions;
            EXPECT_EQ(n.node.iparams[1], 64);
            EXPECT_EQ(g.tensors[size_t(n.node.inputs[1])].desc.shape[0], 5 * 64);
            EXPECT_EQ(g.tensors[size_t(n.node.inputs[3])].use, TensorUse::cache_rows);
        }
        stores += n.node.op == HETERO_OP_STORE_ROWS;
    }
    EXPECT_EQ(attentions, n_layer);
    EXPECT_EQ(stores, 2 * n_layer);
    const Schedule s = make_schedule(g, plan);
    // As many tasks as one sequence's decode step has.
    EXPECT_EQ(s.tasks.size(), make_schedule(build_model_graph(m.file, 1, 64, f32), plan).tasks.size());
    EXPECT_GE(s.cache_rows, 0);
    EXPECT_THROW(build_batch_graph(m.file, 6, 64, f32, 5), Error) << "more sequences in a step than the stack holds";
}

TEST(BatchDecodeErrors, BadStepsAreRefusedByName) {
    Provider* cpu = registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    OpenedModel m = open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    Session session(m.file, plan_single_device(int(m.file.hparams.n_layer), {{cpu, 0, cpu->device_props(0)}}, 0), options(2));
    auto message = [&](const std::vector<SeqToken>& steps) {
        try {
            session.decode_batch(steps);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message({}).find("no sequences"), std::string::npos);
    EXPECT_NE(message({{0, 1, 0}, {0, 1, 0}}).find("names sequence 0 twice"), std::string::npos);
    EXPECT_NE(message({{2, 1, 0}}).find("sequence 2 outside"), std::string::npos);
    EXPECT_NE(message({{0, 1, 0}, {1, 1, 64}}).find("context is full"), std::string::npos);
    EXPECT_NE(message({{0, 1, 0}, {1, 1, 1}, {1, 2, 2}}).find("holds 2"), std::string::npos);
    EXPECT_NE(message({{0, 100000, 0}}).find("outside the vocabulary"), std::string::npos);
    EXPECT_THROW(session.forward_seq(2, {1}, 0), Error);
}

// A ResilientSession keeps a history per sequence: a decode step at a
// position past a sequence's history is refused, and batched steps give
// what the plain session gives.
TEST(BatchDecodeResilient, HistoriesPerSequence) {
    Provider* cpu = registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    OpenedModel m = open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const Plan plan = plan_single_device(int(m.file.hparams.n_layer), {{cpu, 0, cpu->device_props(0)}}, 0);
    ResilientSession rs(m.file, plan, options(4), [](const std::vector<DeviceRef>&) -> Replanned { throw Error("no re-planning here"); });
    const std::vector<Stream> all = streams(m.file.hparams.n_vocab);
    std::vector<Decoded> alone;
    for (const Stream& s : all) alone.push_back(decode_alone(m.file, plan, s));
    expect_same(decode_together(rs, m.file.hparams.n_vocab, all, {3, 2, 1, 0}), alone, 0.f, "resilient");
    EXPECT_THROW(rs.decode_batch({{0, 1, 200}}), Error);
}

// The planner knows the batch: a decode step of 8 sequences is predicted to
// cost more than one of 1 (8 rows of compute, 8 attentions) and less than 8
// of them (the weights are read once).
TEST(BatchDecodePlan, ADecodeStepIsCostedForItsBatch) {
    Provider* cpu = registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    OpenedModel m = open_model(model_path("random:llama:q4_0"));
    const std::vector<DeviceRef> devs = {{cpu, 0, cpu->device_props(0)}};
    const PriorCostModel cost(devs);
    PlanRequest req;
    req.n_ctx = 256;
    const double one = solve_plan(m.file, devs, cost, req).predicted_seconds[kDecode];
    req.decode_batch = 8;
    const double eight = solve_plan(m.file, devs, cost, req).predicted_seconds[kDecode];
    EXPECT_GT(eight, one);
    EXPECT_LT(eight, 8 * one);
}

}  // namespace
}  // namespace hetero
