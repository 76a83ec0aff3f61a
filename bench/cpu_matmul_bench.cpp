// Quantized matmul of the CPU provider through the C ABI: Q4_0 and Q8_0
// weights (and every other block type: Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K ..
// Q6_K, E0M4; pick with --benchmark_filter) of M x K = 2048x2048, 8192x2048 and
// 2048x8192, batch N = 1 (decode, memory-bound) and N = 512 (prefill,
// compute-bound).
//
//   bench_cpu_matmul [--threads=N] [--isa=auto|scalar|avx2|avx512] [--decode_streams=0|1|2|4]
//                    [--decode_prefetch=auto|none|l1|l2|nta]
//                    [google-benchmark flags]
//
// The plugin comes from the build tree (HETERO_BUILD_PLUGIN_DIR) unless
// $HETERO_CPU_PLUGIN names another file. For N = 1 every iteration uses the
// next of several copies of the weights (1 GiB or twice the L3 cache in all,
// whichever is larger), so the weights stream from DRAM as in real decoding
// instead of sitting in the L3 cache.
#include "bench_harness.hpp"
#include "bench_threads.hpp"
#include "plugin_loader.hpp"
#include "stream_bytes.hpp"

#include <hetero/sdk/graph_parts.hpp>
#include <hetero/sdk/quant.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>


namespace {

using hetero::bench::LoadedProvider;

std::string g_isa = "auto";
std::string g_decode_streams = "0";  // the provider option; 0 = its automatic choice
std::string g_decode_prefetch = "auto";
int g_threads = 2;

LoadedProvider& provider() {
    static LoadedProvider p = [] {
        const char* env = std::getenv("HETERO_CPU_PLUGIN");
        const std::string path = env && *env ? env : std::string(HETERO_BUILD_PLUGIN_DIR) + "/libhetero-ep-cpu.so";
        return LoadedProvider(path, {{"threads", std::to_string(g_threads)}, {"isa", g_isa}, {"decode_streams", g_decode_streams},
                                     {"decode_prefetch", g_decode_prefetch}});
    }();
    return p;
}

struct Case {
    uint32_t dtype;
    int64_t m, k, n;
    bool operator==(const Case&) const = default;
};

// One compiled matmul per copy of the weights, plus the x and y buffers.
class MatmulRig {
public:
    explicit MatmulRig(const Case& c) : c_(c), p_(provider()) {
        const auto& api = p_.api();
        const uint64_t row = hetero::sdk::row_bytes(c.dtype, c.k);
        const uint64_t wbytes = row * uint64_t(c.m);
        std::vector<uint8_t> w(wbytes);
        std::mt19937 rng(42);
        std::uniform_real_distribution<float> dist(-1.f, 1.f);
        std::vector<float> tmp(size_t(c.k));
        for (int64_t r = 0; r < c.m; ++r) {
            for (auto& v : tmp) v = dist(rng);
            hetero::sdk::row_from_f32(c.dtype, tmp.data(), w.data() + uint64_t(r) * row, c.k);
        }
        std::vector<float> x(size_t(c.n * c.k));
        for (auto& v : x) v = dist(rng);

        const size_t copies = c.n == 1 ? size_t((hetero::bench::dram_stream_bytes() + wbytes - 1) / wbytes) : 1;
        tensors_[0] = {HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, 2, 0, {c.n, c.k, 0, 0}, "x"};
        tensors_[1] = {c.dtype, HETERO_TENSOR_CONSTANT, 2, 0, {c.m, c.k, 0, 0}, "w"};
        tensors_[2] = {HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, 2, 0, {c.n, c.m, 0, 0}, "y"};
        const hetero_node node = hetero::sdk::make_node(HETERO_OP_MATMUL, {0, 1}, 2);
        const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, 3, 1, tensors_, &node};
        for (size_t i = 0; i < copies; ++i) {
            hetero_buffer* buf = nullptr;
            p_.check(api.buffer_alloc(p_.ep(), 0, wbytes, &buf), "buffer_alloc");
            weights_.push_back(buf);
            p_.check(api.buffer_write(p_.ep(), buf, 0, w.data(), wbytes), "buffer_write");
            const hetero_binding constant{1, 0, buf, 0};
            hetero_executable* exe = nullptr;
            p_.check(api.compile(p_.ep(), 0, &g, &constant, 1, &exe), "compile");
            exes_.push_back(exe);
        }
        p_.check(api.buffer_alloc(p_.ep(), 0, x.size() * sizeof(float), &x_), "buffer_alloc");
        p_.check(api.buffer_write(p_.ep(), x_, 0, x.data(), x.size() * sizeof(float)), "buffer_write");
        p_.check(api.buffer_alloc(p_.ep(), 0, uint64_t(c.n * c.m) * sizeof(float), &y_), "buffer_alloc");
        weight_bytes_ = wbytes;
    }
    ~MatmulRig() {
        const auto& api = p_.api();
        for (auto* e : exes_) api.executable_release(p_.ep(), e);
        for (auto* b : weights_) api.buffer_release(p_.ep(), b);
        if (x_) api.buffer_release(p_.ep(), x_);
        if (y_) api.buffer_release(p_.ep(), y_);
    }
    MatmulRig(const MatmulRig&) = delete;
    MatmulRig& operator=(const MatmulRig&) = delete;

    void run() {
        const hetero_binding b[2] = {{0, 0, x_, 0}, {2, 0, y_, 0}};
        p_.check(p_.api().execute(p_.ep(), exes_[next_], b, 2, nullptr), "execute");
        next_ = (next_ + 1) % exes_.size();
    }
    const Case& which() const { return c_; }
    uint64_t weight_bytes() const { return weight_bytes_; }

private:
    Case c_;
    LoadedProvider& p_;
    hetero_tensor_desc tensors_[3];
    std::vector<hetero_buffer*> weights_;
    std::vector<hetero_executable*> exes_;
    hetero_buffer* x_ = nullptr;
    hetero_buffer* y_ = nullptr;
    uint64_t weight_bytes_ = 0;
    size_t next_ = 0;
};

// Kept between Google Benchmark's calls of one case (bench_harness.hpp).
std::unique_ptr<MatmulRig> g_rig;

void BM_Matmul(benchmark::State& state, Case c) {
    MatmulRig* rig = hetero::bench::warm_rig(state, g_rig, c);
    if (!rig) return;
    for (auto _ : state) rig->run();
    const double flops = 2.0 * double(c.n) * double(c.m) * double(c.k);
    state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["weight_GB/s"] = benchmark::Counter(double(rig->weight_bytes()) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(std::string(hetero::sdk::dtype_name(c.dtype)) + " threads=" + std::to_string(g_threads) + " isa=" + g_isa +
                   " decode_streams=" + g_decode_streams + " decode_prefetch=" + g_decode_prefetch);
}

}  // namespace

int main(int argc, char** argv) {
    g_threads = hetero::bench::take_threads_flag(argc, argv);
    hetero::bench::take_string_flags(argc, argv,
                                     {{"--isa=", &g_isa}, {"--decode_streams=", &g_decode_streams}, {"--decode_prefetch=", &g_decode_prefetch}});
    const struct { int64_t m, k; } shapes[] = {{2048, 2048}, {8192, 2048}, {2048, 8192}};
    for (uint32_t dtype : {HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_1, HETERO_DTYPE_Q5_0, HETERO_DTYPE_Q5_1, HETERO_DTYPE_IQ4_NL,
                           HETERO_DTYPE_Q2_K, HETERO_DTYPE_Q3_K, HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q5_K, HETERO_DTYPE_Q6_K, HETERO_DTYPE_E0M4})
        for (int64_t n : {int64_t(1), int64_t(512)})
            for (const auto& s : shapes) {
                const std::string name = std::string("matmul/") + hetero::sdk::dtype_name(dtype) + "/M" + std::to_string(s.m) + "xK" +
                                         std::to_string(s.k) + "/N" + std::to_string(n);
                benchmark::RegisterBenchmark(name.c_str(), BM_Matmul, Case{dtype, s.m, s.k, n})
                    ->UseRealTime()
                    ->Unit(n == 1 ? benchmark::kMicrosecond : benchmark::kMillisecond);
            }
    return hetero::bench::run_benchmarks(argc, argv, g_rig);
}
