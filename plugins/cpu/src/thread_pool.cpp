#include "thread_pool.hpp"

#include <hetero/sdk/provider.hpp>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

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

// Sleeps while *word == expected (returns at once if it already differs).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<uint32_t>& word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 0x7fffffff, nullptr, nullptr, 0);
}

// Roughly 20-50 microseconds of polling before a thread goes to sleep: long
// enough to bridge the gap between two ops of one graph, short enough not to
// burn a shared core for long.
constexpr int kSpinIterations = 2000;

}  // namespace

ThreadPool::ThreadPool(int threads) {
    // Workers start from the generation of construction, not the one they see
    // when they first run: a job may already have been submitted by then.
    const uint32_t start = generation_.load();
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i, start] { worker_loop(i, start); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    generation_.fetch_add(1);
    futex_wake_all(generation_);
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

void ThreadPool::worker_loop(int index, uint32_t seen) {
    for (;;) {
        uint32_t g = generation_.load(std::memory_order_acquire);
        for (int i = 0; g == seen && i < kSpinIterations; ++i) {
            cpu_relax();
            g = generation_.load(std::memory_order_acquire);
        }
        while (g == seen) {
            // Announce the sleep before the last check (both seq_cst): either
            // the submitter sees the announcement or this thread sees the job.
            sleeping_workers_.fetch_add(1);
            g = generation_.load();
            if (g == seen) futex_wait(generation_, seen);
            sleeping_workers_.fetch_sub(1);
            g = generation_.load();
        }
        seen = g;
        if (stop_.load()) return;
        drain(index);
        if (busy_workers_.fetch_sub(1) == 1 && submitter_sleeping_.load()) futex_wake_all(busy_workers_);
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
        busy_workers_.store(uint32_t(workers_.size()));
        generation_.fetch_add(1);
        if (sleeping_workers_.load()) futex_wake_all(generation_);
        drain(0);
        uint32_t busy = busy_workers_.load(std::memory_order_acquire);
        for (int i = 0; busy != 0 && i < kSpinIterations * 8; ++i) {
            cpu_relax();
            busy = busy_workers_.load(std::memory_order_acquire);
        }
        while (busy != 0) {
            submitter_sleeping_.store(1);
            busy = busy_workers_.load();
            if (busy != 0) futex_wait(busy_workers_, busy);
            submitter_sleeping_.store(0);
            busy = busy_workers_.load();
        }
    }
    if (failed_.load(std::memory_order_acquire)) sdk::fail(HETERO_ERR_INTERNAL, "cpu: " + failure_);
}

}  // namespace hetero::cpu
