#include "thread_pool.hpp"

#include <hetero/sdk/provider.hpp>

#include <exception>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>  // SSE2 is part of the x86-64 baseline
#endif

namespace hetero::cpu {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// Roughly 20-50 microseconds of polling before a worker goes to sleep: long
// enough to bridge the gap between two ops of one graph, short enough not to
// burn a shared core for long.
constexpr int kSpinIterations = 2000;

}  // namespace

ThreadPool::ThreadPool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::drain(int thread) {
    for (;;) {
        const int64_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
        if (task >= n_tasks_) return;
        if (failed_.load(std::memory_order_relaxed)) continue;
        try {
            fn_(ctx_, task, thread);
        } catch (const std::exception& e) {
            // Kernels validate before they run, so this is only reached on
            // something unexpected (e.g. allocation failure); report it once.
            if (!failed_.exchange(true)) failure_ = e.what();
        } catch (...) {
            if (!failed_.exchange(true)) failure_ = "unknown exception in a worker thread";
        }
    }
}

void ThreadPool::worker_loop(int index) {
    uint32_t seen = generation_.load(std::memory_order_acquire);
    for (;;) {
        uint32_t g = generation_.load(std::memory_order_acquire);
        for (int i = 0; g == seen && i < kSpinIterations; ++i) {
            cpu_relax();
            g = generation_.load(std::memory_order_acquire);
        }
        while (g == seen) {
            generation_.wait(seen, std::memory_order_acquire);
            g = generation_.load(std::memory_order_acquire);
        }
        seen = g;
        if (stop_.load(std::memory_order_acquire)) return;
        drain(index);
        if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_workers_.notify_one();
    }
}

void ThreadPool::run(int64_t n_tasks, TaskFn fn, void* ctx) {
    if (n_tasks <= 0) return;
    std::lock_guard<std::mutex> lock(submit_);
    fn_ = fn;
    ctx_ = ctx;
    n_tasks_ = n_tasks;
    failed_.store(false, std::memory_order_relaxed);
    next_task_.store(0, std::memory_order_relaxed);
    if (workers_.empty() || n_tasks == 1) {
        drain(0);
    } else {
        busy_workers_.store(int32_t(workers_.size()), std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        drain(0);
        int32_t busy = busy_workers_.load(std::memory_order_acquire);
        for (int i = 0; busy != 0 && i < kSpinIterations * 8; ++i) {
            cpu_relax();
            busy = busy_workers_.load(std::memory_order_acquire);
        }
        while (busy != 0) {
            busy_workers_.wait(busy, std::memory_order_acquire);
            busy = busy_workers_.load(std::memory_order_acquire);
        }
    }
    if (failed_.load(std::memory_order_acquire)) sdk::fail(HETERO_ERR_INTERNAL, "cpu: " + failure_);
}

}  // namespace hetero::cpu
