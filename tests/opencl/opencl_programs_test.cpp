// The OpenCL provider builds its programs as executables need them: the base
// program before the first executable, and a tensor-core attention instance
// (one per padded head dim) when a graph's prefill attention first takes it.
// Checked through the C ABI only, by what the provider logs and leaves in its
// program cache (files named by program), never by timing:
//   - a head-dim-64 graph builds the base program and attention_mma_hd64, no
//     other instance, and HETERO_CL_PROFILE shows attention_mma_hd64 ran;
//   - a second executable whose head dim pads to 64 (48) builds nothing;
//   - head dim 80 builds attention_mma_hd96 alone;
//   - compile_seconds_hint counts what is left to build or load;
//   - a new provider instance loads both from the cache, builds nothing;
//   - an instance that fails to build is reported once, naming it and the
//     head dim, and its graphs run right on the generic kernels.
//   opencl_programs_test path/to/libhetero-ep-opencl.so
// Needs tensor-core attention: an NVIDIA GPU of compute capability 8.0+, or
// HETERO_CL_MMA=emulate (ctest sets it). Exits 77 without an OpenCL device.
#include <hetero/ep_api.h>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/graph_parts.hpp>
#include <reference_ops.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace {

const hetero_ep_api* api = nullptr;
int failures = 0;

void expect(bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    std::fflush(stdout);
    if (!ok) ++failures;
}

// Every message the provider logs, in order.
std::mutex log_mutex;
std::vector<std::string> log_lines;

void collect_log(void*, int level, const char* provider, const char* msg) {
    std::lock_guard<std::mutex> lock(log_mutex);
    log_lines.push_back(msg);
    if (level >= HETERO_LOG_WARN) std::printf("  [%s] %s\n", provider, msg);
}

// Lines logged from index `from` on that contain `needle`.
std::vector<std::string> logged_since(size_t from, const std::string& needle) {
    std::lock_guard<std::mutex> lock(log_mutex);
    std::vector<std::string> out;
    for (size_t i = from; i < log_lines.size(); ++i)
        if (log_lines[i].find(needle) != std::string::npos) out.push_back(log_lines[i]);
    return out;
}

size_t log_mark() {
    std::lock_guard<std::mutex> lock(log_mutex);
    return log_lines.size();
}

// Names of the programs the provider built from source / loaded from its
// cache since `from` ("base", "attention_mma_hd64"), from its lines
// "<device>: program <name> built from source in ..." and "... loaded from
// the program cache in ...".
std::vector<std::string> programs_since(size_t from, const char* how) {
    std::vector<std::string> names;
    for (const std::string& l : logged_since(from, how)) {
        const size_t at = l.find(": program ");
        if (at == std::string::npos) continue;
        const size_t start = at + std::strlen(": program ");
        names.push_back(l.substr(start, l.find(' ', start) - start));
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return "{" + s + "}";
}

// Labels of the cache directory's files: "base" for base-<key>.bin.
std::vector<std::string> cached_programs(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        const std::string f = e.path().filename().string();
        if (f.size() > 4 && f.substr(f.size() - 4) == ".bin") names.push_back(f.substr(0, f.rfind('-')));
    }
    std::sort(names.begin(), names.end());
    return names;
}

hetero_ep* create(const std::string& cache_dir) {
    const hetero_option opt{"cache_dir", cache_dir.c_str()};
    hetero_ep* ep = nullptr;
    if (api->create(&opt, 1, &ep) != HETERO_OK) {
        std::printf("create: %s\n", api->last_error());
        return nullptr;
    }
    return ep;
}

double compile_hint(hetero_ep* ep) {
    hetero_device_props p{};
    p.struct_size = sizeof p;
    if (api->device_props(ep, 0, &p) != HETERO_OK) return -1;
    return HETERO_HAS_FIELD(hetero_device_props, &p, compile_seconds_hint) ? p.compile_seconds_hint : -1;
}

hetero_tensor_desc desc(uint32_t dtype, std::vector<int64_t> shape) { return hetero::sdk::make_desc(dtype, HETERO_TENSOR_BOUND, shape); }

std::vector<uint8_t> random_tensor(const hetero_tensor_desc& t, std::mt19937& rng) {
    const int64_t n = hetero::sdk::element_count(t);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> f(static_cast<size_t>(n));
    for (auto& v : f) v = u(rng);
    std::vector<uint8_t> bytes(hetero::sdk::tensor_bytes(t));
    hetero::sdk::row_from_f32(t.dtype, f.data(), bytes.data(), n);
    return bytes;
}

// One prefill attention node over an f16 cache (what tensor cores take):
// N rows at the last N of C positions, H query and Hkv KV heads of head dim
// Hd. Compiled as its own executable, run, compared with the reference;
// returns whether it matched (relative error under 1e-3, as f16 caches allow).
bool run_attention(hetero_ep* ep, std::mt19937& rng, int64_t Hd, int64_t N, int64_t H = 4, int64_t Hkv = 2, int64_t C = 48) {
    std::vector<hetero_tensor_desc> t = {desc(HETERO_DTYPE_F32, {N, H, Hd}), desc(HETERO_DTYPE_F16, {C, Hkv, Hd}),
                                         desc(HETERO_DTYPE_F16, {C, Hkv, Hd}), desc(HETERO_DTYPE_I32, {N}),
                                         desc(HETERO_DTYPE_F32, {N, H, Hd})};
    std::vector<std::vector<uint8_t>> d = {random_tensor(t[0], rng), random_tensor(t[1], rng), random_tensor(t[2], rng),
                                           std::vector<uint8_t>(size_t(N) * 4), std::vector<uint8_t>(hetero::sdk::tensor_bytes(t[4]))};
    for (int64_t i = 0; i < N; ++i) {
        const int32_t p = int32_t(C - N + i);
        std::memcpy(d[3].data() + 4 * i, &p, 4);
    }
    hetero_node node{};
    node.op = HETERO_OP_ATTENTION;
    node.n_inputs = 4;
    for (int i = 0; i < 4; ++i) node.inputs[i] = i;
    node.output = 4;
    node.fparams[0] = 1.f / std::sqrt(float(Hd));
    const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, uint32_t(t.size()), 1, t.data(), &node};
    hetero_executable* exe = nullptr;
    if (api->compile(ep, 0, &g, nullptr, 0, &exe) != HETERO_OK) {
        std::printf("compile (head dim %lld): %s\n", (long long)Hd, api->last_error());
        return false;
    }
    std::vector<hetero_buffer*> bufs(d.size());
    std::vector<hetero_binding> bind(d.size());
    for (size_t i = 0; i < d.size(); ++i) {
        api->buffer_alloc(ep, 0, d[i].size(), &bufs[i]);
        api->buffer_write(ep, bufs[i], 0, d[i].data(), d[i].size());
        bind[i] = hetero_binding{int32_t(i), 0, bufs[i], 0};
    }
    const hetero_status st = api->execute(ep, exe, bind.data(), bind.size(), nullptr);
    if (st != HETERO_OK) std::printf("execute (head dim %lld): %s\n", (long long)Hd, api->last_error());
    std::vector<uint8_t> got(d[4].size());
    api->buffer_read(ep, bufs[4], 0, got.data(), got.size());
    for (auto* b : bufs) api->buffer_release(ep, b);
    api->executable_release(ep, exe);  // logs the HETERO_CL_PROFILE report
    if (st != HETERO_OK) return false;

    std::vector<uint8_t*> ptrs;
    for (auto& x : d) ptrs.push_back(x.data());
    hetero::reference::run_node(node, t.data(), ptrs.data());
    const float* want = reinterpret_cast<const float*>(d[4].data());
    const float* have = reinterpret_cast<const float*>(got.data());
    double scale = 1e-6, err = 0;
    for (size_t i = 0; i < got.size() / 4; ++i) scale = std::max(scale, double(std::fabs(want[i])));
    for (size_t i = 0; i < got.size() / 4; ++i) err = std::max(err, double(std::fabs(want[i] - have[i])));
    return err / scale < 1e-3;
}

// Whether the profile logged since `from` shows `kernel` among the
// dispatches (lines "profile: ... <kernel> <shapes>").
bool ran(size_t from, const std::string& kernel) {
    for (const std::string& l : logged_since(from, "profile: "))
        if (l.find("  " + kernel + " ") != std::string::npos) return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s libhetero-ep-opencl.so\n", argv[0]);
        return 2;
    }
    // Which attention kernel each executable ran, logged at its release.
    setenv("HETERO_CL_PROFILE", "1", 1);
    unsetenv("HETERO_CL_ATTN_BUILD_OPTIONS");
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    auto init = reinterpret_cast<hetero_ep_init_fn>(dlsym(lib, HETERO_EP_ENTRY_SYMBOL));
    static const hetero_host_api host{sizeof(hetero_host_api), HETERO_ABI_VERSION, nullptr, collect_log};
    const char* reason = nullptr;
    api = init ? init(&host, HETERO_ABI_VERSION, &reason) : nullptr;
    if (!api) {
        std::fprintf(stderr, "init failed: %s\n", reason ? reason : "no entry symbol");
        return 2;
    }
    char dir_template[] = "/tmp/hetero-cl-programs-XXXXXX";
    if (!mkdtemp(dir_template)) {
        std::perror("mkdtemp");
        return 2;
    }
    const std::string cache_dir = dir_template;
    std::mt19937 rng(11);

    hetero_ep* ep = create(cache_dir);
    if (!ep || api->device_count(ep) == 0) {
        std::printf("no OpenCL device: skipped\n");
        if (ep) api->destroy(ep);
        std::filesystem::remove_all(cache_dir);
        return 77;
    }
    const double cold_hint = compile_hint(ep);
    expect(cold_hint > 1.0, "cold start: compile_seconds_hint " + std::to_string(cold_hint) + " s counts builds (nothing cached)");

    // Head dim 64: the base program and attention_mma_hd64, nothing else.
    size_t mark = log_mark();
    expect(run_attention(ep, rng, 64, 16), "head dim 64, 16 rows: matches the reference");
    const auto built64 = programs_since(mark, " built from source in ");
    if (built64 == std::vector<std::string>{"base"}) {
        std::printf("FAIL no tensor-core attention instance was built: run on an NVIDIA GPU (8.0+) or with HETERO_CL_MMA=emulate\n");
        return 1;
    }
    expect(built64 == std::vector<std::string>{"attention_mma_hd64", "base"},
           "head dim 64 built {attention_mma_hd64, base}, got " + joined(built64));
    expect(ran(mark, "attention_mma_hd64"), "head dim 64 ran attention_mma_hd64 (HETERO_CL_PROFILE)");
    expect(cached_programs(cache_dir) == std::vector<std::string>{"attention_mma_hd64", "base"},
           "cache holds {attention_mma_hd64, base}, got " + joined(cached_programs(cache_dir)));

    // Head dim 48 pads to 64: the same instance, shared, nothing built or loaded.
    mark = log_mark();
    expect(run_attention(ep, rng, 48, 32, 8, 2), "head dim 48, 32 rows: matches the reference");
    expect(programs_since(mark, ": program ").empty(), "head dim 48 reused the built programs, got " + joined(programs_since(mark, ": program ")));
    expect(ran(mark, "attention_mma_hd64"), "head dim 48 ran attention_mma_hd64");
    const double warm_hint = compile_hint(ep);
    expect(warm_hint == 0.0, "with base and one instance built, compile_seconds_hint is 0, got " + std::to_string(warm_hint));

    // Head dim 80: attention_mma_hd96 alone.
    mark = log_mark();
    expect(run_attention(ep, rng, 80, 16), "head dim 80, 16 rows: matches the reference");
    const auto built80 = programs_since(mark, ": program ");
    expect(built80 == std::vector<std::string>{"attention_mma_hd96"}, "head dim 80 built {attention_mma_hd96}, got " + joined(built80));
    expect(ran(mark, "attention_mma_hd96"), "head dim 80 ran attention_mma_hd96");
    expect(cached_programs(cache_dir) == std::vector<std::string>{"attention_mma_hd64", "attention_mma_hd96", "base"},
           "cache holds {attention_mma_hd64, attention_mma_hd96, base}, got " + joined(cached_programs(cache_dir)));
    api->destroy(ep);

    // A new instance (a later process): both load from the cache, nothing builds.
    ep = create(cache_dir);
    const double cached_hint = compile_hint(ep);
    expect(cached_hint > 0.0 && cached_hint < 1.0,
           "from the cache, compile_seconds_hint counts two loads (under 1 s), got " + std::to_string(cached_hint));
    mark = log_mark();
    expect(run_attention(ep, rng, 64, 16), "head dim 64 from the cache: matches the reference");
    const auto loaded = programs_since(mark, " loaded from the program cache in ");
    expect(loaded == std::vector<std::string>{"attention_mma_hd64", "base"}, "loaded {attention_mma_hd64, base}, got " + joined(loaded));
    expect(programs_since(mark, " built from source in ").empty(), "nothing built from source, got " + joined(programs_since(mark, " built from source in ")));
    api->destroy(ep);

    // An instance that does not build (its options break the kernel's
    // checks): reported once with its name and head dim, the graphs run on
    // the generic kernels, the provider goes on.
    setenv("HETERO_CL_ATTN_BUILD_OPTIONS", "-DAM_ROWS=0", 1);
    ep = create(cache_dir);
    mark = log_mark();
    expect(run_attention(ep, rng, 64, 16), "head dim 64 with its instance failing: matches the reference");
    const auto warned = logged_since(mark, "did not build");
    expect(warned.size() == 1 && warned[0].find("attention_mma_hd64") != std::string::npos && warned[0].find("head dim 64") != std::string::npos,
           "one warning naming attention_mma_hd64 and head dim 64, got " + std::to_string(warned.size()));
    expect(!ran(mark, "attention_mma_hd64") && (ran(mark, "attention_tiled") || ran(mark, "attention")),
           "head dim 64 ran a generic attention kernel instead");
    mark = log_mark();
    expect(run_attention(ep, rng, 56, 16), "head dim 56 (the same failed instance): matches the reference");
    expect(logged_since(mark, "did not build").empty() && programs_since(mark, ": program ").empty(),
           "the failed instance is not tried again");
    api->destroy(ep);
    unsetenv("HETERO_CL_ATTN_BUILD_OPTIONS");

    std::filesystem::remove_all(cache_dir);
    std::printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
