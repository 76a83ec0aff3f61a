#include <hetero/config.hpp>

#include <gtest/gtest.h>

namespace {

std::string error_of(const std::string& json) {
    try {
        hetero::Config::parse(json, "test.json");
    } catch (const hetero::Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Config, ParsesProvidersInOrderWithOptions) {
    auto c = hetero::Config::parse(R"({
        "plugin_dirs": ["/opt/x"],
        "providers": [
            {"name": "opencl", "devices": [0, "NVIDIA"]},
            {"name": "cpu", "options": {"threads": 2, "isa": "avx2", "pin": true}},
            {"name": "vulkan", "enabled": false}
        ]})",
                                   "test.json");
    ASSERT_EQ(c.providers.size(), 3u);
    auto o = c.registry_options();
    EXPECT_EQ(o.plugin_dirs, std::vector<std::string>{"/opt/x"});
    EXPECT_EQ(o.enabled, (std::vector<std::string>{"opencl", "cpu"}));
    EXPECT_EQ(o.provider_options["cpu"]["threads"], "2");
    EXPECT_EQ(o.provider_options["cpu"]["pin"], "1");
    EXPECT_TRUE(c.device_allowed("opencl", 0, "anything"));
    EXPECT_TRUE(c.device_allowed("opencl", 3, "NVIDIA H100"));
    EXPECT_FALSE(c.device_allowed("opencl", 1, "Intel"));
    EXPECT_TRUE(c.device_allowed("cpu", 5, "x"));
}

TEST(Config, UnknownKeysAndWrongTypesNameTheKeyAndFile) {
    EXPECT_NE(error_of(R"({"plugin_dir": []})").find("test.json: 'plugin_dir' is not a known key"), std::string::npos);
    EXPECT_NE(error_of(R"({"plugin_dirs": "x"})").find("'plugin_dirs' must be an array"), std::string::npos);
    EXPECT_NE(error_of(R"({"providers": [{"name": "cpu", "thread": 2}]})").find("'providers[0].thread' is not a known key"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"providers": [{"name": "cpu", "enabled": "yes"}]})").find("'providers[0].enabled' must be true or false"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"providers": [{"enabled": true}]})").find("'providers[0].name' is required"), std::string::npos);
    EXPECT_NE(error_of(R"({"providers": [{"name": "cpu", "options": {"threads": [1]}}]})").find("'providers[0].options.threads'"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"providers": [{"name": "cpu"}, {"name": "cpu"}]})").find("repeats provider 'cpu'"), std::string::npos);
    EXPECT_NE(error_of("{not json").find("test.json: invalid JSON"), std::string::npos);
    EXPECT_NE(error_of("[1,2]").find("top level must be an object"), std::string::npos);
    // A number beyond double's range (found by fuzz_config) is a config error naming the file.
    EXPECT_NE(error_of(R"({"providers": [88888888888888888889e888]})").find("test.json: invalid JSON"), std::string::npos);
    // "op": "matmuls" pins every matmul; elsewhere an op must be one matmul.
    EXPECT_NE(error_of(R"({"plan": {"split": [{"layers": "all", "op": "matmuls", "devices": ["a:0", "b:0"]}]}})").find("must name a matmul"),
              std::string::npos);
}

TEST(Config, DuplicateKeysAtAnyDepthNameTheKeyPathAndFile) {
    const auto dup = [](const std::string& json, const std::string& path) {
        const std::string e = error_of(json);
        return e.find("config test.json: duplicate key '" + path + "'") != std::string::npos ? ::testing::AssertionSuccess()
                                                                                            : ::testing::AssertionFailure() << e;
    };
    EXPECT_TRUE(dup(R"({"plugin_dirs": [], "plugin_dirs": ["/opt/x"]})", "plugin_dirs"));
    EXPECT_TRUE(dup(R"({"providers": [{"name": "cpu", "name": "opencl"}]})", "providers[0].name"));
    EXPECT_TRUE(dup(R"({"providers": [{"name": "vulkan"}, {"name": "cpu", "options": {"threads": 2, "threads": 4}}]})",
                    "providers[1].options.threads"));
    EXPECT_TRUE(dup(R"({"plan": {"pin": [{"layers": "0", "device": "cpu:0"}, {"layers": "1", "device": "a", "device": "b"}]}})",
                    "plan.pin[1].device"));
    // Arrays of scalars before an object count as elements too.
    EXPECT_TRUE(dup(R"({"providers": [{"name": "cpu", "devices": [0, "x", [1]], "options": {}, "options": {}}]})", "providers[0].options"));
    // The same key in different objects is no duplicate.
    EXPECT_EQ(error_of(R"({"providers": [{"name": "cpu", "options": {"name": "x"}}, {"name": "vulkan"}]})"), "");
}

TEST(Config, PinningMatmulsPinsEachOfThem) {
    const hetero::Config c = hetero::Config::parse(R"({"plan": {"pin": [{"layers": "all", "op": "matmuls", "device": "npu_emu:0"}]}})", "t.json");
    ASSERT_EQ(c.plan.pins.size(), 8u) << "7 per layer and the head's output";
    for (const auto& p : c.plan.pins) EXPECT_EQ(p.device, "npu_emu:0");
    const hetero::Config d = hetero::Config::parse(R"({"plan": {"pin": [{"layers": "1-2", "op": "matmuls", "device": "cpu:0"}]}})", "t.json");
    ASSERT_EQ(d.plan.pins.size(), 7u) << "no head in layers 1-2";
}

TEST(Config, MissingFileIsAnError) {
    EXPECT_THROW(hetero::Config::load("/nonexistent/config.json"), hetero::Error);
}

TEST(Config, AllProvidersDisabledEnablesNothing) {
    auto c = hetero::Config::parse(R"({"providers": [{"name": "cpu", "enabled": false}]})", "t");
    auto o = c.registry_options();
    ASSERT_EQ(o.enabled.size(), 1u);
    EXPECT_EQ(o.enabled[0], "");
}

TEST(Config, SelectProvidersKeepsTheirOptions) {
    auto c = hetero::Config::parse(R"({"providers": [{"name": "cpu", "options": {"threads": 1}}]})", "t");
    c.select_providers({"opencl", "cpu"});
    auto o = c.registry_options();
    EXPECT_EQ(o.enabled, (std::vector<std::string>{"opencl", "cpu"}));
    EXPECT_EQ(o.provider_options["cpu"]["threads"], "1");
}
