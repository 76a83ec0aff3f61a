// A persistent pool of worker threads for the many small ops of decoding:
// dispatching a job is a few atomic stores; idle workers spin briefly on the
// job word (the next op usually follows within microseconds) and then sleep
// on a futex.
//
// The submitter waits only for tasks, never for workers: a worker that is
// descheduled (the cores are shared with other processes) when a job is
// posted simply finds no task left, so it cannot stall the job.
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
    void drain(int thread, uint32_t job);
    void run_task(TaskFn fn, void* ctx, int64_t task, int thread);

    std::vector<std::thread> workers_;
    std::mutex submit_;  // one job at a time; calls may come from several threads
    uint32_t last_job_ = 0;  // guarded by submit_
    // The job word workers wait on (a futex word), and the sleeper counts that
    // let each side skip the wake-up system call when nobody sleeps.
    std::atomic<uint32_t> job_{0};
    std::atomic<uint32_t> sleeping_workers_{0};
    std::atomic<uint32_t> submitter_sleeping_{0};
    // Task claims: job id in the high half, next task in the low half, so a
    // worker still holding an old job id cannot claim a task of a newer job.
    // limit_ tags the task count with its job the same way.
    std::atomic<uint64_t> claim_{0};
    std::atomic<uint64_t> limit_{0};
    std::atomic<uint32_t> done_{0};  // tasks finished in the current job (futex word)
    std::atomic<TaskFn> fn_{nullptr};
    std::atomic<void*> ctx_{nullptr};
    std::atomic<bool> stop_{false};
    std::atomic<bool> failed_{false};
    std::string failure_;
};

}  // namespace hetero::cpu
