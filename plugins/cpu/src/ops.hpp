// Execution of single graph nodes on host memory. Every op validates the
// index-like inputs (ids, positions) before any thread starts, so bad input is
// an sdk::Error and never an out-of-bounds access.
#pragma once

#include "kernels.hpp"
#include "thread_pool.hpp"

#include <hetero/ep_api.h>

#include <cstdint>
#include <vector>

namespace hetero::cpu {

// Grow-only scratch memory owned by one executable (executions of one
// executable never overlap, per the ABI).
class Scratch {
public:
    // At least `bytes` bytes, 64-byte aligned; contents undefined.
    void* get(uint64_t bytes);

private:
    std::vector<uint64_t> storage_;
};

struct OpContext {
    const Kernels& kernels;
    ThreadPool& pool;
    Scratch& scratch;
    // Per tensor id: the packed copy of a constant matmul weight, or null.
    const uint8_t* const* packed = nullptr;
};

// Tensor descriptors and data pointers of one node's graph, by tensor id.
struct NodeTensors {
    const hetero_tensor_desc* desc;
    uint8_t* const* data;
    const hetero_tensor_desc& in(const hetero_node& n, uint32_t i) const { return desc[n.inputs[i]]; }
    uint8_t* in_data(const hetero_node& n, uint32_t i) const { return data[n.inputs[i]]; }
    const hetero_tensor_desc& out(const hetero_node& n) const { return desc[n.output]; }
    uint8_t* out_data(const hetero_node& n) const { return data[n.output]; }
};

void run_node(const OpContext& ctx, const hetero_node& node, const NodeTensors& t);

// Per-op entry points (ops.cpp dispatches to them).
void run_matmul(const OpContext& ctx, const hetero_node& node, const NodeTensors& t, float* out);
void run_attention(const OpContext& ctx, const hetero_node& node, const NodeTensors& t, float* out);

// The matmul tiles over the packed layout of `dtype` weights, or null where
// this table has none or its activations do not suit them (packed K-quants
// need the Q8_K grid): compile packs exactly the weights this names.
MatmulTileFn packed_matmul_fn(const Kernels& k, uint32_t dtype);

// HETERO_DTYPE_BIT of every weight dtype the table has a matmul tile for.
uint64_t matmul_dtype_mask(const Kernels& k);

// Splits `n` items into about `tasks_per_thread` tasks per thread of at least
// `min_items` items each and runs f(begin, end, thread) over them.
template <class F>
void parallel_ranges(ThreadPool& pool, int64_t n, int64_t min_items, F&& f, int tasks_per_thread = 4) {
    if (n <= 0) return;
    int64_t per = (n + int64_t(pool.size()) * tasks_per_thread - 1) / (int64_t(pool.size()) * tasks_per_thread);
    if (per < min_items) per = min_items;
    const int64_t tasks = (n + per - 1) / per;
    pool.parallel_for(tasks, [&](int64_t task, int thread) {
        const int64_t b = task * per;
        const int64_t e = b + per < n ? b + per : n;
        f(b, e, thread);
    });
}

}  // namespace hetero::cpu
