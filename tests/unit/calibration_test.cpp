// The calibration probe and its cache: a real probe of the CPU provider gives
// a fit that survives the cache; corrupt, out-of-range and stale files are
// not used; the calibrated prior multiplies the prior by the fit, and a
// device on the same silicon is only ever slowed by it. No test checks a
// measured time against a bound.
#include "captured_log.hpp"
#include "fresh_cache_fixture.hpp"

#include <hetero/error.hpp>
#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/profile/calibration.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/solver/prior_cost_model.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace hetero;

class Calibration : public test::CpuWithFreshCache {
protected:
    Calibration() : CpuWithFreshCache("calibration") {}
    // A stored calibration with a fit of our choosing (no probe run).
    DeviceCalibration made_up(std::vector<SessionFitPoint> fit) const {
        DeviceCalibration c;
        c.key = calibration_key(cpu_, HETERO_DTYPE_Q4_0);
        c.date = "2026-11-27T00:00:00Z";
        c.probe_seconds = 1.5;
        c.fit = std::move(fit);
        return c;
    }
};

struct EnvVar {
    explicit EnvVar(const char* value) {
        if (value) ::setenv("HETERO_CALIBRATE", value, 1);
        else ::unsetenv("HETERO_CALIBRATE");
    }
    ~EnvVar() { ::unsetenv("HETERO_CALIBRATE"); }
};

TEST(CalibrationPolicy, ReadsTheEnvironmentAndRefusesUnknownValues) {
    {
        EnvVar e(nullptr);
        EXPECT_EQ(calibration_policy_from_env(), CalibrationPolicy::probe);
    }
    {
        EnvVar e("off");
        EXPECT_EQ(calibration_policy_from_env(), CalibrationPolicy::off);
    }
    {
        EnvVar e("0");
        EXPECT_EQ(calibration_policy_from_env(), CalibrationPolicy::off);
    }
    {
        EnvVar e("cached");
        EXPECT_EQ(calibration_policy_from_env(), CalibrationPolicy::cached);
    }
    EnvVar e("sometimes");
    try {
        calibration_policy_from_env();
        FAIL() << "accepted HETERO_CALIBRATE=sometimes";
    } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find("sometimes"), std::string::npos) << err.what();
    }
}

// Decode is probed over enough layers to stream past the host's caches on
// devices of the host, over one layer on a device with its own memory.
TEST(CalibrationProbe, DecodeLayersStreamPastTheHostCaches) {
    constexpr uint64_t MiB = 1ull << 20, layer = 113 * MiB;
    EXPECT_EQ(hetero::decode_probe_layers(false, layer, 300 * MiB), 1);  // a discrete GPU
    EXPECT_EQ(hetero::decode_probe_layers(true, layer, 32 * MiB), 1);    // 2 x 32 MiB fits in one layer
    EXPECT_EQ(hetero::decode_probe_layers(true, layer, 300 * MiB), 6);   // 600 MiB: six layers
    EXPECT_EQ(hetero::decode_probe_layers(true, layer, 0), 1);           // the system does not say
    EXPECT_EQ(hetero::decode_probe_layers(true, layer, 4096 * MiB), int32_t(hetero::kMaxDecodeProbeLayers));
    EXPECT_EQ(hetero::decode_probe_layers(true, 0, 300 * MiB), 1);
}

TEST_F(Calibration, ProbeDtypeIsTheMatmulDtypeWithTheMostBytes) {
    const ModelFile f32 = load_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    EXPECT_FALSE(probe_dtype(f32).has_value()) << "f32 reference models are not probed";
    RandomModelShape s = random_model_preset("tiny");
    const std::string path = (dir_ / "q8.gguf").string();
    write_random_model(path, s, HETERO_DTYPE_Q8_0, 1);
    const ModelFile q8 = load_model(path);
    ASSERT_TRUE(probe_dtype(q8).has_value());
    EXPECT_EQ(*probe_dtype(q8), uint32_t(HETERO_DTYPE_Q8_0));
}

TEST_F(Calibration, RealProbeOfTheCpuSurvivesTheCache) {
    DeviceCalibration c = calibrate_device(cpu_, HETERO_DTYPE_Q4_0);
    ASSERT_FALSE(c.fit.empty()) << c.note;
    EXPECT_EQ(c.fit.front().n, 1);
    for (size_t i = 0; i < c.fit.size(); ++i) {
        EXPECT_GT(c.fit[i].scale, 0.0);
        if (i) {
            EXPECT_GT(c.fit[i].n, c.fit[i - 1].n);
        }
    }
    EXPECT_GT(c.probe_seconds, 0.0);
    const std::string path = save_calibration(c);
    EXPECT_TRUE(fs::exists(path));
    // The probe's model file is removed again.
    for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) EXPECT_EQ(e.path().extension(), ".json") << e.path();
    const auto loaded = load_calibration(cpu_, HETERO_DTYPE_Q4_0);
    ASSERT_TRUE(loaded.has_value());
    ASSERT_EQ(loaded->fit.size(), c.fit.size());
    for (size_t i = 0; i < c.fit.size(); ++i) {
        EXPECT_EQ(loaded->fit[i].n, c.fit[i].n);
        EXPECT_DOUBLE_EQ(loaded->fit[i].scale, c.fit[i].scale);
        EXPECT_DOUBLE_EQ(loaded->fit[i].overhead_seconds, c.fit[i].overhead_seconds);
    }
    EXPECT_FALSE(load_calibration(cpu_, HETERO_DTYPE_Q8_0).has_value()) << "a calibration is per dtype";
}

TEST_F(Calibration, CorruptOutOfRangeAndStaleFilesAreNotUsed) {
    const std::string path = save_calibration(made_up({{1, 2.0, 1e-5}, {64, 0.5, 0}}));
    ASSERT_TRUE(load_calibration(cpu_, HETERO_DTYPE_Q4_0).has_value());
    {
        std::ofstream(path) << "{\"format\": \"hetero-calibration\", \"version\": 1, \"key\": ";
        test::CapturedLog log;
        EXPECT_FALSE(load_calibration(cpu_, HETERO_DTYPE_Q4_0).has_value());
        EXPECT_TRUE(log.contains(path, "ignoring it"));
        EXPECT_EQ(log.lines.size(), 1u);
    }
    {
        save_calibration(made_up({{1, 1e9, 0}}));
        test::CapturedLog log;
        EXPECT_FALSE(load_calibration(cpu_, HETERO_DTYPE_Q4_0).has_value()) << "a scale of 1e9 was used";
        EXPECT_TRUE(log.contains("scale=", "ignoring it")) << (log.lines.empty() ? "" : log.lines[0]);
    }
    {
        DeviceCalibration stale = made_up({{1, 2.0, 0}});
        stale.key.driver = "an older driver";
        save_calibration(stale);
        EXPECT_FALSE(load_calibration(cpu_, HETERO_DTYPE_Q4_0).has_value()) << "a calibration of another driver was used";
    }
}

TEST_F(Calibration, CalibratedPriorScalesTheNodesAndAddsTheOverhead) {
    const std::vector<DeviceRef> devices{cpu_};
    const PriorCostModel prior(devices);
    const auto cost = make_calibrated_prior(devices, {made_up({{1, 2.0, 1e-5}, {64, 0.5, 0}})});
    const OpShape decode{HETERO_OP_MATMUL, HETERO_DTYPE_Q4_0, 1, 256, 512, 0};
    const OpShape prefill{HETERO_OP_MATMUL, HETERO_DTYPE_Q4_0, 64, 256, 512, 0};
    EXPECT_DOUBLE_EQ(cost->node_seconds(0, decode), 2.0 * prior.node_seconds(0, decode));
    EXPECT_DOUBLE_EQ(cost->node_seconds(0, prefill), 0.5 * prior.node_seconds(0, prefill));
    EXPECT_DOUBLE_EQ(cost->execute_seconds(0, 1), prior.launch_seconds(0) + 1e-5);
    EXPECT_NE(cost->source(0).find("calibrated"), std::string::npos) << cost->source(0);
    // A probe that ran in this process built the device's kernels: no compile cost is owed.
    DeviceRef slow_build = cpu_;
    slow_build.props.compile_seconds_hint = 7.0;
    DeviceCalibration fresh = made_up({{1, 2.0, 0}});
    EXPECT_EQ(make_calibrated_prior({slow_build}, {fresh})->compile_seconds(0), 7.0);
    fresh.built_now = true;
    EXPECT_EQ(make_calibrated_prior({slow_build}, {fresh})->compile_seconds(0), 0.0);
    // Without a calibration: the bare prior.
    const auto bare = make_calibrated_prior(devices, {std::nullopt});
    EXPECT_DOUBLE_EQ(bare->node_seconds(0, decode), prior.node_seconds(0, decode));
    // A calibration that could not run (empty fit) is the bare prior too.
    DeviceCalibration failed = made_up({});
    failed.note = "cannot run a layer";
    EXPECT_DOUBLE_EQ(make_calibrated_prior(devices, {failed})->node_seconds(0, decode), prior.node_seconds(0, decode));
}

TEST_F(Calibration, SameSiliconIsOnlySlowedByItsNeighboursFit) {
    // Two devices on the host's cores: the calibrated one's scale carries
    // over to the other where it slows (2x at decode), not where it speeds (0.5x).
    const std::vector<DeviceRef> devices{cpu_, cpu_};
    const PriorCostModel prior(devices);
    const auto cost = make_calibrated_prior(devices, {made_up({{1, 2.0, 0}, {64, 0.5, 0}}), std::nullopt});
    const OpShape decode{HETERO_OP_MATMUL, HETERO_DTYPE_Q4_0, 1, 256, 512, 0};
    const OpShape prefill{HETERO_OP_MATMUL, HETERO_DTYPE_Q4_0, 64, 256, 512, 0};
    EXPECT_DOUBLE_EQ(cost->node_seconds(1, decode), 2.0 * prior.node_seconds(1, decode));
    EXPECT_DOUBLE_EQ(cost->node_seconds(1, prefill), prior.node_seconds(1, prefill));
}

TEST_F(Calibration, PolicyOffAndCachedNeverProbe) {
    RandomModelShape s = random_model_preset("tiny");
    const std::string path = (dir_ / "q4.gguf").string();
    write_random_model(path, s, HETERO_DTYPE_Q4_0, 1);
    const ModelFile model = load_model(path);
    const std::vector<DeviceRef> devices{cpu_};
    std::vector<std::string> notes;
    EXPECT_FALSE(calibrations_for(devices, model, {false}, CalibrationPolicy::off, &notes)[0].has_value());
    EXPECT_FALSE(calibrations_for(devices, model, {false}, CalibrationPolicy::cached, &notes)[0].has_value());
    EXPECT_TRUE(notes.empty());
    EXPECT_FALSE(fs::exists(calibration_dir())) << "a probe ran";
    // A profiled device is not calibrated, whatever the policy.
    EXPECT_FALSE(calibrations_for(devices, model, {true}, CalibrationPolicy::probe, &notes)[0].has_value());
    save_calibration(made_up({{1, 2.0, 0}}));
    const auto cached = calibrations_for(devices, model, {false}, CalibrationPolicy::cached, &notes);
    ASSERT_TRUE(cached[0].has_value());
    EXPECT_EQ(cached[0]->fit.size(), 1u);
}

}  // namespace
