// The schedule: a three-device plan cut into the tasks, queues, hand-overs
// and waits it must give; and the session and the simulator run exactly
// that schedule (the same tasks, in the same order, on each device).
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/runtime/trace.hpp>
#include <hetero/schedule/schedule.hpp>
#include <hetero/sim/model_shapes.hpp>
#include <hetero/sim/simulator.hpp>
#include <hetero/sim/soc_cost_model.hpp>

#include "build_tree_registry.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace hetero {
namespace {

constexpr size_t kCpu = 0, kGpu = 1, kNpu = 2;  // the shipped profile's units, in soc_devices' order

// Layers 0-10 at home on the cpu, 11-21 and the head on the gpu; layer 5's
// ffn_up cut by rows between the cpu and the npu, in both phases.
Plan three_device_plan(const std::vector<DeviceRef>& devs, int n_layer, int64_t up_rows) {
    Plan plan = plan_single_device(n_layer, devs, kCpu);
    for (int l = 11; l <= n_layer; ++l) plan.layers[size_t(l)].home = kGpu;
    for (int p = 0; p < kPhases; ++p) plan.layers[5].matmuls[size_t(p)][Role::up] = {Share{kCpu, 0, 2048}, Share{kNpu, 2048, up_rows}};
    return plan;
}

std::vector<uint32_t> auto_cache(const Plan& plan, int n_layer) {
    std::vector<uint32_t> cache(static_cast<size_t>(n_layer), 0u);
    for (int l = 0; l < n_layer; ++l) cache[size_t(l)] = cache_dtype(CacheType::automatic, plan.devices[plan.layers[size_t(l)].home].props);
    return cache;
}

const HandOver& hand_over(const Schedule& s, const std::string& name) {
    for (const HandOver& h : s.hand_overs)
        if (h.name == name) return h;
    throw Error("no hand-over " + name);
}

std::vector<std::string> task_names(const Schedule& s) {
    std::vector<std::string> names;
    for (const ScheduledTask& t : s.tasks) names.push_back(t.name);
    return names;
}

struct SocSetup {
    SocProfile profile = load_soc_profile("snapdragon-8-gen-3");
    std::vector<DeviceRef> devs = soc_devices(profile);
    ModelFile model = shape_only_model(model_shape("tinyllama-1.1b"), HETERO_DTYPE_F16);
    int n_layer = int(model.hparams.n_layer);
    Plan plan = three_device_plan(devs, n_layer, model.hparams.n_ff);
};

TEST(Schedule, ThreeDevicesTasksQueuesHandOversAndWaits) {
    SocSetup soc;
    ASSERT_EQ(soc.n_layer, 22);
    const ModelGraph g = build_model_graph(soc.model, 64, 512, auto_cache(soc.plan, soc.n_layer));
    const Schedule s = make_schedule(g, soc.plan);
    EXPECT_EQ(s.phase, kPrefill);
    EXPECT_EQ(s.n_tokens, 64);

    // Tasks in graph order: cut around the split matmul, where the home
    // changes, and before the head.
    const std::vector<std::string> expected = {"layers 0-5",      "layer 5 ffn_up rows 0-2047", "layer 5 ffn_up rows 2048-5631",
                                               "merge blk.5.up", "layers 5-10",                "layers 11-21",
                                               "output head"};
    ASSERT_EQ(task_names(s), expected);
    EXPECT_EQ(s.tasks[1].share, 0);
    EXPECT_EQ(s.tasks[2].share, 1);
    EXPECT_EQ(s.tasks[1].merge_task, 3u);
    EXPECT_EQ(s.tasks[2].merge_task, 3u);
    EXPECT_EQ(s.tasks[3].kind, TaskKind::merge);
    EXPECT_EQ(s.tasks[3].device, kCpu);  // the layer's home joins the shares

    // Each device's order.
    ASSERT_EQ(s.queues.size(), 3u);
    EXPECT_EQ(s.queues[0].tasks, (std::vector<size_t>{0, 1, 3, 4}));
    EXPECT_EQ(s.queues[1].tasks, (std::vector<size_t>{5, 6}));
    EXPECT_EQ(s.queues[2].tasks, (std::vector<size_t>{2}));
    EXPECT_TRUE(s.queues[0].shares_host_memory);  // the profile's units share the SoC's memory

    // Hand-overs: the shares' input goes to both devices through host memory;
    // the gate stays on the cpu between two of its tasks; a share's rows go
    // to the merge; the merged tensor is made in host memory.
    const HandOver& norm = hand_over(s, "blk.5.ffn_in");
    EXPECT_EQ(norm.from_task, 0);
    EXPECT_EQ(norm.to_tasks, (std::vector<size_t>{1, 2}));
    EXPECT_TRUE(norm.via_host);
    const HandOver& gate = hand_over(s, "blk.5.gate");
    EXPECT_EQ(gate.from_task, 0);
    EXPECT_EQ(gate.to_tasks, (std::vector<size_t>{4}));
    EXPECT_FALSE(gate.via_host);
    const HandOver& share = hand_over(s, "blk.5.up rows 2048-5632");
    EXPECT_EQ(share.from_device, long(kNpu));
    EXPECT_EQ(share.to_tasks, (std::vector<size_t>{3}));
    EXPECT_EQ(share.bytes, uint64_t(64 * (5632 - 2048) * 4));
    EXPECT_EQ(hand_over(s, "blk.5.up").from_device, -1);
    // The head's input is the last row of layer 21's output, on the same device.
    const HandOver& head_in = s.hand_overs[size_t(s.hand_over_of[size_t(g.last_hidden)])];
    EXPECT_EQ(head_in.alias_of, s.hand_over_of[size_t(g.final_hidden)]);
    EXPECT_EQ(head_in.alias_offset, uint64_t(63 * 2048 * 4));
    EXPECT_EQ(head_in.from_task, 5);
    EXPECT_FALSE(head_in.via_host);
    EXPECT_TRUE(s.hand_overs[size_t(s.logits)].via_host);
    EXPECT_EQ(s.tasks[6].after, (std::vector<size_t>{5}));

    // Waits: only for what is made elsewhere than on the waiting device.
    std::vector<std::pair<size_t, size_t>> waits;
    for (const Wait& w : s.waits) waits.push_back({w.task, w.on_task});
    EXPECT_EQ(waits, (std::vector<std::pair<size_t, size_t>>{{2, 0}, {3, 2}, {4, 3}, {5, 4}}));

    // Decode: the same cut under the decode placement.
    const ModelGraph g1 = build_model_graph(soc.model, 1, 512, auto_cache(soc.plan, soc.n_layer));
    const Schedule d = make_schedule(g1, soc.plan);
    EXPECT_EQ(d.phase, kDecode);
    EXPECT_EQ(task_names(d), expected);

    // Its printouts name every task and hand-over.
    const std::string text = describe_schedule(s, soc.plan);
    EXPECT_NE(text.find("#2   execute  layer 5 ffn_up rows 2048-5631"), std::string::npos) << text;
    EXPECT_NE(text.find("#3 on cpu:0 waits for #2 on npu:0 (blk.5.up rows 2048-5632)"), std::string::npos) << text;
    const nlohmann::json j = nlohmann::json::parse(schedule_to_json(s, soc.plan));
    EXPECT_EQ(j["tasks"].size(), 7u);
    EXPECT_EQ(j["waits"].size(), 4u);
}

// Per track, the categories of a simulated trace's execute and merge events, in order.
std::map<std::string, std::vector<std::string>> simulated_tracks(const std::string& trace_json, double until) {
    const nlohmann::json j = nlohmann::json::parse(trace_json);
    std::map<int, std::string> track;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name") track[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] != "X" || e["ts"].get<double>() >= until * 1e6) continue;
        const std::string cat = e["cat"];
        if (cat == "simulated execute" || cat == "simulated merge") out[track[e["tid"].get<int>()]].push_back(cat.substr(10));
    }
    return out;
}

TEST(Schedule, TheSimulatorRunsTheSchedule) {
    SocSetup soc;
    SocCostModel cost(soc.profile, soc.devs);
    SimOptions so;
    so.prompt_len = 32;  // one prepared chunk: nothing to compile
    so.chunk = 32;
    so.n_generate = 2;
    so.trace = true;
    const SimResult r = simulate(soc.model, soc.plan, cost, so);
    ASSERT_EQ(r.chunks, (std::vector<int32_t>{32}));
    const Schedule s = make_schedule(build_model_graph(soc.model, 32, 512, auto_cache(soc.plan, soc.n_layer)), soc.plan);
    std::map<std::string, std::vector<std::string>> expected;
    for (const DeviceQueue& q : s.queues)
        for (size_t ti : q.tasks) expected[soc.devs[q.device].label() + " (simulated)"].push_back(task_kind_name(s.tasks[ti].kind));
    EXPECT_EQ(simulated_tracks(r.trace_json, r.prefill_seconds), expected);
}

// Per track, the names of a session trace's execute and merge slices, in order.
std::map<std::string, std::vector<std::string>> session_tracks(const std::vector<TraceRecorder::Slice>& slices) {
    std::map<std::string, std::vector<std::string>> out;
    for (const TraceRecorder::Slice& sl : slices)
        if (sl.category == "execute" || sl.category == "merge") out[sl.track].push_back(sl.name);
    return out;
}

std::map<std::string, std::vector<std::string>> schedule_tracks(const Schedule& s, const Plan& plan) {
    std::map<std::string, std::vector<std::string>> out;
    for (const DeviceQueue& q : s.queues)
        for (size_t ti : q.tasks) out[plan.devices[q.device].label()].push_back(s.tasks[ti].name);
    return out;
}

TEST(Schedule, TheSessionRunsTheSchedule) {
    Provider* cpu = test::build_tree_registry().find("cpu");
    Provider* npu = test::build_tree_registry().find("npu_emu");
    ASSERT_NE(cpu, nullptr);
    if (!npu || npu->device_count() == 0) GTEST_SKIP() << "npu_emu has no device here";
    OpenedModel m = open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const int n_layer = int(m.file.hparams.n_layer);
    const std::vector<DeviceRef> devs = {{cpu, 0, cpu->device_props(0)}, {npu, 0, npu->device_props(0)}};
    // Layer 1's ffn_down on the npu; layer 3's ffn_up cut between both.
    Plan plan = plan_single_device(n_layer, devs, 0);
    for (int p = 0; p < kPhases; ++p) {
        plan.layers[1].matmuls[size_t(p)][Role::down] = {Share{1, 0, int64_t(m.file.hparams.n_embd)}};
        plan.layers[3].matmuls[size_t(p)][Role::up] = {Share{0, 0, 64}, Share{1, 64, int64_t(m.file.hparams.n_ff)}};
    }
    TraceRecorder trace;
    SessionOptions so;
    so.cache_type = CacheType::f32;
    so.trace = &trace;
    Session session(m.file, plan, so);
    const std::vector<uint32_t> f32(size_t(n_layer), HETERO_DTYPE_F32);
    for (int32_t n : {5, 1}) {
        const size_t from = trace.size();
        std::vector<int32_t> tokens(size_t(n), 1);
        session.forward(tokens, n == 5 ? 0 : 5);
        const Schedule s = make_schedule(build_model_graph(m.file, n, session.n_ctx(), f32), plan);
        EXPECT_EQ(session_tracks(trace.slices(from)), schedule_tracks(s, plan)) << n << " tokens\n" << describe_schedule(s, plan);
        EXPECT_EQ(s.queues.size(), 2u);
    }
}

}  // namespace
}  // namespace hetero
