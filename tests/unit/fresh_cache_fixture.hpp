// A suite on the cpu provider of the build tree, each test with
// XDG_CACHE_HOME on a fresh directory of its own (the caller's restored
// after): what a test stores in the cache is then all it finds there.
#pragma once

#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <unistd.h>

namespace hetero::test {

class CpuWithFreshCache : public ::testing::Test {
protected:
    // `tag` names the cache directory, one per process and suite.
    explicit CpuWithFreshCache(std::string tag) : tag_(std::move(tag)) {}

    static void SetUpTestSuite() {
        RegistryOptions o;
        o.use_default_dirs = false;
        o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR};
        o.enabled = {"cpu"};
        registry_ = new Registry(o);
    }
    static void TearDownTestSuite() {
        delete registry_;
        registry_ = nullptr;
    }
    void SetUp() override {
        if (const char* old = std::getenv("XDG_CACHE_HOME")) old_cache_ = old;
        dir_ = std::filesystem::temp_directory_path() / ("hetero-" + tag_ + "-test-" + std::to_string(::getpid()));
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        ::setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
        const auto devices = available_devices(registry_->providers());
        ASSERT_FALSE(devices.empty()) << registry_->describe_search();
        cpu_ = devices[0];
    }
    void TearDown() override {
        if (old_cache_) ::setenv("XDG_CACHE_HOME", old_cache_->c_str(), 1);
        else ::unsetenv("XDG_CACHE_HOME");
        std::filesystem::remove_all(dir_);
    }

    inline static Registry* registry_ = nullptr;
    std::string tag_;
    std::optional<std::string> old_cache_;
    std::filesystem::path dir_;
    DeviceRef cpu_;
};

}  // namespace hetero::test
