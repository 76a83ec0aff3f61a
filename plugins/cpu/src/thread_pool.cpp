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

constexpr uint64_t tagged(uint32_t job, uint32_t value) { return (uint64_t(job) << 32) | value; }

}  // namespace

ThreadPool::ThreadPool(int threads) {
    // Workers start from the job of construction, not the one they see when
    // they first run: a job may already have been submitted by then.
    const uint32_t start = job_.load();
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i, start] { worker_loop(i, start); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    job_.fetch_add(1);
    futex_wake_all(job_);
    for (auto& t : workers_) t.join();
}

void ThreadPool::run_task(TaskFn fn, void* ctx, int64_t task, int thread) {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
        fn(ctx, task, thread);
    } catch (const std::exception& e) {
        // Kernels validate before they run, so this is only reached on
        // something unexpected (e.g. allocation failure); report it once.
        if (!failed_.exchange(true)) failure_ = e.what();
    } catch (...) {
        if (!failed_.exchange(true)) failure_ = "unknown exception in a worker thread";
    }
}

void ThreadPool::drain(int thread, uint32_t job) {
    for (;;) {
        uint64_t c = claim_.load(std::memory_order_acquire);
        if (uint32_t(c >> 32) != job) return;
        const uint64_t l = limit_.load(std::memory_order_acquire);
        if (uint32_t(l >> 32) != job) return;
        const uint32_t n = uint32_t(l);
        if (uint32_t(c) >= n) return;
        // Read before the claim: a successful claim proves the job was still
        // open, so these are this job's values.
        const TaskFn fn = fn_.load(std::memory_order_relaxed);
        void* const ctx = ctx_.load(std::memory_order_relaxed);
        if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
        run_task(fn, ctx, int64_t(uint32_t(c)), thread);
        if (done_.fetch_add(1) + 1 == n && submitter_sleeping_.load()) futex_wake_all(done_);
    }
}

void ThreadPool::worker_loop(int index, uint32_t seen) {
    for (;;) {
        uint32_t j = job_.load(std::memory_order_acquire);
        for (int i = 0; j == seen && i < kSpinIterations; ++i) {
            cpu_relax();
            j = job_.load(std::memory_order_acquire);
        }
        while (j == seen) {
            // Announce the sleep before the last check (both seq_cst): either
            // the submitter sees the announcement or this thread sees the job.
            sleeping_workers_.fetch_add(1);
            j = job_.load();
            if (j == seen) futex_wait(job_, seen);
            sleeping_workers_.fetch_sub(1);
            j = job_.load();
        }
        seen = j;
        if (stop_.load()) return;
        drain(index, j);
    }
}

void ThreadPool::run(int64_t n_tasks, TaskFn fn, void* ctx) {
    if (n_tasks <= 0) return;
    if (n_tasks >= int64_t(1) << 31) sdk::fail(HETERO_ERR_INTERNAL, "cpu: too many tasks in one parallel job");
    std::lock_guard<std::mutex> lock(submit_);
    failed_.store(false, std::memory_order_relaxed);
    if (workers_.empty() || n_tasks == 1) {
        for (int64_t t = 0; t < n_tasks; ++t) run_task(fn, ctx, t, 0);
    } else {
        const uint32_t job = ++last_job_;
        const uint32_t n = uint32_t(n_tasks);
        fn_.store(fn, std::memory_order_relaxed);
        ctx_.store(ctx, std::memory_order_relaxed);
        done_.store(0, std::memory_order_relaxed);
        limit_.store(tagged(job, n), std::memory_order_release);
        claim_.store(tagged(job, 0), std::memory_order_release);
        job_.store(job);
        if (sleeping_workers_.load()) futex_wake_all(job_);
        drain(0, job);
        uint32_t done = done_.load(std::memory_order_acquire);
        for (int i = 0; done != n && i < kSpinIterations * 8; ++i) {
            cpu_relax();
            done = done_.load(std::memory_order_acquire);
        }
        while (done != n) {
            submitter_sleeping_.store(1);
            done = done_.load();
            if (done != n) futex_wait(done_, done);
            submitter_sleeping_.store(0);
            done = done_.load();
        }
    }
    if (failed_.load(std::memory_order_acquire)) sdk::fail(HETERO_ERR_INTERNAL, "cpu: " + failure_);
}

}  // namespace hetero::cpu
