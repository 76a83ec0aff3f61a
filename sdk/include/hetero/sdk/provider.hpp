// C++ helpers for writing a provider against the C ABI.
//
// A provider derives from hetero::sdk::Provider, throws hetero::sdk::Error for
// failures, and exports itself with HETERO_SDK_EXPORT_PROVIDER. The helpers
// generate the C function table, turn exceptions into status codes plus a
// thread-local message, validate graphs and bindings before the provider sees
// them, and check buffer ranges. Build plugins with -fvisibility=hidden (the
// hetero_add_provider CMake function does) so only the entry symbol is public.
#pragma once

#include <hetero/ep_api.h>
#include <hetero/sdk/graph_check.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetero::sdk {

class Error : public std::runtime_error {
public:
    Error(hetero_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
    hetero_status status() const { return status_; }

private:
    hetero_status status_;
};

[[noreturn]] inline void fail(hetero_status status, const std::string& message) { throw Error(status, message); }

using Options = std::map<std::string, std::string>;

// Parses a positive integer option; names the key in the error.
inline int64_t option_int(const Options& o, const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
    auto it = o.find(key);
    if (it == o.end()) return fallback;
    try {
        size_t used = 0;
        const long long v = std::stoll(it->second, &used);
        if (used == it->second.size() && v >= lo && v <= hi) return v;
    } catch (const std::exception&) {
    }
    fail(HETERO_ERR_INVALID_ARGUMENT, "option '" + key + "' must be an integer in [" + std::to_string(lo) + ", " +
                                          std::to_string(hi) + "], got '" + it->second + "'");
}

// Parses a number option in [lo, hi]; names the key in the error.
inline double option_double(const Options& o, const std::string& key, double fallback, double lo, double hi) {
    auto it = o.find(key);
    if (it == o.end()) return fallback;
    try {
        size_t used = 0;
        const double v = std::stod(it->second, &used);
        if (used == it->second.size() && v >= lo && v <= hi) return v;
    } catch (const std::exception&) {
    }
    fail(HETERO_ERR_INVALID_ARGUMENT, "option '" + key + "' must be a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                                          it->second + "'");
}

// Whether environment variable `name` is set to exactly `value` (the
// providers' diagnostic switches: "1" turns a profiler on, "0" a path off).
inline bool env_equals(const char* name, const char* value) {
    const char* e = std::getenv(name);
    return e && std::strcmp(e, value) == 0;
}

// Rejects keys a provider does not know.
inline void require_known_options(const Options& o, const std::vector<std::string>& known, const char* provider) {
    for (const auto& [k, v] : o) {
        bool ok = false;
        for (const auto& n : known) ok = ok || n == k;
        if (!ok) {
            std::string list;
            for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
            fail(HETERO_ERR_INVALID_ARGUMENT, std::string("unknown option '") + k + "' for provider " + provider +
                                                  " (known: " + (list.empty() ? "none" : list) + ")");
        }
    }
}

// An owned copy of a hetero_graph (names included).
struct Graph {
    std::vector<hetero_tensor_desc> tensors;
    std::vector<hetero_node> nodes;
    std::vector<std::string> names;

    Graph() = default;
    explicit Graph(const hetero_graph& g) : tensors(g.tensors, g.tensors + g.n_tensors), nodes(g.nodes, g.nodes + g.n_nodes) {
        names.reserve(tensors.size());
        for (auto& t : tensors) {
            names.emplace_back(t.name ? t.name : "");
        }
        for (size_t i = 0; i < tensors.size(); ++i) tensors[i].name = names[i].c_str();
    }
    Graph(const Graph& o) : Graph(o.view()) {}
    Graph& operator=(const Graph&) = delete;
    hetero_graph view() const {
        return hetero_graph{sizeof(hetero_graph), HETERO_ABI_VERSION, uint32_t(tensors.size()), uint32_t(nodes.size()),
                            tensors.data(), nodes.data()};
    }
};

class Buffer {
public:
    Buffer(uint32_t device, uint64_t size) : device_(device), size_(size) {}
    virtual ~Buffer() = default;
    uint32_t device() const { return device_; }
    uint64_t size() const { return size_; }

private:
    uint32_t device_;
    uint64_t size_;
};

// Memory a tensor is bound to; buffer is null for internal tensors.
struct BoundTensor {
    Buffer* buffer = nullptr;
    uint64_t offset = 0;
};

class Executable {
public:
    Executable(uint32_t device, Graph graph) : device_(device), graph_(std::move(graph)) {}
    virtual ~Executable() = default;
    uint32_t device() const { return device_; }
    const Graph& graph() const { return graph_; }

private:
    uint32_t device_;
    Graph graph_;
};

class Event {
public:
    virtual ~Event() = default;
    // Blocks until done; throws Error when the execution failed.
    virtual void wait() = 0;
    // Device seconds of the completed execution (event_seconds, ABI 1.1);
    // negative when unknown. `simulated`: the figure comes from a model.
    virtual double device_seconds(bool& simulated) const {
        simulated = false;
        return -1.0;
    }
};

// Runs a provider's device discovery once, by the first call that needs
// devices, so that loading the plugin and create() stay cheap (enumerating
// OpenCL platforms or Vulkan physical devices loads the drivers: tens of ms).
// Thread-safe: concurrent first callers wait for the one discovery. A failure
// is kept and thrown again to every caller, so device_count() answers 0 with
// the same reason each time instead of retrying a broken driver.
class DiscoverOnce {
public:
    template <class F>
    void run(F&& discover) {
        std::call_once(once_, [&] {
            // Nothing escapes call_once: a throwing callable would leave the
            // flag unset and the next caller would discover again.
            try {
                discover();
            } catch (const Error& e) {
                failure_.emplace(e);
            } catch (const std::exception& e) {
                failure_.emplace(HETERO_ERR_INTERNAL, e.what());
            } catch (...) {
                failure_.emplace(HETERO_ERR_INTERNAL, "device discovery failed (unknown exception)");
            }
        });
        if (failure_) throw *failure_;
    }

private:
    std::once_flag once_;
    std::optional<Error> failure_;
};

// Fault injection for tests of what survives a failing device:
// HETERO_FAULT_INJECT=<provider>:<N>[,<provider>:<N>...] makes the Nth execute
// of that provider (1-based, counted over the provider instance's life) and
// every later execute and event_wait fail with HETERO_ERR_DEVICE_LOST and the
// message "injected fault (HETERO_FAULT_INJECT)". Read once, when the provider
// instance is created; unset, it costs one branch per execute.
class FaultInjection {
public:
    // The N for `provider` in HETERO_FAULT_INJECT; 0 = none.
    static int64_t from_env(const char* provider) {
        const char* e = std::getenv("HETERO_FAULT_INJECT");
        if (!e || !provider) return 0;
        const std::string spec = e, name = provider;
        size_t start = 0;
        while (start < spec.size()) {
            size_t comma = spec.find(',', start);
            if (comma == std::string::npos) comma = spec.size();
            const std::string item = spec.substr(start, comma - start);
            const size_t colon = item.rfind(':');
            if (colon != std::string::npos && item.compare(0, colon, name) == 0 && colon == name.size()) {
                const long long n = std::atoll(item.c_str() + colon + 1);
                if (n > 0) return n;
            }
            start = comma + 1;
        }
        return 0;
    }
    void arm(int64_t at) { at_ = at; }
    void on_execute() {
        if (at_ == 0) return;
        if (executes_.fetch_add(1, std::memory_order_relaxed) + 1 >= at_) tripped_.store(true, std::memory_order_relaxed);
        if (tripped_.load(std::memory_order_relaxed)) fail(HETERO_ERR_DEVICE_LOST, "injected fault (HETERO_FAULT_INJECT)");
    }
    void on_wait() const {
        if (at_ != 0 && tripped_.load(std::memory_order_relaxed)) fail(HETERO_ERR_DEVICE_LOST, "injected fault (HETERO_FAULT_INJECT)");
    }

private:
    int64_t at_ = 0;
    std::atomic<int64_t> executes_{0};
    std::atomic<bool> tripped_{false};
};

class Provider {
public:
    virtual ~Provider() = default;
    // May discover the devices on its first call (see DiscoverOnce); throw
    // Error with the reason when there is none, and device_count answers 0.
    virtual uint32_t device_count() = 0;
    // Fill a zero-initialised, full-size props (struct_size/abi_version are set by
    // the helper, which hands the caller only as many bytes as its struct has).
    // Since 1.1: resource, launch_seconds_hint, compile_seconds_hint too.
    virtual void device_props(uint32_t device, hetero_device_props& props) = 0;
    // Throw Error(HETERO_ERR_UNSUPPORTED, why) when the node cannot run; the node is already well formed.
    virtual void check_supported(uint32_t device, const hetero_node& node, const hetero_tensor_desc* tensors,
                                 uint32_t n_tensors, double* est_seconds) = 0;
    virtual std::unique_ptr<Buffer> alloc(uint32_t device, uint64_t size) = 0;
    virtual std::unique_ptr<Buffer> import_host(uint32_t, void*, uint64_t) {
        fail(HETERO_ERR_UNSUPPORTED, "this provider cannot import host memory");
    }
    virtual void* host_ptr(Buffer&) { return nullptr; }
    // Ranges are already checked against the buffer sizes.
    virtual void write(Buffer& dst, uint64_t offset, const void* src, uint64_t size) = 0;
    virtual void read(Buffer& src, uint64_t offset, void* dst, uint64_t size) = 0;
    virtual void copy(Buffer& src, uint64_t src_offset, Buffer& dst, uint64_t dst_offset, uint64_t size) = 0;
    // `graph` is valid (check_graph passed); `constants` has one entry per tensor, set for constants.
    virtual std::unique_ptr<Executable> compile(uint32_t device, Graph graph, const std::vector<BoundTensor>& constants) = 0;
    // `bound` has one entry per tensor, set for every bound tensor, ranges checked.
    // Return nullptr when the work finished synchronously (want_event may be false).
    virtual std::unique_ptr<Event> execute(Executable& exe, const std::vector<BoundTensor>& bound, bool want_event) = 0;

    // HETERO_FAULT_INJECT's state for this instance (armed by the helpers).
    FaultInjection& fault_injection() { return fault_injection_; }

private:
    FaultInjection fault_injection_;
};

namespace detail {

inline std::string& last_error() {
    static thread_local std::string message;
    return message;
}

inline const hetero_host_api*& host() {
    static const hetero_host_api* h = nullptr;
    return h;
}

template <class F>
hetero_status guarded(F&& f) {
    try {
        f();
        return HETERO_OK;
    } catch (const Error& e) {
        last_error() = e.what();
        return e.status();
    } catch (const std::bad_alloc&) {
        last_error() = "out of host memory";
        return HETERO_ERR_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        last_error() = e.what();
        return HETERO_ERR_INTERNAL;
    } catch (...) {
        last_error() = "unknown exception";
        return HETERO_ERR_INTERNAL;
    }
}

inline Provider& P(hetero_ep* ep) { return *reinterpret_cast<Provider*>(ep); }
inline Buffer* B(hetero_buffer* b) { return reinterpret_cast<Buffer*>(b); }

inline void check_device(hetero_ep* ep, uint32_t device) {
    const uint32_t n = P(ep).device_count();  // discovers on first use; throws the reason when there is no device
    if (device >= n)
        fail(HETERO_ERR_INVALID_ARGUMENT, "device index " + std::to_string(device) + " out of range (provider has " +
                                              std::to_string(n) + ")");
}

inline void check_range(const Buffer* b, uint64_t offset, uint64_t size, const char* what) {
    if (!b) fail(HETERO_ERR_INVALID_ARGUMENT, std::string(what) + ": null buffer");
    if (offset > b->size() || size > b->size() - offset)
        fail(HETERO_ERR_INVALID_ARGUMENT, std::string(what) + ": range [" + std::to_string(offset) + ", +" +
                                              std::to_string(size) + ") outside buffer of " + std::to_string(b->size()) + " bytes");
}

// Resolves bindings for tensors of `kind` into a per-tensor table, checking
// that each such tensor is bound exactly once, in range, on the right device.
inline std::vector<BoundTensor> resolve(const Graph& g, uint32_t device, uint32_t kind, const hetero_binding* bindings,
                                        size_t n) {
    std::vector<BoundTensor> table(g.tensors.size());
    if (n && !bindings) fail(HETERO_ERR_INVALID_ARGUMENT, "bindings array is null");
    for (size_t i = 0; i < n; ++i) {
        const hetero_binding& b = bindings[i];
        if (b.tensor < 0 || size_t(b.tensor) >= g.tensors.size())
            fail(HETERO_ERR_INVALID_ARGUMENT, "binding " + std::to_string(i) + " names tensor " + std::to_string(b.tensor) + " outside the graph");
        const hetero_tensor_desc& t = g.tensors[size_t(b.tensor)];
        const std::string tname = "tensor " + std::to_string(b.tensor) + (t.name && *t.name ? " (" + std::string(t.name) + ")" : "");
        if (t.kind != kind) fail(HETERO_ERR_INVALID_ARGUMENT, tname + " is bound here but is not of this binding kind");
        if (table[size_t(b.tensor)].buffer) fail(HETERO_ERR_INVALID_ARGUMENT, tname + " is bound twice");
        Buffer* buf = B(b.buffer);
        check_range(buf, b.offset, tensor_bytes(t), tname.c_str());
        if (buf->device() != device) fail(HETERO_ERR_INVALID_ARGUMENT, tname + " is bound to a buffer of another device");
        table[size_t(b.tensor)] = BoundTensor{buf, b.offset};
    }
    for (size_t i = 0; i < g.tensors.size(); ++i)
        if (g.tensors[i].kind == kind && !table[i].buffer)
            fail(HETERO_ERR_INVALID_ARGUMENT, "tensor " + std::to_string(i) + (g.tensors[i].name && *g.tensors[i].name ? " (" + std::string(g.tensors[i].name) + ")" : "") + " is not bound");
    return table;
}

// Completed-event stand-in for synchronous executions.
class DoneEvent final : public Event {
public:
    void wait() override {}
};

template <class Impl>
struct Table {
    static const char* last_error_fn() { return last_error().c_str(); }

    static hetero_status create(const hetero_option* options, size_t n, hetero_ep** out) {
        return guarded([&] {
            if (!out) fail(HETERO_ERR_INVALID_ARGUMENT, "out is null");
            Options o;
            for (size_t i = 0; i < n; ++i) {
                if (!options[i].key || !options[i].value) fail(HETERO_ERR_INVALID_ARGUMENT, "option with null key or value");
                o[options[i].key] = options[i].value;
            }
            Provider* p = new Impl(o);
            // The table exists (create came from it) and holds the provider's name.
            p->fault_injection().arm(FaultInjection::from_env(api(nullptr, nullptr)->name));
            *out = reinterpret_cast<hetero_ep*>(p);
        });
    }
    static void destroy(hetero_ep* ep) { delete &P(ep); }
    static uint32_t device_count(hetero_ep* ep) {
        uint32_t n = 0;
        // Zero devices always comes with a reason in last_error().
        if (guarded([&] { n = P(ep).device_count(); }) == HETERO_OK && n == 0) last_error() = "the provider found no device";
        return n;
    }
    static hetero_status device_props(hetero_ep* ep, uint32_t device, hetero_device_props* props) {
        return guarded([&] {
            check_device(ep, device);
            if (!props || props->struct_size < offsetof(hetero_device_props, name)) fail(HETERO_ERR_INVALID_ARGUMENT, "props struct too small");
            hetero_device_props full{};
            full.struct_size = sizeof(full);
            full.abi_version = HETERO_ABI_VERSION;
            P(ep).device_props(device, full);
            // Strings stay terminated whatever the provider wrote.
            full.name[sizeof full.name - 1] = full.driver[sizeof full.driver - 1] = full.resource[sizeof full.resource - 1] = '\0';
            // Only the bytes the caller's struct has: a caller of an older
            // minor gets its own layout, and struct_size says what was filled.
            const uint32_t want = props->struct_size;
            std::memcpy(props, &full, want < sizeof(full) ? want : sizeof(full));
            props->struct_size = want < sizeof(full) ? want : uint32_t(sizeof(full));
        });
    }
    static hetero_status op_supported(hetero_ep* ep, uint32_t device, const hetero_node* node,
                                      const hetero_tensor_desc* tensors, uint32_t n_tensors, double* est) {
        return guarded([&] {
            if (est) *est = -1.0;
            check_device(ep, device);
            if (!node || (!tensors && n_tensors)) fail(HETERO_ERR_INVALID_ARGUMENT, "null node or tensors");
            std::string e = check_node(*node, tensors, n_tensors);
            if (e.empty()) {
                for (uint32_t i = 0; i < node->n_inputs && e.empty(); ++i) e = check_tensor(tensors[node->inputs[i]]);
                if (e.empty()) e = check_tensor(tensors[node->output]);
            }
            if (!e.empty()) fail(HETERO_ERR_INVALID_ARGUMENT, e);
            // Dtypes added after ABI 1.0 reach a device only when it advertises them.
            for (uint32_t i = 0; i <= node->n_inputs; ++i) {
                const uint32_t dt = tensors[i < node->n_inputs ? node->inputs[i] : node->output].dtype;
                if (dt < HETERO_DTYPE_COUNT_1_0) continue;
                hetero_device_props dp{};
                dp.struct_size = sizeof(dp);
                dp.abi_version = HETERO_ABI_VERSION;
                P(ep).device_props(device, dp);
                if (!(dp.dtype_mask & HETERO_DTYPE_BIT(dt)))
                    fail(HETERO_ERR_UNSUPPORTED, std::string(op_name(node->op)) + ": dtype " + dtype_name(dt) + " is not among this device's dtypes");
            }
            P(ep).check_supported(device, *node, tensors, n_tensors, est);
        });
    }
    static hetero_status buffer_alloc(hetero_ep* ep, uint32_t device, uint64_t size, hetero_buffer** out) {
        return guarded([&] {
            check_device(ep, device);
            if (!out) fail(HETERO_ERR_INVALID_ARGUMENT, "out is null");
            if (size == 0) fail(HETERO_ERR_INVALID_ARGUMENT, "zero-sized buffer");
            *out = reinterpret_cast<hetero_buffer*>(P(ep).alloc(device, size).release());
        });
    }
    static hetero_status buffer_import_host(hetero_ep* ep, uint32_t device, void* ptr, uint64_t size, hetero_buffer** out) {
        return guarded([&] {
            check_device(ep, device);
            if (!out || !ptr || size == 0) fail(HETERO_ERR_INVALID_ARGUMENT, "import_host needs a pointer, a size and out");
            *out = reinterpret_cast<hetero_buffer*>(P(ep).import_host(device, ptr, size).release());
        });
    }
    static void* buffer_host_ptr(hetero_ep* ep, hetero_buffer* b) {
        void* p = nullptr;
        guarded([&] { p = b ? P(ep).host_ptr(*B(b)) : nullptr; });
        return p;
    }
    static hetero_status buffer_write(hetero_ep* ep, hetero_buffer* dst, uint64_t offset, const void* src, uint64_t size) {
        return guarded([&] {
            check_range(B(dst), offset, size, "buffer_write");
            if (size && !src) fail(HETERO_ERR_INVALID_ARGUMENT, "buffer_write: null source");
            if (size) P(ep).write(*B(dst), offset, src, size);
        });
    }
    static hetero_status buffer_read(hetero_ep* ep, hetero_buffer* src, uint64_t offset, void* dst, uint64_t size) {
        return guarded([&] {
            check_range(B(src), offset, size, "buffer_read");
            if (size && !dst) fail(HETERO_ERR_INVALID_ARGUMENT, "buffer_read: null destination");
            if (size) P(ep).read(*B(src), offset, dst, size);
        });
    }
    static hetero_status buffer_copy(hetero_ep* ep, hetero_buffer* src, uint64_t so, hetero_buffer* dst, uint64_t d, uint64_t size) {
        return guarded([&] {
            check_range(B(src), so, size, "buffer_copy source");
            check_range(B(dst), d, size, "buffer_copy destination");
            if (size) P(ep).copy(*B(src), so, *B(dst), d, size);
        });
    }
    static void buffer_release(hetero_ep*, hetero_buffer* b) { delete B(b); }

    static hetero_status compile(hetero_ep* ep, uint32_t device, const hetero_graph* graph, const hetero_binding* constants,
                                 size_t n_constants, hetero_executable** out) {
        return guarded([&] {
            check_device(ep, device);
            if (!graph || !out) fail(HETERO_ERR_INVALID_ARGUMENT, "compile: null graph or out");
            const std::string e = check_graph(*graph);
            if (!e.empty()) fail(HETERO_ERR_INVALID_ARGUMENT, "compile: " + e);
            Graph g(*graph);
            auto table = resolve(g, device, HETERO_TENSOR_CONSTANT, constants, n_constants);
            *out = reinterpret_cast<hetero_executable*>(P(ep).compile(device, std::move(g), table).release());
        });
    }
    static void executable_release(hetero_ep*, hetero_executable* exe) { delete reinterpret_cast<Executable*>(exe); }

    static hetero_status execute(hetero_ep* ep, hetero_executable* exe, const hetero_binding* bindings, size_t n,
                                 hetero_event** event) {
        return guarded([&] {
            if (!exe) fail(HETERO_ERR_INVALID_ARGUMENT, "execute: null executable");
            P(ep).fault_injection().on_execute();
            auto& x = *reinterpret_cast<Executable*>(exe);
            auto table = resolve(x.graph(), x.device(), HETERO_TENSOR_BOUND, bindings, n);
            if (event) *event = nullptr;
            std::unique_ptr<Event> ev = P(ep).execute(x, table, event != nullptr);
            if (event) *event = reinterpret_cast<hetero_event*>((ev ? std::move(ev) : std::make_unique<DoneEvent>()).release());
            else if (ev) ev->wait();
        });
    }
    static hetero_status event_wait(hetero_ep* ep, hetero_event* ev) {
        return guarded([&] {
            if (!ev) fail(HETERO_ERR_INVALID_ARGUMENT, "event_wait: null event");
            if (ep) P(ep).fault_injection().on_wait();
            reinterpret_cast<Event*>(ev)->wait();
        });
    }
    static void event_release(hetero_ep*, hetero_event* ev) { delete reinterpret_cast<Event*>(ev); }
    static hetero_status event_seconds(hetero_ep*, hetero_event* ev, double* seconds, uint32_t* flags) {
        return guarded([&] {
            if (!ev || !seconds) fail(HETERO_ERR_INVALID_ARGUMENT, "event_seconds: null event or output");
            bool simulated = false;
            const double s = reinterpret_cast<Event*>(ev)->device_seconds(simulated);
            if (s < 0) fail(HETERO_ERR_UNSUPPORTED, "this provider does not time its executions");
            *seconds = s;
            if (flags) *flags = simulated ? HETERO_TIME_SIMULATED : 0u;
        });
    }

    static const hetero_ep_api* api(const char* name, const char* version) {
        // Filled by name, in the ABI header's order (C++20 designated
        // initializers must follow it): two entries of the same type cannot
        // swap places unnoticed, and an entry appended to the ABI is added here
        // by its name.
        static const hetero_ep_api table = {
            .struct_size = sizeof(hetero_ep_api),
            .abi_version = HETERO_ABI_VERSION,
            .name = name,
            .version = version,
            .last_error = &last_error_fn,
            .create = &create,
            .destroy = &destroy,
            .device_count = &device_count,
            .device_props = &device_props,
            .op_supported = &op_supported,
            .buffer_alloc = &buffer_alloc,
            .buffer_import_host = &buffer_import_host,
            .buffer_host_ptr = &buffer_host_ptr,
            .buffer_write = &buffer_write,
            .buffer_read = &buffer_read,
            .buffer_copy = &buffer_copy,
            .buffer_release = &buffer_release,
            .compile = &compile,
            .executable_release = &executable_release,
            .execute = &execute,
            .event_wait = &event_wait,
            .event_release = &event_release,
            .event_seconds = &event_seconds,  // since 1.1
        };
        return &table;
    }
};

}  // namespace detail

// Logs through the core's host services (no-op before init).
inline void log(hetero_log_level level, const char* provider, const std::string& msg) {
    const hetero_host_api* h = detail::host();
    if (h && h->log) h->log(h->host_ctx, level, provider, msg.c_str());
}

// Shared body of every provider's entry point. `probe` returns nullptr when the
// provider can run on this machine, or a static reason why not.
template <class Impl>
const hetero_ep_api* init_provider(const hetero_host_api* host, uint32_t host_abi, const char** reason, const char* name,
                                   const char* version, const char* (*probe)()) {
    const char* dummy = nullptr;
    if (!reason) reason = &dummy;
    if (HETERO_ABI_MAJOR_OF(host_abi) != HETERO_ABI_VERSION_MAJOR) {
        *reason = "core speaks another ABI major version";
        return nullptr;
    }
    if (host && host->struct_size >= sizeof(hetero_host_api)) detail::host() = host;
    if (probe) {
        if (const char* why = probe()) {
            *reason = why;
            return nullptr;
        }
    }
    return detail::Table<Impl>::api(name, version);
}

}  // namespace hetero::sdk

// Defines the plugin's entry point for provider class IMPL.
#define HETERO_SDK_EXPORT_PROVIDER(IMPL, NAME, VERSION, PROBE)                                                     \
    extern "C" HETERO_EP_EXPORT const hetero_ep_api* hetero_ep_init(const hetero_host_api* host, uint32_t host_abi, \
                                                                    const char** reason) {                         \
        return ::hetero::sdk::init_provider<IMPL>(host, host_abi, reason, NAME, VERSION, PROBE);                   \
    }
