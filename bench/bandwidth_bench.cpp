// Memory read bandwidth: N threads each sum their share of an array much
// larger than the caches. The result is the ceiling a memory-bound kernel
// (batch-1 matvec over large weights) can reach on the same threads.
//
//   bench_bandwidth [--threads=N] [google-benchmark flags]
#include "bench_threads.hpp"
#include "stream_bytes.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>


namespace {

uint64_t sum_range(const uint64_t* p, size_t n) {
    // Independent accumulators keep several loads in flight per core.
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    for (; i < n; ++i) s0 += p[i];
    return s0 + s1 + s2 + s3;
}

void BM_ReadBandwidth(benchmark::State& state, int threads) {
    static std::vector<uint64_t> data(size_t(hetero::bench::dram_stream_bytes()) / sizeof(uint64_t), 1);  // touched, so pages are real
    const size_t n = data.size(), per = n / size_t(threads);
    std::vector<uint64_t> sums(static_cast<size_t>(threads));
    for (auto _ : state) {
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t)
            pool.emplace_back([&, t] { sums[size_t(t)] = sum_range(data.data() + size_t(t) * per, per); });
        sums[0] = sum_range(data.data(), per);
        for (auto& th : pool) th.join();
        uint64_t total = 0;
        for (uint64_t s : sums) total += s;
        benchmark::DoNotOptimize(total);
    }
    state.counters["GB/s"] = benchmark::Counter(double(per * size_t(threads) * sizeof(uint64_t)) / 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate);
    state.counters["threads"] = threads;
}

}  // namespace

int main(int argc, char** argv) {
    const int threads = hetero::bench::take_threads_flag(argc, argv);
    benchmark::RegisterBenchmark("read_bandwidth", BM_ReadBandwidth, threads)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
