// The schedule: a Plan cut into what each device runs in one forward of n
// tokens, as plain data. make_schedule is the one place the model graph is
// cut: the session compiles and runs its tasks, the simulator simulates
// them, `hetero plan --schedule` prints them.
//
// A task is a run of consecutive graph nodes on one device, cut where the
// device changes and before the output head; a matmul the plan splits by
// output rows is one task per row share, then a merge task on the layer's
// home that joins the shares in host memory. A tensor read outside the task
// that writes it is a hand-over: its producer (or the host, for tokens and
// positions) makes it readable in host memory and its readers take it from
// there. A device that shares the host's memory binds that memory itself,
// so nothing is copied into or out of it.
#pragma once

#include <hetero/runtime/model_graph.hpp>
#include <hetero/runtime/plan.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

enum class TaskKind : uint8_t { execute, merge };
const char* task_kind_name(TaskKind kind);

struct ScheduledTask {
    TaskKind kind = TaskKind::execute;
    size_t device = 0;          // index into Plan::devices
    std::string name;           // "layers 0-3", "layer 2 gate rows 0-95", "output head", "merge blk.2.gate"
    std::vector<size_t> nodes;  // graph nodes it runs, in order; a merge: the split matmul
    // One row share of a split matmul: its index among the matmul's shares
    // and its rows; -1 for a task that runs whole nodes.
    int share = -1;
    Share rows{};
    size_t merge_task = 0;  // a share: the merge that collects it
    // Hand-overs it reads and writes, in the order its graph binds them; a
    // merge reads its shares (in row order) and writes the merged tensor.
    std::vector<int> inputs, outputs;
    std::vector<size_t> after;  // tasks whose results it reads, on any device
};

// A tensor handed from one task to others through host memory.
struct HandOver {
    std::string name;
    int32_t tensor = -1;  // graph tensor; a share: the split matmul's output it is a part of
    uint64_t bytes = 0;
    long from_task = -1;    // -1: the host fills it (tokens, positions)
    long from_device = -1;  // -1: it is made in host memory (inputs, a merge's output)
    std::vector<size_t> to_tasks;  // other tasks that read it
    // Read back into host memory after its producer runs: read on another
    // device than the one writing it, or by the host (logits).
    bool via_host = false;
    // The output head's input (last_hidden) is the last rows of the final
    // hidden state: on its producer it is bound inside that tensor's buffer.
    int alias_of = -1;
    uint64_t alias_offset = 0;
};

// A task that, before it starts, waits until another task's hand-over is in
// host memory.
struct Wait {
    size_t task = 0, on_task = 0;
    int hand_over = -1;
};

// One device's tasks, in the order it runs them.
struct DeviceQueue {
    size_t device = 0;
    bool shares_host_memory = false;  // binds hand-overs in host memory: nothing copied in or out
    std::vector<size_t> tasks;
};

struct Schedule {
    int32_t n_tokens = 0;
    int phase = kPrefill;
    std::vector<ScheduledTask> tasks;  // in graph order
    std::vector<HandOver> hand_overs;  // graph tensors in tensor order, then the shares in task order
    std::vector<DeviceQueue> queues;   // every device the schedule uses, ascending
    std::vector<Wait> waits;           // in task order
    std::vector<int> hand_over_of;     // per graph tensor: its hand-over, -1 when it stays inside a task
    int tokens = -1, positions = -1, logits = -1;  // hand-overs the host fills and reads
    int cache_rows = -1;                           // filled by the host in a decode step over stacked caches
};

// Cuts `graph` (built for n tokens, with its head) as `plan` places it: the
// prefill placement for n > 1, the decode placement for one token.
Schedule make_schedule(const ModelGraph& graph, const Plan& plan);

// The schedule as text (tasks per device, hand-overs, waits) and as JSON.
std::string describe_schedule(const Schedule& schedule, const Plan& plan);
std::string schedule_to_json(const Schedule& schedule, const Plan& plan);

}  // namespace hetero
