// SoC profiles, their cost model and the simulator, on hand-computable cases.
#include <hetero/error.hpp>
#include <hetero/sim/model_shapes.hpp>
#include <hetero/sim/simulator.hpp>
#include <hetero/sim/soc_cost_model.hpp>
#include <hetero/solver/planner.hpp>

#include <gtest/gtest.h>

#include <string>

namespace hetero {
namespace {

std::string fig(double v) { return "{\"value\": " + std::to_string(v) + ", \"source\": \"assumed: test\"}"; }

std::string unit(const std::string& kind, double gflops, double bw, const std::string& ops, const std::string& npu = "") {
    return "{\"kind\": \"" + kind + "\", \"fp32_gflops\": " + fig(gflops) + ", \"fp16_gflops\": " + fig(gflops) + ", \"int8_gops\": " + fig(gflops) +
           ", \"bandwidth_gbs\": " + fig(bw) + ", \"launch_us\": " + fig(0) + ", \"ops\": [" + ops + "]" + (npu.empty() ? "" : ", \"npu\": " + npu) + "}";
}

std::string npu_section(double shape_penalty) {
    return "{\"tile_rows\": " + fig(1) + ", \"tile_cols\": " + fig(1) + ", \"row_align\": " + fig(32) + ", \"seq_align\": " + fig(32) +
           ", \"order_penalty_max\": " + fig(1) + ", \"shape_penalty_max\": " + fig(shape_penalty) + ", \"graph_switch_us\": " + fig(0) +
           ", \"compile_ms_base\": " + fig(0) + ", \"compile_ms_per_mflop\": " + fig(0) + ", \"map_limit_bytes\": " + fig(4e9) +
           ", \"default_chunk_tokens\": " + fig(64) + ", \"prepared_tokens\": {\"value\": [1, 64], \"source\": \"assumed: test\"}" +
           ", \"activation_quant\": \"per_tensor\", \"weight_quant\": \"per_channel\"}";
}

const std::string kAll = "\"matmul_w8a8\", \"matmul_f16\", \"matmul_f32\", \"matmul_w4a16\", \"rmsnorm\", \"rope\", \"attention\", \"swiglu\", \"add\", \"mul\", \"softmax\", \"embedding\", \"convert\", \"store_rows\"";

std::string profile(const std::string& units, double combined = 60, double peak = 68) {
    return "{\"schema\": \"hetero-soc-profile/1\", \"id\": \"test-soc\", \"name\": \"test\", \"memory\": {\"peak_gbs\": " + fig(peak) +
           ", \"combined_gbs\": " + fig(combined) + ", \"sync_us\": " + fig(0) + ", \"copy_gbs\": " + fig(10) + "}, \"units\": {" + units + "}}";
}

TEST(SocProfile, ErrorsNameTheFileAndPath) {
    std::string text = profile("\"npu\": " + unit("npu", 100, 10, "\"matmul_w8a8\"", npu_section(2)));
    // Drop tile_rows' source.
    const std::string with = "\"tile_rows\": " + fig(1);
    text.replace(text.find(with), with.size(), "\"tile_rows\": {\"value\": 32}");
    try {
        parse_soc_profile(text, "my.json");
        FAIL() << "a figure without source was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "my.json: units.npu.npu.tile_rows: missing \"source\"");
    }
}

TEST(SocProfile, DuplicateKeyIsAnErrorNamingItsPath) {
    std::string text = profile("\"cpu\": " + unit("cpu", 100, 10, kAll) + ", \"gpu\": " + unit("gpu", 100, 10, kAll));
    // A second bandwidth figure in the gpu unit: the last one would win unseen.
    const std::string bw = "\"bandwidth_gbs\": " + fig(10);
    text.replace(text.rfind(bw), bw.size(), bw + ", \"bandwidth_gbs\": " + fig(20));
    try {
        parse_soc_profile(text, "dup.json");
        FAIL() << "a repeated key was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("dup.json: duplicate key 'units.gpu.bandwidth_gbs'"), std::string::npos) << e.what();
    }
}

TEST(SocProfile, RefusesBadKindNegativeAndUnknownOp) {
    EXPECT_THROW(parse_soc_profile(profile("\"x\": " + unit("dsp", 1, 1, "")), "p.json"), Error);
    EXPECT_THROW(parse_soc_profile(profile("\"cpu\": " + unit("cpu", 1, -1, "")), "p.json"), Error);
    EXPECT_THROW(parse_soc_profile(profile("\"cpu\": " + unit("cpu", 1, 1, "\"fly\"")), "p.json"), Error);
    EXPECT_THROW(parse_soc_profile(profile("\"cpu\": " + unit("cpu", 1, 1, "")), "p.json").unit_index("gpu"), Error);
}

TEST(SocProfile, ShippedProfilesLoadAndUnknownNamesFail) {
    const SocProfile p = load_soc_profile("snapdragon-8-gen-3");
    EXPECT_EQ(p.id, "snapdragon-8-gen-3");
    EXPECT_EQ(p.units.size(), 3u);
    EXPECT_NO_THROW(load_soc_profile("snapdragon-8-gen-2"));
    try {
        load_soc_profile("no-such-soc");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown SoC profile 'no-such-soc'"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("snapdragon-8-gen-3"), std::string::npos);
    }
}

TEST(SocSimulator, OneMatmulOnOneUnitIsHandComputable) {
    // 100 GFLOPS, 10 GB/s: a 1x1024 by 1024x1024 F32 matmul streams 4 MiB + 8 KiB (bound by memory).
    const SocProfile p = parse_soc_profile(profile("\"cpu\": " + unit("cpu", 100, 10, kAll)), "t.json");
    const auto devs = soc_devices(p);
    SocCostModel cost(p, devs);
    OpShape s;
    s.op = HETERO_OP_MATMUL;
    s.dtype = HETERO_DTYPE_F32;
    s.n = 1, s.k = 1024, s.m = 1024;
    const double bytes = 1024.0 * 1024 * 4 + 4.0 * (1024 + 1024);
    EXPECT_DOUBLE_EQ(cost.node_seconds(0, s), bytes / 10e9);
    s.n = 1000;  // now compute-bound: 2 * 1000 * 1024 * 1024 / 100e9
    EXPECT_NEAR(cost.node_seconds(0, s), 2.0 * 1000 * 1024 * 1024 / 100e9, 1e-12);
    const Plan plan = plan_single_device(1, devs, 0);
    const auto t = simulate_jobs(plan, cost, {{0, 0.0, 1e9}});
    EXPECT_NEAR(t[0], 0.1, 1e-12);  // 1 GB at 10 GB/s
}

TEST(SocSimulator, TwoStreamingUnitsShareTheCombinedBandwidth) {
    // Each unit alone 40 GB/s; together at most 60: 30 each while both stream.
    const SocProfile p = parse_soc_profile(profile("\"cpu\": " + unit("cpu", 100, 40, kAll) + ", \"gpu\": " + unit("gpu", 100, 40, kAll)), "t.json");
    const auto devs = soc_devices(p);
    SocCostModel cost(p, devs);
    const Plan plan = plan_single_device(1, devs, 0);
    // 3 GB and 1.5 GB: both at 30 GB/s until the second ends at 0.05 s, then the first alone at 40 GB/s.
    const auto t = simulate_jobs(plan, cost, {{0, 0.0, 3e9}, {1, 0.0, 1.5e9}});
    EXPECT_NEAR(t[1], 0.05, 1e-12);
    EXPECT_NEAR(t[0], 0.05 + 1.5e9 / 40e9, 1e-12);
    // Alone: 40 GB/s.
    EXPECT_NEAR(simulate_jobs(plan, cost, {{0, 0.0, 4e9}})[0], 0.1, 1e-12);
}

TEST(SocSimulator, SolverMovesPartOfFfnDownToTheGpuUnderTheShapePenalty) {
    // An NPU 4x the GPU, but 8x slower on k > m (FFN-down): prefill splits down, keeps gate on the NPU.
    const SocProfile p = parse_soc_profile(
        profile("\"gpu\": " + unit("gpu", 1000, 1000, kAll) + ", \"npu\": " + unit("npu", 4000, 1000, "\"matmul_w8a8\"", npu_section(8))), "t.json");
    const auto devs = soc_devices(p);
    SocCostModel cost(p, devs);
    const ModelFile m = shape_only_model(model_shape("tinyllama-1.1b"), HETERO_DTYPE_F16);
    PlanRequest req;
    req.n_ctx = 512;
    req.prompt_len = 256;
    req.max_batch = 64;
    req.n_generate = 1;
    const Plan plan = solve_plan(m, devs, cost, req);
    const auto down = plan.shares(3, Role::down, kPrefill, 2048);
    ASSERT_EQ(down.size(), 2u);
    EXPECT_EQ(devs[down[0].device].props.kind, uint32_t(HETERO_DEVICE_GPU));
    EXPECT_EQ(devs[plan.layers[3].home].props.kind, uint32_t(HETERO_DEVICE_GPU));  // the NPU runs no attention
    // The simulator runs the plan and labels its trace simulated.
    SimOptions so;
    so.prompt_len = 128;
    so.chunk = 64;
    so.n_generate = 4;
    so.trace = true;
    const SimResult r = simulate(m, plan, cost, so);
    EXPECT_GT(r.prefill_seconds, 0);
    EXPECT_GT(r.decode_seconds, 0);
    EXPECT_NE(r.trace_json.find("\"simulated\":true"), std::string::npos);
}

}  // namespace
}  // namespace hetero
