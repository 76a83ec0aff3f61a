// Memory read bandwidth: N threads each sum their share of an array much
// larger than the caches. The result is the ceiling a memory-bound kernel
// (batch-1 matvec over large weights) can reach on the same threads. The
// array is measured on 4 KiB pages and on 2 MiB pages (the CPU provider asks
// for the latter for its packed weights); the higher figure is the ceiling.
//
//   bench_bandwidth [--threads=N] [google-benchmark flags]
#include "bench_threads.hpp"
#include "stream_bytes.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <sys/mman.h>


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

struct FreeDeleter {
    void operator()(uint64_t* p) const { std::free(p); }
};
using Array = std::unique_ptr<uint64_t[], FreeDeleter>;

// The stream array, 2 MiB-aligned, advised onto huge pages or not, and
// touched so its pages are real.
Array make_array(size_t bytes, bool huge_pages) {
    constexpr size_t kHugePage = size_t(2) << 20;
    bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    Array a(static_cast<uint64_t*>(std::aligned_alloc(kHugePage, bytes)));
    if (!a) {
        std::fprintf(stderr, "bench_bandwidth: cannot allocate %zu bytes\n", bytes);
        std::exit(1);
    }
    madvise(a.get(), bytes, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    std::memset(a.get(), 1, bytes);
    return a;
}

// One array per page size, made on first use: the benchmark function runs
// several times while the library settles its iteration count.
const uint64_t* stream_array(size_t n, bool huge_pages) {
    static Array arrays[2];
    Array& a = arrays[huge_pages ? 1 : 0];
    if (!a) a = make_array(n * sizeof(uint64_t), huge_pages);
    return a.get();
}

void BM_ReadBandwidth(benchmark::State& state, int threads, bool huge_pages) {
    const size_t n = size_t(hetero::bench::dram_stream_bytes()) / sizeof(uint64_t);
    const uint64_t* data = stream_array(n, huge_pages);
    const size_t per = n / size_t(threads);
    std::vector<uint64_t> sums(static_cast<size_t>(threads));
    for (auto _ : state) {
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t)
            pool.emplace_back([&, t] { sums[size_t(t)] = sum_range(data + size_t(t) * per, per); });
        sums[0] = sum_range(data, per);
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
    for (const bool huge : {false, true})
        benchmark::RegisterBenchmark(huge ? "read_bandwidth/2MiB_pages" : "read_bandwidth/4KiB_pages", BM_ReadBandwidth, threads, huge)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
