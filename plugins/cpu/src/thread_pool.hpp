// A persistent pool of worker threads for the many small ops of decoding:
// dispatching a job is a counter bump; idle workers spin briefly on it (the
// next op usually follows within microseconds) and then sleep on a futex.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hetero::cpu {

class ThreadPool {
public:
    // `threads` counts the calling thread, so threads == 1 starts no worker.
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return int(workers_.size()) + 1; }

    // Runs f(task, thread) for every task in [0, n_tasks) and returns when all
    // are done. `thread` is in [0, size()) and unique among concurrent calls of
    // f, so it can index per-thread scratch. Tasks are taken dynamically, which
    // keeps the threads balanced when another process steals a core.
    template <class F>
    void parallel_for(int64_t n_tasks, F&& f) {
        auto trampoline = [](void* ctx, int64_t task, int thread) { (*static_cast<F*>(ctx))(task, thread); };
        run(n_tasks, trampoline, &f);
    }

private:
    using TaskFn = void (*)(void* ctx, int64_t task, int thread);
    void run(int64_t n_tasks, TaskFn fn, void* ctx);
    void worker_loop(int index, uint32_t seen);
    void drain(int thread);

    std::vector<std::thread> workers_;
    std::mutex submit_;  // one job at a time; calls may come from several threads
    // Futex words: a job counter the workers wait on, and the number of
    // workers still inside the current job, which the submitter waits on.
    // The sleeper counts let the other side skip the wake-up system call
    // when nobody sleeps.
    std::atomic<uint32_t> generation_{0};
    std::atomic<uint32_t> busy_workers_{0};
    std::atomic<uint32_t> sleeping_workers_{0};
    std::atomic<uint32_t> submitter_sleeping_{0};
    std::atomic<int64_t> next_task_{0};
    std::atomic<bool> stop_{false};
    std::atomic<bool> failed_{false};
    std::string failure_;
    int64_t n_tasks_ = 0;
    TaskFn fn_ = nullptr;
    void* ctx_ = nullptr;
};

}  // namespace hetero::cpu
