// Attention of the CPU provider through the C ABI, one layer at a long
// cache: decode (one query row at cache rows 2,048 and 4,096, the last row
// its position), a 512-row prefill from an empty cache and a 512-row
// prefill chunk after 2,048 cached rows, for
// f32 and f16 caches, at three model shapes: Llama-2-7B (32 heads of 128,
// no grouping), TinyLlama-1.1B (32 heads, 4 KV heads of 64) and
// Llama-3.1-8B (32 heads, 8 KV heads of 128).
//
//   bench_cpu_attention [--threads=N] [--isa=auto|scalar|avx2|avx512] [--attention_chunk=ROWS]
//                       [google-benchmark flags]
//
// The plugin comes from the build tree (HETERO_BUILD_PLUGIN_DIR) unless
// $HETERO_CPU_PLUGIN names another file (an older build, for before/after
// runs). Decode cycles through copies of the caches (1 GiB or twice the L3
// cache in all), so K and V stream from DRAM as they do when a model's
// layers take turns; kv_GB/s counts the K and V rows read.
#include "bench_harness.hpp"
#include "bench_threads.hpp"
#include "plugin_loader.hpp"
#include "stream_bytes.hpp"

#include <hetero/sdk/quant.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using hetero::bench::LoadedProvider;

std::string g_isa = "auto";
std::string g_attention_chunk = "0";  // the provider option; 0 = its automatic choice
int g_threads = 2;

LoadedProvider& provider() {
    static LoadedProvider p = [] {
        const char* env = std::getenv("HETERO_CPU_PLUGIN");
        const std::string path = env && *env ? env : std::string(HETERO_BUILD_PLUGIN_DIR) + "/libhetero-ep-cpu.so";
        std::vector<std::pair<std::string, std::string>> options = {{"threads", std::to_string(g_threads)}, {"isa", g_isa}};
        // Left out at its default so that builds without the option load too.
        if (g_attention_chunk != "0") options.emplace_back("attention_chunk", g_attention_chunk);
        return LoadedProvider(path, options);
    }();
    return p;
}

struct Shape {
    const char* name;
    int64_t heads, kv_heads, hd;
};

struct Case {
    Shape shape;
    uint32_t dtype;  // of the caches
    int64_t n;       // query rows, at positions cache - n .. cache - 1
    int64_t cache;   // cache rows
    bool operator==(const Case& o) const {
        return std::strcmp(shape.name, o.shape.name) == 0 && dtype == o.dtype && n == o.n && cache == o.cache;
    }
};

// One compiled attention node; K and V in one buffer per copy.
class AttentionRig {
public:
    explicit AttentionRig(const Case& c) : c_(c), p_(provider()) {
        const auto& api = p_.api();
        const Shape& s = c.shape;
        const uint64_t elem = c.dtype == HETERO_DTYPE_F16 ? 2 : 4;
        cache_bytes_ = uint64_t(c.cache * s.kv_heads * s.hd) * elem;
        const uint64_t copies = c.n == 1 ? (hetero::bench::dram_stream_bytes() + 2 * cache_bytes_ - 1) / (2 * cache_bytes_) : 1;

        std::mt19937 rng(42);
        std::uniform_real_distribution<float> dist(-1.f, 1.f);
        std::vector<float> kv_f32(size_t(2 * c.cache * s.kv_heads * s.hd));
        for (auto& v : kv_f32) v = dist(rng);
        std::vector<uint8_t> kv(kv_f32.size() * elem);
        if (elem == 2) hetero::sdk::row_from_f32(HETERO_DTYPE_F16, kv_f32.data(), kv.data(), int64_t(kv_f32.size()));
        else std::memcpy(kv.data(), kv_f32.data(), kv.size());
        p_.check(api.buffer_alloc(p_.ep(), 0, copies * kv.size(), &kv_), "buffer_alloc");
        for (uint64_t i = 0; i < copies; ++i) p_.check(api.buffer_write(p_.ep(), kv_, i * kv.size(), kv.data(), kv.size()), "buffer_write");
        copies_ = copies;

        std::vector<float> q(size_t(c.n * s.heads * s.hd));
        for (auto& v : q) v = dist(rng);
        std::vector<int32_t> pos(size_t(c.n));
        for (int64_t i = 0; i < c.n; ++i) pos[size_t(i)] = int32_t(c.cache - c.n + i);
        p_.check(api.buffer_alloc(p_.ep(), 0, q.size() * sizeof(float), &q_), "buffer_alloc");
        p_.check(api.buffer_write(p_.ep(), q_, 0, q.data(), q.size() * sizeof(float)), "buffer_write");
        p_.check(api.buffer_alloc(p_.ep(), 0, pos.size() * sizeof(int32_t), &pos_), "buffer_alloc");
        p_.check(api.buffer_write(p_.ep(), pos_, 0, pos.data(), pos.size() * sizeof(int32_t)), "buffer_write");
        p_.check(api.buffer_alloc(p_.ep(), 0, q.size() * sizeof(float), &out_), "buffer_alloc");

        const uint32_t bound = HETERO_TENSOR_BOUND;
        tensors_[0] = {HETERO_DTYPE_F32, bound, 3, 0, {c.n, s.heads, s.hd, 0}, "q"};
        tensors_[1] = {c.dtype, bound, 3, 0, {c.cache, s.kv_heads, s.hd, 0}, "k_cache"};
        tensors_[2] = {c.dtype, bound, 3, 0, {c.cache, s.kv_heads, s.hd, 0}, "v_cache"};
        tensors_[3] = {HETERO_DTYPE_I32, bound, 1, 0, {c.n, 0, 0, 0}, "positions"};
        tensors_[4] = {HETERO_DTYPE_F32, bound, 3, 0, {c.n, s.heads, s.hd, 0}, "out"};
        hetero_node node{};
        node.op = HETERO_OP_ATTENTION;
        node.n_inputs = 4;
        for (int i = 0; i < 4; ++i) node.inputs[i] = i;
        node.output = 4;
        node.fparams[0] = float(1.0 / std::sqrt(double(s.hd)));
        const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, 5, 1, tensors_, &node};
        p_.check(api.compile(p_.ep(), 0, &g, nullptr, 0, &exe_), "compile");
    }
    ~AttentionRig() {
        const auto& api = p_.api();
        if (exe_) api.executable_release(p_.ep(), exe_);
        for (hetero_buffer* b : {kv_, q_, pos_, out_})
            if (b) api.buffer_release(p_.ep(), b);
    }
    AttentionRig(const AttentionRig&) = delete;
    AttentionRig& operator=(const AttentionRig&) = delete;

    void run() {
        const uint64_t at = next_ * 2 * cache_bytes_;
        const hetero_binding b[5] = {{0, 0, q_, 0}, {1, 0, kv_, at}, {2, 0, kv_, at + cache_bytes_}, {3, 0, pos_, 0}, {4, 0, out_, 0}};
        p_.check(p_.api().execute(p_.ep(), exe_, b, 5, nullptr), "execute");
        next_ = (next_ + 1) % copies_;
    }
    const Case& which() const { return c_; }
    // K and V bytes one run reads.
    uint64_t kv_bytes() const { return 2 * cache_bytes_; }

private:
    Case c_;
    LoadedProvider& p_;
    hetero_tensor_desc tensors_[5];
    hetero_buffer *kv_ = nullptr, *q_ = nullptr, *pos_ = nullptr, *out_ = nullptr;
    hetero_executable* exe_ = nullptr;
    uint64_t cache_bytes_ = 0, copies_ = 1, next_ = 0;
};

// Kept between Google Benchmark's calls of one case (bench_harness.hpp).
std::unique_ptr<AttentionRig> g_rig;

void BM_Attention(benchmark::State& state, Case c) {
    AttentionRig* rig = hetero::bench::warm_rig(state, g_rig, c);
    if (!rig) return;
    for (auto _ : state) rig->run();
    state.counters["kv_GB/s"] = benchmark::Counter(double(rig->kv_bytes()) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
    if (c.n > 1) state.counters["rows/s"] = benchmark::Counter(double(c.n), benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel("threads=" + std::to_string(g_threads) + " isa=" + g_isa + " attention_chunk=" + g_attention_chunk);
}

}  // namespace

int main(int argc, char** argv) {
    g_threads = hetero::bench::take_threads_flag(argc, argv);
    hetero::bench::take_string_flags(argc, argv, {{"--isa=", &g_isa}, {"--attention_chunk=", &g_attention_chunk}});
    const Shape shapes[] = {{"7b", 32, 32, 128}, {"1.1b", 32, 4, 64}, {"8b", 32, 8, 128}};
    const struct { int64_t n, cache; } tests[] = {{1, 2048}, {1, 4096}, {512, 512}, {512, 2560}};
    for (const Shape& s : shapes)
        for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
            for (const auto& t : tests) {
                const std::string name = std::string("attention/") + s.name + "/" + hetero::sdk::dtype_name(dtype) +
                                         (t.n == 1 ? "/decode_c" : "/prefill" + std::to_string(t.n) + "_c") + std::to_string(t.cache);
                benchmark::RegisterBenchmark(name.c_str(), BM_Attention, Case{s, dtype, t.n, t.cache})
                    ->UseRealTime()
                    ->Unit(benchmark::kMicrosecond);
            }
    return hetero::bench::run_benchmarks(argc, argv, g_rig);
}
