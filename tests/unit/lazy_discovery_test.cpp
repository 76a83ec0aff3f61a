// Providers discover their devices on first use, not when the registry loads
// them: loading stays cheap, discovery runs once, and a provider whose
// discovery fails is reported with the reason and left out of planning.
#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>

#include "captured_log.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

const std::string kLazyPlugin = std::string(HETERO_LAZY_PLUGIN_DIR) + "/libhetero-ep-lazytest.so";

// The test plugin's counters. Holding the library open keeps one copy loaded
// across registries, so the tests compare counts before and after.
class LazyCounters {
public:
    LazyCounters() : handle_(dlopen(kLazyPlugin.c_str(), RTLD_NOW | RTLD_LOCAL)) {
        if (!handle_) return;
        creates_ = reinterpret_cast<int (*)()>(dlsym(handle_, "hetero_lazytest_creates"));
        discoveries_ = reinterpret_cast<int (*)()>(dlsym(handle_, "hetero_lazytest_discoveries"));
    }
    ~LazyCounters() {
        if (handle_) dlclose(handle_);
    }
    LazyCounters(const LazyCounters&) = delete;
    LazyCounters& operator=(const LazyCounters&) = delete;
    bool ok() const { return creates_ && discoveries_; }
    int creates() const { return creates_(); }
    int discoveries() const { return discoveries_(); }

private:
    void* handle_;
    int (*creates_)() = nullptr;
    int (*discoveries_)() = nullptr;
};

using hetero::test::CapturedLog;

hetero::RegistryOptions lazy_options(std::map<std::string, std::string> options = {}) {
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_LAZY_PLUGIN_DIR};
    if (!options.empty()) o.provider_options["lazytest"] = std::move(options);
    return o;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(LazyDiscovery, LoadingCreatesButDoesNotDiscover) {
    LazyCounters counters;
    ASSERT_TRUE(counters.ok()) << kLazyPlugin << ": " << dlerror();
    const int creates = counters.creates(), discoveries = counters.discoveries();
    hetero::Registry reg(lazy_options());
    hetero::Provider* p = reg.find("lazytest");
    ASSERT_NE(p, nullptr) << reg.describe_search();
    EXPECT_EQ(counters.creates(), creates + 1);
    EXPECT_EQ(counters.discoveries(), discoveries) << "create() or loading discovered devices";
    EXPECT_FALSE(p->discovered());
    EXPECT_EQ(p->discover_seconds(), 0.0);
    EXPECT_EQ(p->device_summary(), "devices not discovered yet");
    // Describing the search reports what is known and discovers nothing.
    EXPECT_TRUE(contains(reg.describe_search() + "\n", "libhetero-ep-lazytest.so: loaded\n")) << reg.describe_search();
    EXPECT_EQ(counters.discoveries(), discoveries);

    EXPECT_EQ(p->device_count(), 1u);
    EXPECT_TRUE(p->discovered());
    EXPECT_EQ(counters.discoveries(), discoveries + 1);
    EXPECT_EQ(p->device_count(), 1u);
    EXPECT_EQ(std::string(p->device_props(0).name), "lazy test device 0");
    EXPECT_EQ(counters.discoveries(), discoveries + 1) << "discovery ran again";
    EXPECT_TRUE(contains(reg.describe_search(), "libhetero-ep-lazytest.so: loaded, 1 device"));
}

TEST(LazyDiscovery, PluginStringsAreTerminatedAndValidUtf8) {
    hetero::Registry reg(lazy_options({{"bad_strings", "1"}}));
    hetero::Provider* p = reg.find("lazytest");
    ASSERT_NE(p, nullptr) << reg.describe_search();
    const hetero_device_props props = p->device_props(0);
    EXPECT_EQ(std::string(props.name), "bad ?? name ?");
    EXPECT_EQ(std::strlen(props.driver), sizeof(props.driver) - 1) << "the driver string is cut at its field";
}

TEST(LazyDiscovery, ConcurrentFirstCallsDiscoverOnce) {
    LazyCounters counters;
    ASSERT_TRUE(counters.ok()) << kLazyPlugin;
    // Discovery sleeps, so the threads all arrive while it runs.
    hetero::Registry reg(lazy_options({{"devices", "3"}, {"discover_ms", "50"}}));
    hetero::Provider* p = reg.find("lazytest");
    ASSERT_NE(p, nullptr) << reg.describe_search();
    const int before = counters.discoveries();

    constexpr int kThreads = 8;
    auto hammer = [&](auto&& count) {
        std::vector<uint32_t> seen(kThreads, 99);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { seen[size_t(t)] = count(); });
        for (auto& t : threads) t.join();
        return seen;
    };
    // Through the core, which keeps the answer...
    for (uint32_t n : hammer([&] { return p->device_count(); })) EXPECT_EQ(n, 3u);
    EXPECT_EQ(counters.discoveries(), before + 1);

    // ...and straight through the C ABI on a fresh instance, where the
    // provider itself must run discovery once.
    const hetero_ep_api& api = p->api();
    hetero_option delay{"discover_ms", "50"};
    hetero_ep* ep = nullptr;
    ASSERT_EQ(api.create(&delay, 1, &ep), HETERO_OK) << api.last_error();
    for (uint32_t n : hammer([&] { return api.device_count(ep); })) EXPECT_EQ(n, 1u);
    EXPECT_EQ(counters.discoveries(), before + 2);
    api.destroy(ep);
}

TEST(LazyDiscovery, FailedDiscoveryIsReportedAndLeftOutOfPlanning) {
    CapturedLog log;
    LazyCounters counters;
    ASSERT_TRUE(counters.ok()) << kLazyPlugin;
    hetero::RegistryOptions o = lazy_options({{"fail", "1"}});
    o.plugin_dirs.push_back(HETERO_BUILD_PLUGIN_DIR);
    o.enabled = {"lazytest", "cpu"};  // the failing provider comes first
    hetero::Registry reg(o);
    hetero::Provider* p = reg.find("lazytest");
    ASSERT_NE(p, nullptr) << "create must not fail for a provider whose driver is missing\n" << reg.describe_search();
    ASSERT_NE(reg.find("cpu"), nullptr) << reg.describe_search();
    const int before = counters.discoveries();

    EXPECT_EQ(p->device_count(), 0u);
    EXPECT_TRUE(contains(p->no_devices_reason(), "simulated driver failure")) << p->no_devices_reason();
    EXPECT_EQ(p->device_summary(), "no devices: " + p->no_devices_reason());
    const std::string search = reg.describe_search();
    EXPECT_TRUE(contains(search, "libhetero-ep-lazytest.so: loaded, no devices: simulated driver failure")) << search;
    // Every call naming a device fails with the same reason; discovery is not retried.
    try {
        (void)p->device_props(0);
        ADD_FAILURE() << "device_props(0) succeeded on a provider without devices";
    } catch (const hetero::Error& e) {
        EXPECT_TRUE(contains(e.what(), "simulated driver failure")) << e.what();
    }
    EXPECT_EQ(p->api().device_count(p->ep()), 0u);
    EXPECT_TRUE(contains(p->api().last_error(), "simulated driver failure")) << p->api().last_error();
    EXPECT_EQ(counters.discoveries(), before + 1);

    const std::vector<hetero::DeviceRef> devices = hetero::available_devices(reg.providers());
    ASSERT_FALSE(devices.empty());
    for (const auto& d : devices) EXPECT_EQ(d.provider->name(), "cpu") << d.label();
    EXPECT_TRUE(log.contains("not using provider lazytest", "simulated driver failure"));
    const hetero::Plan plan = hetero::plan_even_layers(4, devices);
    for (size_t d : plan.used_devices()) EXPECT_EQ(plan.devices[d].provider->name(), "cpu") << plan.describe();
}

TEST(LazyDiscovery, ZeroDevicesComeWithAReason) {
    hetero::Registry reg(lazy_options({{"devices", "0"}}));
    hetero::Provider* p = reg.find("lazytest");
    ASSERT_NE(p, nullptr) << reg.describe_search();
    EXPECT_EQ(p->device_count(), 0u);
    EXPECT_EQ(p->no_devices_reason(), "the provider found no device");
}

TEST(LazyDiscovery, BadOptionsStillFailCreate) {
    // Deferring discovery must not defer option checking.
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR};
    o.provider_options["opencl"] = {{"device_types", "fpga"}};
    o.provider_options["vulkan"] = {{"portable", "2"}};
    hetero::Registry reg(o);
    const std::pair<const char*, const char*> expected[] = {{"opencl", "device_types"}, {"vulkan", "portable"}};
    for (const auto& r : reg.records()) {
        for (const auto& [name, key] : expected) {
            if (r.provider != name) continue;
            EXPECT_FALSE(r.loaded) << r.path;
            EXPECT_TRUE(contains(r.status, key)) << r.status;
        }
    }
}

namespace {

// The shared objects mapped into this process.
std::string mapped_objects() {
    std::ifstream maps("/proc/self/maps");
    std::stringstream s;
    s << maps.rdbuf();
    return s.str();
}

// Failed expectations of a check running in a death-test child, which exits
// with them (gtest assertions do not reach the parent from there).
struct ChildChecks {
    std::string errors;
    void expect(bool ok, const std::string& what) {
        if (!ok) errors += what + "\n";
    }
    [[noreturn]] void exit() {
        std::fputs(errors.c_str(), stderr);
        std::_Exit(errors.empty() ? 0 : 1);
    }
};

hetero::RegistryOptions build_tree_only() {
    hetero::RegistryOptions o;
    o.use_default_dirs = false;
    o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR};
    return o;
}

// Runs in a fresh process (death-test child): nothing else has loaded a driver.
// Exits 0 when loading the build tree's plugins loaded no OpenCL or Vulkan
// driver and asking for devices did; otherwise prints what went wrong.
[[noreturn]] void check_plugins_load_no_driver() {
    ChildChecks checks;
    auto expect = [&](bool ok, const std::string& what) { checks.expect(ok, what); };
    {
        hetero::Registry reg(build_tree_only());
        const std::string before = mapped_objects();
        for (const char* driver : {"libpocl", "libvulkan_lvp", "libLLVM"})
            expect(!contains(before, driver), std::string("loading the plugins loaded ") + driver);
        for (const char* name : {"opencl", "vulkan"}) {
            const hetero::Provider* p = reg.find(name);
            if (!p) continue;
            expect(!p->discovered() && p->discover_seconds() == 0.0, std::string(name) + " discovered devices while loading");
            const uint32_t n = p->device_count();
            expect(p->discovered(), std::string(name) + " not marked discovered");
            expect(n > 0 || !p->no_devices_reason().empty(), std::string(name) + ": no devices and no reason");
        }
        // The check above can see a driver: after discovery PoCL is mapped.
        const hetero::Provider* cl = reg.find("opencl");
        if (cl && cl->device_count() > 0 && contains(cl->device_props(0).driver, "Portable Computing Language"))
            expect(contains(mapped_objects(), "libpocl"), "PoCL in use but libpocl not seen in /proc/self/maps");
    }
    checks.exit();
}

// Fresh process with the OpenCL and Vulkan loaders pointed at no driver.
[[noreturn]] void check_missing_drivers_are_reported() {
    setenv("OCL_ICD_VENDORS", "/nonexistent/hetero-test-icds", 1);
    setenv("OCL_ICD_FILENAMES", "", 1);
    setenv("VK_ICD_FILENAMES", "/nonexistent/hetero-test-icd.json", 1);
    setenv("VK_DRIVER_FILES", "/nonexistent/hetero-test-icd.json", 1);
    ChildChecks checks;
    auto expect = [&](bool ok, const std::string& what) { checks.expect(ok, what); };
    {
        hetero::Registry reg(build_tree_only());
        const std::pair<const char*, const char*> expected[] = {{"opencl", "no OpenCL platform"}, {"vulkan", "vkCreateInstance failed"}};
        for (const auto& [name, reason] : expected) {
            const hetero::Provider* p = reg.find(name);
            if (!p) continue;  // not built here
            expect(p->device_count() == 0, std::string(name) + " found a device without a driver");
            expect(contains(p->no_devices_reason(), reason), std::string(name) + " reason: '" + p->no_devices_reason() + "'");
            expect(contains(reg.describe_search(), std::string("no devices: ") + reason), reg.describe_search());
        }
        for (const auto& d : hetero::available_devices(reg.providers()))
            // npu_emu needs no driver: only the GPU providers must have dropped out.
            expect(d.provider->name() == "cpu" || d.provider->name() == "npu_emu", "planning would use " + d.label());
    }
    checks.exit();
}

}  // namespace

// Each in a process of its own (threadsafe style re-runs the binary for just
// this test), since other tests load the drivers into this one.
TEST(LazyDiscoveryDeathTest, BuildTreePluginsLoadNoDriverUntilAsked) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(check_plugins_load_no_driver(), testing::ExitedWithCode(0), "");
}

TEST(LazyDiscoveryDeathTest, MissingDriversGiveZeroDevicesWithTheReason) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(check_missing_drivers_are_reported(), testing::ExitedWithCode(0), "");
}
