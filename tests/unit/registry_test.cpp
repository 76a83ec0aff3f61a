#include <hetero/log.hpp>
#include <hetero/registry.hpp>

#include "captured_log.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <mutex>

namespace {

using hetero::test::CapturedLog;

hetero::RegistryOptions bad_and_build_dirs() {
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_TEST_PLUGIN_DIR, HETERO_BUILD_PLUGIN_DIR};
    return o;
}

const hetero::PluginRecord* record_for(const hetero::Registry& r, const std::string& file) {
    for (const auto& rec : r.records())
        if (rec.path.find(file) != std::string::npos) return &rec;
    return nullptr;
}

}  // namespace

TEST(Registry, BadPluginsAreRefusedWithReasonsAndOthersLoad) {
    CapturedLog log;
    hetero::Registry reg(bad_and_build_dirs());
    struct Expect { const char* file; const char* reason; };
    const Expect expected[] = {
        {"libhetero-ep-nosymbol.so", "no entry symbol 'hetero_ep_init'"},
        {"libhetero-ep-futureabi.so", "built for ABI 2.0"},
        {"libhetero-ep-initfails.so", "this device is on fire"},
        {"libhetero-ep-createfails.so", "creation refused on purpose"},
        {"libhetero-ep-badname.so", "provider name 'Bad-Name!' is not [a-z0-9_]+"},
        {"libhetero-ep-nullerror.so", "create failed: no reason given"},
        {"libhetero-ep-notelf.so", "cannot load shared object"},
        {"libhetero-ep-empty.so", "cannot load shared object"},
    };
    for (const auto& e : expected) {
        const auto* rec = record_for(reg, e.file);
        ASSERT_NE(rec, nullptr) << e.file << " was not considered";
        EXPECT_FALSE(rec->loaded) << e.file;
        EXPECT_NE(rec->status.find(e.reason), std::string::npos) << e.file << ": " << rec->status;
        EXPECT_TRUE(log.contains(e.file, e.reason)) << "no log line for " << e.file;
    }
    ASSERT_NE(reg.find("cpu"), nullptr) << reg.describe_search();
    EXPECT_GE(reg.find("cpu")->device_count(), 1u);
}

TEST(Registry, NoProviderExplainsWhereItLooked) {
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_TEST_PLUGIN_DIR, "/nonexistent/hetero-plugins"};
    hetero::Registry reg(o);
    EXPECT_TRUE(reg.providers().empty());
    const std::string d = reg.describe_search();
    EXPECT_NE(d.find("/nonexistent/hetero-plugins (missing)"), std::string::npos) << d;
    EXPECT_NE(d.find("libhetero-ep-futureabi.so: built for ABI 2.0"), std::string::npos) << d;
}

TEST(Registry, NamedPluginDirThatCannotBeSearchedIsAWarning) {
    // A plugin_dirs entry that is missing, or is a regular file, is reported
    // once with the reason; the built-in directories may be absent quietly.
    const auto file = std::filesystem::temp_directory_path() / ("hetero-notadir-" + std::to_string(::getpid()));
    { std::ofstream(file) << "x"; }
    CapturedLog log;
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {"/nonexistent/hetero-plugins", file.string()};
    hetero::Registry reg(o);
    std::filesystem::remove(file);
    EXPECT_TRUE(log.contains("/nonexistent/hetero-plugins", "missing"));
    EXPECT_TRUE(log.contains(file.string(), "not a directory"));
    EXPECT_EQ(reg.dir_status(file.string()), "not searched: not a directory");
    EXPECT_EQ(reg.dir_status("/nonexistent/hetero-plugins"), "missing");
    EXPECT_EQ(log.lines.size(), 2u);
}

TEST(Registry, FirstFoundWinsForDuplicateNames) {
    CapturedLog log;
    // A copy of the CPU plugin under another file name claims the same provider name.
    const auto dir = std::filesystem::temp_directory_path() / ("hetero-dup-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(std::string(HETERO_BUILD_PLUGIN_DIR) + "/libhetero-ep-cpu.so", dir / "libhetero-ep-cpucopy.so",
                               std::filesystem::copy_options::overwrite_existing);
    {
        hetero::RegistryOptions o;
        o.use_default_dirs = false;
        o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR, HETERO_BUILD_PLUGIN_DIR, dir.string()};  // repeated dir is searched once
        hetero::Registry reg(o);
        size_t considered = 0;
        for (const auto& r : reg.records()) considered += r.path.find("libhetero-ep-cpu.so") != std::string::npos;
        EXPECT_EQ(considered, 1u);
        ASSERT_NE(reg.find("cpu"), nullptr);
        EXPECT_NE(reg.find("cpu")->path().find(HETERO_BUILD_PLUGIN_DIR), std::string::npos);
        const auto* copy = record_for(reg, "libhetero-ep-cpucopy.so");
        ASSERT_NE(copy, nullptr);
        EXPECT_FALSE(copy->loaded);
        EXPECT_NE(copy->status.find("provider 'cpu' already loaded"), std::string::npos) << copy->status;
        EXPECT_TRUE(log.contains("libhetero-ep-cpucopy.so", "already loaded"));
    }
    std::filesystem::remove_all(dir);
}

TEST(Registry, EnabledListOrdersAndFiltersProviders) {
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR};
    o.enabled = {"cpu"};
    hetero::Registry reg(o);
    ASSERT_EQ(reg.providers().size(), 1u);
    EXPECT_EQ(reg.providers()[0]->name(), "cpu");
    for (const auto& r : reg.records()) {
        if (r.provider != "cpu" && !r.provider.empty()) {
            EXPECT_EQ(r.status, "not enabled (not opened)") << "a file not named by the list runs no code";
            EXPECT_FALSE(r.loaded);
        }
    }
}

TEST(Registry, ProviderOptionsReachThePluginAndBadOnesAreNamed) {
    CapturedLog log;
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR};
    o.enabled = {"cpu"};
    o.provider_options["cpu"] = {{"no_such_option", "1"}};
    hetero::Registry reg(o);
    EXPECT_EQ(reg.find("cpu"), nullptr);
    const auto* rec = record_for(reg, "libhetero-ep-cpu.so");
    ASSERT_NE(rec, nullptr);
    EXPECT_NE(rec->status.find("no_such_option"), std::string::npos) << rec->status;
}

TEST(Registry, LoadUnloadReloadIsClean) {
    // Run under ASan in CI: a leaked handle or allocation fails the job.
    for (int i = 0; i < 3; ++i) {
        hetero::Registry reg(bad_and_build_dirs());
        ASSERT_NE(reg.find("cpu"), nullptr);
    }
}

TEST(Registry, DefaultDirsIncludeBuildTreeAndEnvironment) {
    setenv("HETERO_PLUGIN_PATH", "/tmp/hetero-a:/tmp/hetero-b", 1);
    const auto dirs = hetero::Registry::default_dirs();
    unsetenv("HETERO_PLUGIN_PATH");
    auto has = [&](const std::string& d) { return std::find(dirs.begin(), dirs.end(), d) != dirs.end(); };
    EXPECT_TRUE(has("/tmp/hetero-a"));
    EXPECT_TRUE(has("/tmp/hetero-b"));
    EXPECT_TRUE(has(HETERO_BUILD_PLUGIN_DIR));
}
