// Discovers provider plugins (libhetero-ep-*.so), negotiates the ABI and
// creates one instance per provider. A plugin that cannot load is skipped with
// a record saying why; the others keep working.
#pragma once

#include <hetero/ep_api.h>

#include <cstddef>
#include <hetero/error.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hetero {

// One plugin file seen during discovery.
struct PluginRecord {
    std::string path;
    std::string provider;   // provider name, when the plugin answered
    std::string version;    // provider version, when it answered
    uint32_t abi_version = 0;
    bool loaded = false;
    std::string status;     // "loaded", or why it was refused / skipped
    // Why it was left out after crashing in an earlier process (quarantine,
    // crash_report.hpp), or "". Its provider is then not required to load.
    std::string left_out;
    double open_seconds = 0;    // dlopen + entry point + ABI check
    double create_seconds = 0;  // the provider's create(); devices may be discovered later (Provider::discover_seconds)
};

// A loaded plugin and its provider instance. Not copyable; owned by Registry.
class Provider {
public:
    ~Provider();
    Provider(const Provider&) = delete;
    Provider& operator=(const Provider&) = delete;

    const std::string& name() const { return name_; }
    const std::string& path() const { return path_; }
    const hetero_ep_api& api() const { return *api_; }
    // The table's event_seconds where the plugin's table has one (ABI 1.1), else null.
    decltype(hetero_ep_api::event_seconds) event_seconds() const {
        return api_->struct_size >= offsetof(hetero_ep_api, event_seconds) + sizeof(void*) ? api_->event_seconds : nullptr;
    }
    hetero_ep* ep() const { return ep_; }

    // The first call lets the provider discover its devices (it may load its
    // driver then: tens of ms for a GPU stack); the count is kept. Thread-safe:
    // concurrent first callers wait for the one discovery.
    uint32_t device_count() const;
    // Whether device_count() has run; how long its discovery took (0 before);
    // why it found no device ("" when it found some or has not run).
    bool discovered() const { return discovered_.load(std::memory_order_acquire); }
    double discover_seconds() const { return discovered() ? discover_seconds_ : 0.0; }
    std::string no_devices_reason() const { return discovered() ? no_devices_reason_ : std::string(); }
    // "2 devices", "no devices: <reason>", or "devices not discovered yet"; discovers nothing.
    std::string device_summary() const;
    // The device's properties. struct_size says which fields the provider
    // filled (HETERO_HAS_FIELD): a provider of ABI 1.0 leaves those of 1.1
    // zero (resource "", no launch or compile hints).
    hetero_device_props device_props(uint32_t device) const;
    // Throws hetero::ProviderError "<provider>: <what>: <provider's message>" unless s is HETERO_OK.
    void check(hetero_status s, const std::string& what) const;

private:
    friend class Registry;
    Provider() = default;
    void discover() const;
    struct Library;
    std::unique_ptr<Library> lib_;
    const hetero_ep_api* api_ = nullptr;
    hetero_ep* ep_ = nullptr;
    std::string name_, path_;
    // Set once by discover(), then read-only.
    mutable std::once_flag discover_once_;
    mutable std::atomic<bool> discovered_{false};
    mutable uint32_t device_count_ = 0;
    mutable double discover_seconds_ = 0;
    mutable std::string no_devices_reason_;
};

struct RegistryOptions {
    std::vector<std::string> plugin_dirs;  // searched after the built-in dirs
    bool use_default_dirs = true;          // install dir, build-tree dir, HETERO_PLUGIN_PATH
    std::vector<std::string> enabled;      // provider names in priority order; empty = all found
    std::map<std::string, std::map<std::string, std::string>> provider_options;
    // Load plugins quarantined after a crash anyway (their records are removed).
    bool retry_crashed = false;
};

class Registry {
public:
    explicit Registry(const RegistryOptions& options = {});
    ~Registry();
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    // Every plugin file considered, in discovery order.
    const std::vector<PluginRecord>& records() const { return records_; }
    // Directories searched, in order.
    const std::vector<std::string>& searched_dirs() const { return dirs_; }
    // Why a directory was not searched ("" when it was): missing, not a
    // directory, or writable by others.
    std::string dir_status(const std::string& dir) const;
    // Loaded providers in priority order, whether or not they have devices
    // (asking would make each discover them; see available_devices in plan.hpp).
    const std::vector<Provider*>& providers() const { return ordered_; }
    Provider* find(const std::string& name) const;
    // The record of the plugin file for provider `name` that was left out
    // after a crash, or nullptr.
    const PluginRecord* left_out(const std::string& name) const;
    // Human-readable account of where it looked, why each file was refused,
    // and for loaded providers whose devices were asked for, what was found.
    std::string describe_search() const;

    // The default plugin directories (install dir relative to libhetero, build tree, HETERO_PLUGIN_PATH).
    static std::vector<std::string> default_dirs();

private:
    std::vector<PluginRecord> records_;
    std::vector<std::string> dirs_;
    std::map<std::string, std::string> refused_dirs_;  // directory -> why it was not searched
    std::vector<std::unique_ptr<Provider>> owned_;
    std::vector<Provider*> ordered_;
};

}  // namespace hetero
