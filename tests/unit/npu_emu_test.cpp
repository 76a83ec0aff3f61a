// The NPU-emulation provider through the C ABI alone: W8A8 matmuls bit for
// bit against the reference definition, static-shape graph builds cached in
// memory and on disk, the map limit, refusals, and its time model.
#include "reference_ops.hpp"

#include <hetero/ep_api.h>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/graph_parts.hpp>
#include <hetero/sdk/quant.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

const char* kPlugin = HETERO_BUILD_PLUGIN_DIR "/libhetero-ep-npu_emu.so";

void quiet_log(void*, int, const char*, const char*) {}

struct Plugin {
    void* handle = nullptr;
    const hetero_ep_api* api = nullptr;
    hetero_host_api host{sizeof(hetero_host_api), HETERO_ABI_VERSION, nullptr, &quiet_log};
    Plugin() {
        handle = dlopen(kPlugin, RTLD_NOW | RTLD_LOCAL);
        if (!handle) return;
        auto init = reinterpret_cast<hetero_ep_init_fn>(dlsym(handle, HETERO_EP_ENTRY_SYMBOL));
        const char* reason = nullptr;
        api = init ? init(&host, HETERO_ABI_VERSION, &reason) : nullptr;
    }
    ~Plugin() {
        if (handle) dlclose(handle);
    }
    void outlier_stats(uint64_t& shadow, uint64_t& uncalibrated, uint64_t& channels) const {
        using Fn = void (*)(uint64_t*, uint64_t*, uint64_t*);
        auto fn = reinterpret_cast<Fn>(dlsym(handle, "hetero_npu_emu_outlier_stats"));
        ASSERT_NE(fn, nullptr);
        fn(&shadow, &uncalibrated, &channels);
    }
    void stats(uint64_t& compiles, uint64_t& mem, uint64_t& disk, double& seconds) const {
        using Fn = void (*)(uint64_t*, uint64_t*, uint64_t*, double*);
        auto fn = reinterpret_cast<Fn>(dlsym(handle, "hetero_npu_emu_stats"));
        ASSERT_NE(fn, nullptr);
        fn(&compiles, &mem, &disk, &seconds);
    }
};

Plugin& plugin() {
    static Plugin p;
    return p;
}

using Opts = std::vector<std::pair<std::string, std::string>>;

struct Instance {
    hetero_ep* ep = nullptr;
    hetero_status status = HETERO_OK;
    explicit Instance(const Opts& opts) {
        std::vector<hetero_option> o;
        for (auto& [k, v] : opts) o.push_back({k.c_str(), v.c_str()});
        status = plugin().api->create(o.data(), o.size(), &ep);
    }
    ~Instance() {
        if (ep) plugin().api->destroy(ep);
    }
};

std::string temp_dir(const std::string& name) {
    const auto d = std::filesystem::temp_directory_path() / ("hetero-npu-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d.string();
}

hetero_tensor_desc desc(uint32_t dtype, uint32_t kind, int64_t a, int64_t b) {
    hetero_tensor_desc d{};
    d.dtype = dtype;
    d.kind = kind;
    d.ndim = 2;
    d.shape[0] = a;
    d.shape[1] = b;
    return d;
}

// Weight bytes of `dtype` from random floats (a few rows with large values).
std::vector<uint8_t> make_weights(uint32_t dtype, int64_t m, int64_t k, std::mt19937& rng) {
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> f(size_t(m * k));
    for (auto& v : f) v = g(rng);
    for (int64_t r = 0; r < m; r += 7) f[size_t(r * k)] *= 20.f;
    const uint64_t rb = hetero::sdk::row_bytes(dtype, k);
    std::vector<uint8_t> out(size_t(rb * uint64_t(m)));
    for (int64_t r = 0; r < m; ++r) hetero::sdk::row_from_f32(dtype, f.data() + r * k, out.data() + uint64_t(r) * rb, k);
    return out;
}

// y [n, m] = x [n, k] W^T, as one matmul node over tensors 0, 1 -> 2.
hetero_node matmul_node() { return hetero::sdk::make_node(HETERO_OP_MATMUL, {0, 1}, 2); }

// W [m, k] of `dtype` as floats.
std::vector<float> dequantized(uint32_t dtype, const std::vector<uint8_t>& w, int64_t m, int64_t k) {
    const uint64_t rb = hetero::sdk::row_bytes(dtype, k);
    std::vector<float> wf(size_t(m * k));
    for (int64_t r = 0; r < m; ++r) hetero::sdk::row_to_f32(dtype, w.data() + uint64_t(r) * rb, wf.data() + r * k, k);
    return wf;
}

// Runs y = x W^T on the emulated NPU; returns y and the event's seconds.
std::vector<float> run_matmul(hetero_ep* ep, const std::vector<float>& x, int64_t n, int64_t k, uint32_t wdtype,
                              std::vector<uint8_t>& w, int64_t m, double* seconds = nullptr, uint32_t* flags = nullptr) {
    const hetero_ep_api& api = *plugin().api;
    hetero_tensor_desc t[3] = {desc(HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, n, k), desc(wdtype, HETERO_TENSOR_CONSTANT, m, k),
                               desc(HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, n, m)};
    const hetero_node node = matmul_node();
    const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, 3, 1, t, &node};
    hetero_buffer *wb = nullptr, *xb = nullptr, *yb = nullptr;
    std::vector<float> y(size_t(n * m));
    EXPECT_EQ(api.buffer_import_host(ep, 0, w.data(), w.size(), &wb), HETERO_OK) << api.last_error();
    EXPECT_EQ(api.buffer_import_host(ep, 0, const_cast<float*>(x.data()), x.size() * 4, &xb), HETERO_OK);
    EXPECT_EQ(api.buffer_import_host(ep, 0, y.data(), y.size() * 4, &yb), HETERO_OK);
    const hetero_binding c{1, 0, wb, 0};
    hetero_executable* exe = nullptr;
    EXPECT_EQ(api.compile(ep, 0, &g, &c, 1, &exe), HETERO_OK) << api.last_error();
    const hetero_binding b[2] = {{0, 0, xb, 0}, {2, 0, yb, 0}};
    hetero_event* ev = nullptr;
    EXPECT_EQ(api.execute(ep, exe, b, 2, &ev), HETERO_OK) << api.last_error();
    EXPECT_EQ(api.event_wait(ep, ev), HETERO_OK);
    if (seconds) {
        EXPECT_EQ(api.event_seconds(ep, ev, seconds, flags), HETERO_OK);
    }
    api.event_release(ep, ev);
    api.executable_release(ep, exe);
    for (hetero_buffer* buf : {wb, xb, yb}) api.buffer_release(ep, buf);
    return y;
}

double estimate(hetero_ep* ep, int64_t n, int64_t k, int64_t m) {
    hetero_tensor_desc t[3] = {desc(HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, n, k), desc(HETERO_DTYPE_Q8_0, HETERO_TENSOR_CONSTANT, m, k),
                               desc(HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, n, m)};
    const hetero_node node = matmul_node();
    double est = -1;
    EXPECT_EQ(plugin().api->op_supported(ep, 0, &node, t, 3, &est), HETERO_OK) << plugin().api->last_error();
    return est;
}

class NpuEmu : public testing::Test {
protected:
    void SetUp() override {
        if (!plugin().api) GTEST_SKIP() << "npu_emu plugin not built";
    }
};

TEST_F(NpuEmu, W8A8MatmulIsBitExactAgainstTheReference) {
    Instance inst(Opts{{"cache_dir", "none"}});
    ASSERT_EQ(inst.status, HETERO_OK) << plugin().api->last_error();
    std::mt19937 rng(7);
    std::normal_distribution<float> g(0.f, 1.f);
    int cases = 0;
    for (uint32_t wt : {HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0, HETERO_DTYPE_F32})
        for (int64_t n : {1, 2, 7, 31, 32, 33, 128, 300})
            for (int64_t k : {32, 64, 256, 1024})
                for (int64_t m : {1, 17, 256}) {
                    if (n * k * m > 8'000'000) continue;
                    std::vector<float> x(size_t(n * k));
                    for (auto& v : x) v = g(rng);
                    for (int64_t i = 0; i < n; ++i) x[size_t(i * k + (i % k))] *= 50.f;  // outlier channels
                    std::vector<uint8_t> w = make_weights(wt, m, k, rng);
                    const std::vector<float> got = run_matmul(inst.ep, x, n, k, wt, w, m);
                    std::vector<float> want(size_t(n * m));
                    hetero::reference::matmul_w8a8(x.data(), n, desc(wt, HETERO_TENSOR_CONSTANT, m, k), w.data(), false, want.data());
                    ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0)
                        << hetero::sdk::dtype_name(wt) << " n=" << n << " k=" << k << " m=" << m;
                    ++cases;
                }
    EXPECT_GT(cases, 200);
}

TEST_F(NpuEmu, ANewShapeBuildsAGraphAndARepeatHitsTheCaches) {
    const std::string dir = temp_dir("cache");
    std::mt19937 rng(3);
    std::vector<float> x(64 * 96, 0.5f);
    std::vector<uint8_t> w = make_weights(HETERO_DTYPE_Q8_0, 40, 96, rng);
    uint64_t c0, m0, d0, c1, m1, d1, c2, m2, d2, c3, m3, d3;
    double s0, s1, s2, s3;
    {
        Instance a(Opts{{"cache_dir", dir}});
        ASSERT_EQ(a.status, HETERO_OK);
        plugin().stats(c0, m0, d0, s0);
        run_matmul(a.ep, x, 64, 96, HETERO_DTYPE_Q8_0, w, 40);
        plugin().stats(c1, m1, d1, s1);
        EXPECT_EQ(c1, c0 + 1) << "a new shape builds a graph";
        EXPECT_GT(s1, s0) << "and its build costs modelled time";
        run_matmul(a.ep, x, 64, 96, HETERO_DTYPE_Q8_0, w, 40);
        plugin().stats(c2, m2, d2, s2);
        EXPECT_EQ(c2, c1);
        EXPECT_EQ(m2, m1 + 1) << "the same graph again is a memory hit";
    }
    Instance b(Opts{{"cache_dir", dir}});
    run_matmul(b.ep, x, 64, 96, HETERO_DTYPE_Q8_0, w, 40);
    plugin().stats(c3, m3, d3, s3);
    EXPECT_EQ(c3, c2);
    EXPECT_EQ(d3, d2 + 1) << "another instance finds the graph on disk";
    EXPECT_EQ(s3, s2) << "a disk hit costs no modelled build time";
    std::filesystem::remove_all(dir);
}

TEST_F(NpuEmu, LayersOfOneShapeShareOneGraph) {
    // Two layers' matmuls: same shape, other weights. The graph is built once
    // (weights are bound per execute), each result is its own weights'.
    Instance a(Opts{{"cache_dir", "none"}});
    ASSERT_EQ(a.status, HETERO_OK);
    std::mt19937 rng(9);
    std::vector<float> x(32 * 64);
    for (auto& v : x) v = std::normal_distribution<float>(0.f, 1.f)(rng);
    std::vector<uint8_t> w0 = make_weights(HETERO_DTYPE_Q8_0, 48, 64, rng), w1 = make_weights(HETERO_DTYPE_Q8_0, 48, 64, rng);
    uint64_t c0, m0, d0, c1, m1, d1;
    double s0, s1;
    plugin().stats(c0, m0, d0, s0);
    const std::vector<float> y0 = run_matmul(a.ep, x, 32, 64, HETERO_DTYPE_Q8_0, w0, 48);
    const std::vector<float> y1 = run_matmul(a.ep, x, 32, 64, HETERO_DTYPE_Q8_0, w1, 48);
    plugin().stats(c1, m1, d1, s1);
    EXPECT_EQ(c1, c0 + 1) << "one build for both layers";
    EXPECT_EQ(m1, m0 + 1) << "the second layer hits the built graph";
    std::vector<float> want(y1.size());
    hetero::reference::matmul_w8a8(x.data(), 32, desc(HETERO_DTYPE_Q8_0, HETERO_TENSOR_CONSTANT, 48, 64), w1.data(), false, want.data());
    EXPECT_EQ(std::memcmp(y1.data(), want.data(), want.size() * 4), 0) << "the second layer computes with its own weights";
    EXPECT_NE(std::memcmp(y0.data(), y1.data(), y0.size() * 4), 0);
    hetero_device_props p{};
    p.struct_size = sizeof p;
    ASSERT_EQ(plugin().api->device_props(a.ep, 0, &p), HETERO_OK);
    EXPECT_EQ(p.chunk_tokens, 256u) << "the profile's default chunk";
}

TEST_F(NpuEmu, TheMapLimitRefusesWithTheBytes) {
    Instance inst(Opts{{"cache_dir", "none"}, {"map_limit", "1000"}});
    ASSERT_EQ(inst.status, HETERO_OK);
    hetero_buffer* b = nullptr;
    ASSERT_EQ(plugin().api->buffer_alloc(inst.ep, 0, 600, &b), HETERO_OK);
    hetero_buffer* c = nullptr;
    EXPECT_EQ(plugin().api->buffer_alloc(inst.ep, 0, 600, &c), HETERO_ERR_OUT_OF_MEMORY);
    const std::string msg = plugin().api->last_error();
    EXPECT_NE(msg.find("600 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("600 of 1000"), std::string::npos) << msg;
    plugin().api->buffer_release(inst.ep, b);
    EXPECT_EQ(plugin().api->buffer_alloc(inst.ep, 0, 600, &c), HETERO_OK) << "released bytes are mapped again";
    plugin().api->buffer_release(inst.ep, c);
}

TEST_F(NpuEmu, OpsOutsideTheProfileAreRefusedByName) {
    Instance inst(Opts{{"cache_dir", "none"}});
    // q [2, 1, 64], K and V caches [8, 1, 64], positions [2] -> [2, 1, 64]
    auto three = [](int64_t a) {
        hetero_tensor_desc d = desc(HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, a, 1);
        d.ndim = 3;
        d.shape[2] = 64;
        return d;
    };
    hetero_tensor_desc t[5] = {three(2), three(8), three(8), desc(HETERO_DTYPE_I32, HETERO_TENSOR_BOUND, 2, 1), three(2)};
    t[3].ndim = 1;
    hetero_node node{};
    node.op = HETERO_OP_ATTENTION;
    node.n_inputs = 4;
    for (int i = 0; i < 4; ++i) node.inputs[i] = i;
    node.output = 4;
    node.fparams[0] = 0.125f;
    double est = 0;
    EXPECT_EQ(plugin().api->op_supported(inst.ep, 0, &node, t, 5, &est), HETERO_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(plugin().api->last_error()).find("attention"), std::string::npos) << plugin().api->last_error();
}

TEST_F(NpuEmu, ABadProfileIsNamed) {
    Instance inst(Opts{{"profile", "/nonexistent/soc.json"}});
    EXPECT_NE(inst.status, HETERO_OK);
    EXPECT_NE(std::string(plugin().api->last_error()).find("/nonexistent/soc.json"), std::string::npos) << plugin().api->last_error();
}

// The provider reads profiles as strictly as `hetero simulate` does: a
// repeated key or an unsourced figure outside the NPU section is refused,
// with the file and JSON path, where a lax reader would have taken it.
TEST_F(NpuEmu, ProfilesAreReadStrictly) {
    std::ifstream in(std::string(HETERO_SOURCE_DIR) + "/profiles/soc/snapdragon-8-gen-3.json");
    ASSERT_TRUE(in) << "the shipped profile";
    const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto refused = [](const std::string& text, const std::string& expect) {
        const std::string path = ::testing::TempDir() + "npu_strict_profile.json";
        std::ofstream(path) << text;
        Instance inst(Opts{{"profile", path}, {"cache_dir", "none"}});
        EXPECT_NE(inst.status, HETERO_OK) << expect;
        const std::string err = inst.status == HETERO_OK ? "" : plugin().api->last_error();
        EXPECT_NE(err.find(path), std::string::npos) << err;
        EXPECT_NE(err.find(expect), std::string::npos) << err;
    };
    // A second "schema" key in the top object.
    refused("{\"schema\": \"x\", " + good.substr(good.find('{') + 1), "duplicate key 'schema'");
    // The memory section's sync figure with its source removed.
    std::string unsourced = good;
    const size_t sync = unsourced.find("\"sync_us\"");
    ASSERT_NE(sync, std::string::npos);
    const size_t source = unsourced.find("\"source\"", sync);
    unsourced.replace(source, 8, "\"origin\"");
    refused(unsourced, "memory.sync_us: missing \"source\"");
}

TEST_F(NpuEmu, TimesFollowTilesOrderAndShape) {
    Instance inst(Opts{{"cache_dir", "none"}});
    // Stage performance: beyond the order knee, rows count in whole tiles of 32.
    EXPECT_DOUBLE_EQ(estimate(inst.ep, 129, 4096, 4096), estimate(inst.ep, 160, 4096, 4096));
    EXPECT_GT(estimate(inst.ep, 161, 4096, 4096), estimate(inst.ep, 160, 4096, 4096));
    // Order: 64 rows against a 4096 x 4096 weight cost more than half of 128 rows.
    EXPECT_GT(estimate(inst.ep, 64, 4096, 4096), 0.6 * estimate(inst.ep, 128, 4096, 4096));
    // Shape: FFN-down (k = 4m) is slower than the same work with k = m/4.
    const double down = estimate(inst.ep, 512, 4096, 1024), up = estimate(inst.ep, 512, 1024, 4096);
    EXPECT_GT(down, 2.0 * up);
    // Every execute reports modelled seconds, flagged simulated.
    std::mt19937 rng(1);
    std::vector<float> x(32 * 64, 1.0f);
    std::vector<uint8_t> w = make_weights(HETERO_DTYPE_Q8_0, 32, 64, rng);
    double s = 0;
    uint32_t flags = 0;
    run_matmul(inst.ep, x, 32, 64, HETERO_DTYPE_Q8_0, w, 32, &s, &flags);
    EXPECT_GT(s, 0.0);
    EXPECT_EQ(flags & HETERO_TIME_SIMULATED, HETERO_TIME_SIMULATED);
}

// Shadow outlier execution, defined independently of the provider: with
// threshold T (the quantile of the calibration's channel maxima), the int8
// part is the W8A8 reference on x clamped to min(T, max|x|); the part beyond
// is accumulated in f32 over outlier channels in ascending order (float
// weights) and added.
std::vector<float> shadow_reference(const std::vector<float>& x, int64_t n, int64_t k, const std::vector<float>& calib, int64_t calib_rows,
                                    double quantile, uint32_t wdtype, const std::vector<uint8_t>& w, int64_t m) {
    std::vector<float> cmax(size_t(k), 0.f);
    for (int64_t i = 0; i < calib_rows; ++i)
        for (int64_t c = 0; c < k; ++c) cmax[size_t(c)] = std::max(cmax[size_t(c)], std::fabs(calib[size_t(i * k + c)]));
    std::sort(cmax.begin(), cmax.end());
    const float T = cmax[size_t(std::floor(quantile * double(k - 1)))];
    float amax = 0.f;
    for (float v : x) amax = std::max(amax, std::fabs(v));
    const float t = std::min(T, amax);
    std::vector<float> clamped(x.size());
    for (size_t i = 0; i < x.size(); ++i) clamped[i] = std::clamp(x[i], -t, t);
    std::vector<float> y(size_t(n * m));
    hetero::reference::matmul_w8a8(clamped.data(), n, desc(wdtype, HETERO_TENSOR_CONSTANT, m, k), w.data(), false, y.data());
    const std::vector<float> wf = dequantized(wdtype, w, m, k);
    std::vector<float> acc(size_t(n * m), 0.f);
    for (int64_t c = 0; c < k; ++c) {
        bool any = false;
        for (int64_t i = 0; i < n; ++i) any = any || std::fabs(x[size_t(i * k + c)]) > t;
        if (!any) continue;
        for (int64_t i = 0; i < n; ++i) {
            const float beyond = x[size_t(i * k + c)] - clamped[size_t(i * k + c)];
            if (beyond == 0.f) continue;
            for (int64_t r = 0; r < m; ++r) acc[size_t(i * m + r)] += beyond * wf[size_t(r * k + c)];
        }
    }
    for (size_t i = 0; i < y.size(); ++i) y[i] += acc[i];
    return y;
}

// Activations with a few large channels, as LLM activations have.
std::vector<float> activations(int64_t n, int64_t k, std::mt19937& rng, std::initializer_list<int64_t> outlier_channels, float scale) {
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> x(size_t(n * k));
    for (auto& v : x) v = g(rng);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t c : outlier_channels) x[size_t(i * k + c)] *= scale;
    return x;
}

TEST_F(NpuEmu, ShadowOutliersAreExactFromACalibration) {
    const std::string dir = temp_dir("outliers");
    std::mt19937 rng(11);
    const int64_t k = 96, m = 40;
    std::vector<uint8_t> w = make_weights(HETERO_DTYPE_Q8_0, m, k, rng);
    const std::vector<float> calib = activations(48, k, rng, {5, 40}, 30.f);
    uint64_t shadow0, uncal0, ch0, shadow1, uncal1, ch1;
    plugin().outlier_stats(shadow0, uncal0, ch0);
    {
        // Calibration: float results (the model's own activations flow on), ranges recorded.
        Instance cal(Opts{{"cache_dir", dir}, {"outliers", "calibrate"}});
        ASSERT_EQ(cal.status, HETERO_OK) << plugin().api->last_error();
        const std::vector<float> y = run_matmul(cal.ep, calib, 48, k, HETERO_DTYPE_Q8_0, w, m);
        const std::vector<float> wf = dequantized(HETERO_DTYPE_Q8_0, w, m, k);
        for (int64_t i = 0; i < 48; ++i)
            for (int64_t r = 0; r < m; ++r) {
                double want = 0;
                for (int64_t c = 0; c < k; ++c) want += double(calib[size_t(i * k + c)]) * double(wf[size_t(r * k + c)]);
                ASSERT_NEAR(y[size_t(i * m + r)], want, 1e-3 * (1 + std::fabs(want)));
            }
    }
    ASSERT_EQ(std::distance(std::filesystem::directory_iterator(dir + "/outliers"), std::filesystem::directory_iterator{}), 1)
        << "one record per weight tensor";
    for (int64_t n : {1, 16, 64}) {
        for (double q : {0.9, 0.99}) {
            Instance run(Opts{{"cache_dir", dir}, {"outlier_quantile", std::to_string(q)}});
            ASSERT_EQ(run.status, HETERO_OK) << plugin().api->last_error();
            const std::vector<float> x = activations(n, k, rng, {5, 40, 77}, 40.f);
            double seconds = 0;
            const std::vector<float> got = run_matmul(run.ep, x, n, k, HETERO_DTYPE_Q8_0, w, m, &seconds);
            const std::vector<float> want = shadow_reference(x, n, k, calib, 48, q, HETERO_DTYPE_Q8_0, w, m);
            ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0) << "n=" << n << " q=" << q;
            // The same input without outliers: no CPU share, no hand-over.
            const std::vector<float> calm = activations(n, k, rng, {}, 1.f);
            double calm_seconds = 0;
            run_matmul(run.ep, calm, n, k, HETERO_DTYPE_Q8_0, w, m, &calm_seconds);
            EXPECT_GT(seconds, calm_seconds) << "outlier channels add the CPU share's sync to the modelled time";
        }
    }
    plugin().outlier_stats(shadow1, uncal1, ch1);
    EXPECT_GT(shadow1, shadow0);
    EXPECT_GT(ch1, ch0) << "outlier channels went to the CPU";
    // Shadow outliers bring the result closer to float than per-tensor int8 alone.
    {
        Instance shadow(Opts{{"cache_dir", dir}});
        Instance off(Opts{{"cache_dir", dir}, {"outliers", "off"}});
        const std::vector<float> x = activations(64, k, rng, {5, 40}, 40.f);
        const std::vector<float> a = run_matmul(shadow.ep, x, 64, k, HETERO_DTYPE_Q8_0, w, m);
        const std::vector<float> b = run_matmul(off.ep, x, 64, k, HETERO_DTYPE_Q8_0, w, m);
        const std::vector<float> wf = dequantized(HETERO_DTYPE_Q8_0, w, m, k);
        double ea = 0, eb = 0;
        for (int64_t i = 0; i < 64; ++i)
            for (int64_t r = 0; r < m; ++r) {
                double f = 0;
                for (int64_t c = 0; c < k; ++c) f += double(x[size_t(i * k + c)]) * double(wf[size_t(r * k + c)]);
                ea += std::pow(a[size_t(i * m + r)] - f, 2);
                eb += std::pow(b[size_t(i * m + r)] - f, 2);
            }
        EXPECT_LT(ea, 0.5 * eb) << "shadow " << ea << " vs per-tensor " << eb;
    }
    std::filesystem::remove_all(dir);
}

TEST_F(NpuEmu, ACorruptCalibrationIsIgnoredAndBadOutlierOptionsAreNamed) {
    const std::string dir = temp_dir("corrupt");
    std::mt19937 rng(5);
    const int64_t k = 64, m = 8;
    std::vector<uint8_t> w = make_weights(HETERO_DTYPE_Q8_0, m, k, rng);
    const std::vector<float> x = activations(4, k, rng, {3}, 30.f);
    {
        Instance cal(Opts{{"cache_dir", dir}, {"outliers", "calibrate"}});
        run_matmul(cal.ep, x, 4, k, HETERO_DTYPE_Q8_0, w, m);
    }
    for (const auto& f : std::filesystem::directory_iterator(dir + "/outliers")) {
        std::ofstream(f.path()) << "hetero npu_emu channel ranges 1\n64 4\nnot-a-number\n";
    }
    uint64_t s0, u0, c0, s1, u1, c1;
    plugin().outlier_stats(s0, u0, c0);
    {
        Instance run(Opts{{"cache_dir", dir}});
        const std::vector<float> got = run_matmul(run.ep, x, 4, k, HETERO_DTYPE_Q8_0, w, m);
        std::vector<float> want(got.size());
        hetero::reference::matmul_w8a8(x.data(), 4, desc(HETERO_DTYPE_Q8_0, HETERO_TENSOR_CONSTANT, m, k), w.data(), false, want.data());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0) << "no usable calibration: plain per-tensor W8A8";
    }
    plugin().outlier_stats(s1, u1, c1);
    EXPECT_EQ(u1, u0 + 1);
    EXPECT_EQ(s1, s0);
    Instance bad(Opts{{"outliers", "sometimes"}});
    EXPECT_NE(bad.status, HETERO_OK);
    EXPECT_NE(std::string(plugin().api->last_error()).find("outliers"), std::string::npos) << plugin().api->last_error();
    Instance nowhere(Opts{{"outliers", "calibrate"}, {"cache_dir", "none"}});
    EXPECT_NE(nowhere.status, HETERO_OK);
    Instance quantile(Opts{{"outlier_quantile", "1.5"}});
    EXPECT_NE(quantile.status, HETERO_OK);
    EXPECT_NE(std::string(plugin().api->last_error()).find("outlier_quantile"), std::string::npos) << plugin().api->last_error();
    std::filesystem::remove_all(dir);
}

}  // namespace
