// Plugin discovery and ABI negotiation. Loading order decides priority when
// two plugins claim one provider name: the first found wins.
#include <hetero/crash_report.hpp>
#include <hetero/log.hpp>
#include <hetero/registry.hpp>

#include "device_claims.hpp"
#include "plugin_probe.hpp"
#include "quarantine.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace hetero {

struct Provider::Library {
    boost::dll::shared_library lib;
};

namespace {

constexpr const char* kPluginPrefix = "libhetero-ep-";
constexpr const char* kPluginSuffix = ".so";

void host_log(void*, int level, const char* provider, const char* msg) {
    const LogLevel l = level <= HETERO_LOG_DEBUG ? LogLevel::debug
                       : level == HETERO_LOG_INFO ? LogLevel::info
                       : level == HETERO_LOG_WARN ? LogLevel::warn
                                                  : LogLevel::error;
    log(l, fmt::format("[{}] {}", provider ? provider : "?", msg ? msg : ""));
}

const hetero_host_api kHostApi = {.struct_size = sizeof(hetero_host_api), .abi_version = HETERO_ABI_VERSION, .host_ctx = nullptr, .log = &host_log};

bool is_plugin_name(const std::string& file) {
    const std::string pre = kPluginPrefix, suf = kPluginSuffix;
    return file.size() > pre.size() + suf.size() && file.compare(0, pre.size(), pre) == 0 &&
           file.compare(file.size() - suf.size(), suf.size(), suf) == 0;
}

std::string abi_str(uint32_t v) { return fmt::format("{}.{}", HETERO_ABI_MAJOR_OF(v), HETERO_ABI_MINOR_OF(v)); }

void append_unique(std::vector<std::string>& dirs, const std::string& d) {
    if (d.empty()) return;
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::path(d), ec);
    const std::string s = ec ? d : p.string();
    if (std::find(dirs.begin(), dirs.end(), s) == dirs.end()) dirs.push_back(s);
}

// The fields of hetero_ep_api a 1.0 plugin must provide.
constexpr size_t kMinApiSize = offsetof(hetero_ep_api, event_release) + sizeof(void*);
// hetero_device_props as ABI 1.0 defined it: the 1.1 fields start there.
constexpr size_t kDevicePropsSize_1_0 = offsetof(hetero_device_props, resource);

}  // namespace

Provider::~Provider() {
    if (ep_ && api_) api_->destroy(ep_);
    ep_ = nullptr;
    api_ = nullptr;
    lib_.reset();  // unloads the shared object last
}

uint32_t Provider::device_count() const {
    discover();
    return device_count_;
}

namespace {

// Provider names appear in configs, labels and JSON: [a-z0-9_]+, bounded.
bool valid_provider_name(const char* name) {
    if (!name || !*name) return false;
    size_t n = 0;
    for (const char* c = name; *c; ++c, ++n)
        if (n >= 64 || !((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return false;
    return true;
}

// A plugin's string as printable ASCII (others as '?'), at most 64 characters.
std::string printable(const char* s) {
    std::string out;
    for (; s && *s && out.size() < 64; ++s) out += (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    return out;
}

// Replaces bytes that are not valid UTF-8 with '?' (props strings go into JSON).
void make_utf8(char* s) {
    auto* p = reinterpret_cast<unsigned char*>(s);
    while (*p) {
        int len = *p < 0x80 ? 1 : (*p >> 5) == 0x6 ? 2 : (*p >> 4) == 0xe ? 3 : (*p >> 3) == 0x1e ? 4 : 0;
        for (int i = 1; i < len; ++i)
            if ((p[i] & 0xc0) != 0x80) len = 0;
        if (len == 0) {
            *p++ = '?';
            continue;
        }
        p += len;
    }
}

}  // namespace

void Provider::discover() const {
    std::call_once(discover_once_, [this] {
        const auto t0 = std::chrono::steady_clock::now();
        const PluginCall call("a device query");
        device_count_ = api_->device_count(ep_);
        discover_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        // last_error() is per thread: read it on the thread that saw the 0.
        if (device_count_ == 0) {
            const char* why = api_->last_error();
            no_devices_reason_ = why && *why ? why : "the provider gave no reason";
        }
        discovered_.store(true, std::memory_order_release);
        log(LogLevel::debug, fmt::format("provider {}: {} ({:.1f} ms)", name_, device_summary(), discover_seconds_ * 1e3));
    });
}

std::string Provider::device_summary() const {
    if (!discovered()) return "devices not discovered yet";
    if (device_count_ == 0) return "no devices: " + no_devices_reason_;
    return fmt::format("{} device{}", device_count_, device_count_ == 1 ? "" : "s");
}

hetero_device_props Provider::device_props(uint32_t device) const {
    hetero_device_props p{};
    p.struct_size = sizeof(p);
    p.abi_version = HETERO_ABI_VERSION;
    const PluginCall call("a device query");
    check(api_->device_props(ep_, device, &p), fmt::format("device {} properties", device));
    // struct_size must end up saying which fields are real (HETERO_HAS_FIELD):
    // a provider of an older minor fills less, and one of ABI 1.0 may leave
    // struct_size as we set it. What is not covered is zeroed.
    size_t filled = std::clamp<size_t>(p.struct_size, kDevicePropsSize_1_0, sizeof(p));
    if (HETERO_ABI_MINOR_OF(api_->abi_version) < 1) filled = kDevicePropsSize_1_0;
    std::memset(reinterpret_cast<char*>(&p) + filled, 0, sizeof(p) - filled);
    p.struct_size = uint32_t(filled);
    // A dtype bit past the plugin's minor version cannot mean that dtype (it
    // was added later): keep only the dtypes its version defines.
    const uint32_t minor = HETERO_ABI_MINOR_OF(api_->abi_version);
    const uint32_t known = minor == 0   ? HETERO_DTYPE_COUNT_1_0
                           : minor == 1 ? HETERO_DTYPE_COUNT_1_1
                           : minor == 2 ? HETERO_DTYPE_COUNT_1_2
                                        : HETERO_DTYPE_COUNT_1_3;
    p.dtype_mask &= HETERO_DTYPE_BIT(known) - 1;
    p.name[sizeof(p.name) - 1] = p.driver[sizeof(p.driver) - 1] = p.resource[sizeof(p.resource) - 1] = '\0';
    make_utf8(p.name);
    make_utf8(p.driver);
    make_utf8(p.resource);
    registry_detail::clamp_device_claims(name_, device, p);
    return p;
}

void Provider::check(hetero_status s, const std::string& what) const {
    if (s == HETERO_OK) return;
    const char* msg = api_->last_error ? api_->last_error() : "";
    throw ProviderError(name_, s, fmt::format("{}: {}: {}", name_, what, msg && *msg ? msg : "failed (no message)"));
}

std::vector<std::string> Registry::default_dirs() {
    std::vector<std::string> dirs;
    // Install layout: <prefix>/lib/libhetero.so and <prefix>/lib/hetero/plugins/.
    boost::system::error_code ec;
    const boost::dll::fs::path self = boost::dll::this_line_location(ec);
    // The build tree mirrors that layout (build/lib/hetero/plugins), so the same
    // rule finds an uninstalled build's plugins; an installed libhetero never
    // looks into the tree it was built in.
    if (!ec) append_unique(dirs, (fs::path(self.string()).parent_path() / HETERO_PLUGIN_SUBDIR_FROM_LIB).string());
    else append_unique(dirs, HETERO_BUILD_PLUGIN_DIR);
    if (const char* env = ::getauxval(AT_SECURE) ? nullptr : std::getenv("HETERO_PLUGIN_PATH")) {
        std::string s = env;
        size_t start = 0;
        while (start <= s.size()) {
            const size_t colon = s.find(':', start);
            append_unique(dirs, s.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
            if (colon == std::string::npos) break;
            start = colon + 1;
        }
    }
    return dirs;
}

namespace {

// Why a plugin file or directory must not be trusted, or "": the rule ld.so
// and sudo apply. Writable by others, or by a group that is not the user's
// own, lets someone else put code into every later run; so does an owner
// other than root or the user.
std::string untrusted(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return "";
    if (st.st_mode & S_IWOTH) return fmt::format("{} is writable by anyone (fix: chmod o-w {})", path, path);
    if ((st.st_mode & S_IWGRP) && st.st_gid != ::getegid() && st.st_gid != 0)
        return fmt::format("{} is writable by group {} (fix: chmod g-w {})", path, unsigned(st.st_gid), path);
    if (st.st_uid != 0 && st.st_uid != ::geteuid())
        return fmt::format("{} is owned by another user (uid {}; fix: chown to yourself or root)", path, unsigned(st.st_uid));
    return "";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Whether to search a plugin directory; where not, why (empty when the
// directory is simply absent). A directory the caller named (the config's
// plugin_dirs) is expected to hold plugins: one that cannot be searched is a
// warning, not a silent skip. The built-in directories may well be absent.
struct DirCheck {
    bool search = true;
    std::string refused;
};

DirCheck check_dir(const std::string& dir, bool named) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        const bool exists = fs::exists(dir, ec);
        if (named) log(LogLevel::warn, fmt::format("not searching plugin directory '{}': {}", dir, exists ? "not a directory" : "missing"));
        return {false, exists ? "not a directory" : ""};
    }
    if (std::string why = untrusted(dir); !why.empty()) {
        log(LogLevel::warn, fmt::format("not searching plugin directory {}", why));
        return {false, why};
    }
    return {};
}

// The files of `dir` named like plugins, sorted.
std::vector<fs::path> plugin_files(const std::string& dir) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (is_plugin_name(entry.path().filename().string())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

// NAME of libhetero-ep-NAME.so.
std::string provider_of_file(const fs::path& file) {
    const std::string fname = file.filename().string();
    return fname.substr(std::strlen(kPluginPrefix), fname.size() - std::strlen(kPluginPrefix) - std::strlen(kPluginSuffix));
}

bool on_list(const std::vector<std::string>& list, const std::string& name) { return std::find(list.begin(), list.end(), name) != list.end(); }

// A plugin that crashes, hangs or exits while loading is found out in a
// child process first (once per file version): why it is skipped, or "".
std::string probe_refusal(const std::string& path, const RegistryOptions& options, const std::string& provider) {
    static const std::map<std::string, std::string> kNoOptions;
    const auto oit = options.provider_options.find(provider);
    const registry_detail::ProbeVerdict v = registry_detail::probe_plugin(path, oit == options.provider_options.end() ? kNoOptions : oit->second);
    if (v.safe) return "";
    return fmt::format("{}; skipped until the file changes (HETERO_PLUGIN_PROBE=0 loads it anyway)", v.reason);
}

// Loads the shared object and asks its entry point for the provider table:
// why it cannot be used, or "" with `lib` loaded and `api` set. Records the
// ABI version the plugin reports.
std::string open_plugin(const std::string& path, boost::dll::shared_library& lib, const hetero_ep_api*& api, PluginRecord& rec) {
    try {
        lib.load(boost::dll::fs::path(path), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
        return fmt::format("cannot load shared object ({})", e.what());
    }
    if (!lib.has(HETERO_EP_ENTRY_SYMBOL)) return fmt::format("no entry symbol '{}' (not a hetero provider)", HETERO_EP_ENTRY_SYMBOL);
    auto init = lib.get<const hetero_ep_api*(const hetero_host_api*, uint32_t, const char**)>(HETERO_EP_ENTRY_SYMBOL);
    const char* reason = nullptr;
    api = init(&kHostApi, HETERO_ABI_VERSION, &reason);
    if (!api) return fmt::format("initialisation failed: {}", reason ? reason : "no reason given");
    rec.abi_version = api->abi_version;
    if (HETERO_ABI_MAJOR_OF(api->abi_version) != HETERO_ABI_VERSION_MAJOR)
        return fmt::format("built for ABI {}, this core speaks ABI {}", abi_str(api->abi_version), abi_str(HETERO_ABI_VERSION));
    if (api->struct_size < kMinApiSize || !api->name || !api->create || !api->destroy || !api->last_error) return "function table is incomplete";
    if (!valid_provider_name(api->name))
        return fmt::format("provider name '{}' is not [a-z0-9_]+ (at most 64 characters)", printable(api->name));
    return "";
}

// Creates the provider with its options from the config: why it failed, or "" with `ep` set.
std::string create_provider(const hetero_ep_api& api, const RegistryOptions& options, PluginRecord& rec, hetero_ep*& ep) {
    const auto t_create = std::chrono::steady_clock::now();
    std::vector<hetero_option> opts;
    auto oit = options.provider_options.find(rec.provider);
    if (oit != options.provider_options.end())
        for (const auto& [k, v] : oit->second) opts.push_back({k.c_str(), v.c_str()});
    const hetero_status st = api.create(opts.data(), opts.size(), &ep);
    rec.create_seconds = seconds_since(t_create);
    if (st == HETERO_OK && ep) return "";
    const char* why = api.last_error();
    return fmt::format("create failed: {}", why && *why ? why : "no reason given");
}

}  // namespace

Registry::Registry(const RegistryOptions& options) {
    if (options.use_default_dirs) dirs_ = default_dirs();
    // A setuid or otherwise secure-execution process takes no directions
    // from the environment or a user's config.
    const bool secure = ::getauxval(AT_SECURE) != 0;
    if (!secure)
        for (const auto& d : options.plugin_dirs) append_unique(dirs_, d);
    std::set<std::string> named;
    if (!secure) named.insert(options.plugin_dirs.begin(), options.plugin_dirs.end());
    std::set<std::string> seen_files;
    for (const auto& dir : dirs_) {
        const DirCheck check = check_dir(dir, named.count(dir) > 0);
        if (!check.refused.empty()) refused_dirs_[dir] = check.refused;
        if (!check.search) continue;
        for (const auto& file : plugin_files(dir)) {
            std::error_code ec;
            if (!seen_files.insert(fs::weakly_canonical(file, ec).string()).second) continue;
            PluginRecord rec;
            rec.path = file.string();
            auto refuse = [&](const std::string& why) {
                rec.status = why;
                log(LogLevel::warn, fmt::format("skipping plugin {}: {}", rec.path, why));
                records_.push_back(rec);
            };
            // With a list of providers, a file is opened only when its name
            // (libhetero-ep-NAME.so) is on it: nothing else runs any code.
            const std::string file_provider = provider_of_file(file);
            if (!options.enabled.empty() && !on_list(options.enabled, file_provider)) {
                rec.provider = file_provider;
                rec.status = "not enabled (not opened)";
                records_.push_back(rec);
                continue;
            }
            // A plugin that crashed the process before runs no code here.
            if (std::string crashed = registry_detail::crash_exclusion(rec.path, options.retry_crashed); !crashed.empty()) {
                rec.provider = file_provider;
                rec.status = "left out: " + crashed;
                rec.left_out = crashed;
                records_.push_back(rec);
                continue;
            }
            std::string why = untrusted(rec.path);
            why = why.empty() ? probe_refusal(rec.path, options, file_provider) : "refused: " + why;
            if (!why.empty()) {
                refuse(why);
                continue;
            }
            const auto t_open = std::chrono::steady_clock::now();
            std::unique_ptr<Provider> p(new Provider());
            p->lib_ = std::make_unique<Provider::Library>();
            const hetero_ep_api* api = nullptr;
            why = open_plugin(rec.path, p->lib_->lib, api, rec);
            if (why.empty()) {
                rec.provider = api->name;
                rec.version = api->version ? api->version : "";
                if (find(rec.provider)) why = fmt::format("provider '{}' already loaded from {}", rec.provider, find(rec.provider)->path());
            }
            if (!why.empty()) {
                refuse(why);
                continue;
            }
            if (!options.enabled.empty() && !on_list(options.enabled, rec.provider)) {
                rec.status = "not enabled";
                records_.push_back(rec);
                continue;
            }
            rec.open_seconds = seconds_since(t_open);
            hetero_ep* ep = nullptr;
            if (why = create_provider(*api, options, rec, ep); !why.empty()) {
                refuse(why);
                continue;
            }
            p->api_ = api;
            p->ep_ = ep;
            p->name_ = rec.provider;
            p->path_ = rec.path;
            rec.loaded = true;
            rec.status = "loaded";
            records_.push_back(rec);
            log(LogLevel::debug, fmt::format("loaded provider {} {} from {}", rec.provider, rec.version, rec.path));
            owned_.push_back(std::move(p));
        }
    }
    // Priority: the configured order, else discovery order.
    for (const auto& name : options.enabled) {
        if (Provider* p = find(name)) ordered_.push_back(p);
    }
    if (options.enabled.empty())
        for (auto& p : owned_) ordered_.push_back(p.get());
}

Registry::~Registry() {
    ordered_.clear();
    // Unload in reverse order of loading.
    while (!owned_.empty()) owned_.pop_back();
}

Provider* Registry::find(const std::string& name) const {
    for (const auto& p : owned_)
        if (p->name() == name) return p.get();
    return nullptr;
}

const PluginRecord* Registry::left_out(const std::string& name) const {
    for (const auto& r : records_)
        if (r.provider == name && !r.left_out.empty()) return &r;
    return nullptr;
}

std::string Registry::dir_status(const std::string& d) const {
    const auto r = refused_dirs_.find(d);
    if (r != refused_dirs_.end()) return "not searched: " + r->second;
    std::error_code ec;
    return fs::is_directory(d, ec) ? "" : "missing";
}

std::string Registry::describe_search() const {
    std::string s = "searched plugin directories:";
    for (const auto& d : dirs_) {
        std::error_code ec;
        const std::string st = dir_status(d);
        s += fmt::format("\n  {}{}", d, st.empty() ? "" : " (" + st + ")");
    }
    if (records_.empty()) s += "\nno file named libhetero-ep-*.so found";
    for (const auto& r : records_) {
        const Provider* p = r.loaded ? find(r.provider) : nullptr;
        s += fmt::format("\n  {}: {}", r.path, r.status);
        // Only what is known already: describing must not load drivers.
        if (p && p->discovered()) s += ", " + p->device_summary();
    }
    return s;
}

}  // namespace hetero
