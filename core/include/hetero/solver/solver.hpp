// The partition solver, on an abstract problem: a chain of layers, each with
// work that must run on one "home" device (norms, rope, attention next to its
// KV cache, residual adds) and matmuls that may run on the home, move whole
// to another device, or be cut by output rows across several devices
// (HeteroLLM's row-cutting, generalised to N devices).
//
// Objective (seconds):
//   sum over devices used of compile_seconds
//   + sum over phases p of weight[p] * T_p,
//   T_p = sum over layers l of ( home[l][home_l][p]
//                                + handoff(home_{l-1}, home_l, p)
//                                + sum over matmuls j of split_p(l, j) ),
//   split_p(l, j) = max over resources R of ( sum over devices d in R with rows r_d > 0 of
//                      seconds(d, p, r_d) + (d != home_l ? copy_seconds(home_l, d, p, r_d) : 0) )
//                   + (any r_d > 0 with d != home_l ? away_seconds(home_l, p) : 0),
// the rows of each split summing to the matmul's rows, each cut aligned to the
// coarsest row_align of the devices involved (the last share takes the
// remainder). Devices with the same `resource` run on the same silicon, so
// their work adds up instead of overlapping. Memory: a device's memory_bytes
// (0 = unlimited) must hold home_bytes of every layer homed there plus the
// weight bytes of every matmul row share it takes.
//
// solve() is exact for this objective (a dynamic programme over the layer
// chain; tests compare it with exhaustive search).
#pragma once

#include <hetero/runtime/model_graph.hpp>
#include <hetero/runtime/plan.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hetero {

struct SolverDevice {
    std::string label;              // "cpu:0", for messages
    int resource = 0;               // equal = same silicon (contend)
    uint64_t memory_bytes = 0;      // 0 = unlimited
    double compile_seconds = 0;     // one-off cost when the plan uses the device at all
    int64_t row_align = 32;         // row cuts on this device are multiples of this
};

struct SolverMatmul {
    Role role = Role::q;
    std::string key;           // matmuls with equal keys (and equal layer constraints) cost the same; used to memoise
    int64_t rows = 0;          // output width M (weight rows)
    uint64_t weight_bytes = 0; // bytes of all rows
    // Compute seconds of `rows` rows on `device` in `phase`; < 0 = the device cannot.
    std::function<double(size_t device, int phase, int64_t rows)> seconds;
    // Extra seconds when `device` (!= home) takes `rows` rows: input to it,
    // rows back to the home, one synchronisation.
    std::function<double(size_t home, size_t device, int phase, int64_t rows)> copy_seconds;
    // Serial seconds the home pays once when any share runs elsewhere: its
    // stream is cut to hand the input out and to take the rows back (more
    // round trips on the home), and the shares are merged. May be empty (0).
    std::function<double(size_t home, int phase)> away_seconds;
    // Non-empty: this placement is fixed (a pin or a forced split), in every phase.
    std::vector<Share> forced;
};

struct SolverLayer {
    // home[d][p]: seconds of the layer's non-matmul work on device d in phase p; < 0 = cannot.
    std::vector<std::array<double, kPhases>> home;
    uint64_t home_bytes = 0;  // memory the home holds: non-matmul weights + KV cache
    uint64_t cache_bytes = 0; // the KV cache's part of home_bytes (for the out-of-memory message)
    std::vector<SolverMatmul> matmuls;
};

struct SolverProblem {
    std::vector<SolverDevice> devices;
    std::vector<SolverLayer> layers;  // the chain, in order (the head is the last entry)
    // Seconds to hand the hidden state from one layer's home to the next's; 0 when equal.
    std::function<double(size_t from, size_t to, int phase)> handoff_seconds;
    std::array<double, kPhases> weight{1.0, 1.0};  // how often each phase runs
    bool allow_splits = true;                       // false: each matmul on one device (home or another)
    bool allow_moves = true;                        // false: matmuls run on their layer's home (unless forced)
    // Working buffers of one step (hidden states, scores, logits), estimated:
    // stated in the out-of-memory message, not placed.
    uint64_t activation_bytes = 0;
};

struct SolverLayerResult {
    size_t home = 0;
    // placement[p][j]: shares of matmul j in phase p (one share = whole on one device).
    std::array<std::vector<std::vector<Share>>, kPhases> placement;
};

struct SolverResult {
    std::vector<SolverLayerResult> layers;
    double objective = 0;                  // the minimised value
    std::array<double, kPhases> phase_seconds{};  // T_p (unweighted)
    double compile_seconds = 0;
};

// Throws hetero::Error when no placement is feasible; when memory is what
// prevents it, the message states the whole need (weights, KV cache,
// activations) and every limited device's memory.
SolverResult solve(const SolverProblem& problem);

// Evaluates the objective of a given assignment (the same formula solve()
// minimises); throws hetero::Error when it breaks a constraint.
SolverResult evaluate(const SolverProblem& problem, const std::vector<SolverLayerResult>& layers);

// The seconds one split of one matmul costs in `phase` with its layer homed on `home`.
double split_seconds(const SolverProblem& problem, const SolverMatmul& m, size_t home, int phase, const std::vector<Share>& shares);

}  // namespace hetero
