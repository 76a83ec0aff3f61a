// One matmul's placement inside a layer (private to core/solver): given
// the layer's home, the phase and the devices the plan may use, the best of
// leaving it whole on one device or cutting its rows across several (see
// solver.cpp for how this sits in the whole search).
#pragma once

#include <hetero/solver/solver.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace hetero::solver_detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Device sets are bit masks: device d is in `set` when bit d is.
inline bool in_set(uint32_t set, size_t d) { return (set >> d) & 1u; }

struct Split {
    double seconds = kInf;
    std::vector<Share> shares;
};

// The cheapest placement of `m` in `phase` with its layer homed on `home`,
// using only devices in `set`. Devices in `limited` (memory can bind) take
// no rows unless they are the home, so the memory the solver's DP counts
// stays exact. A forced placement is returned as it is, with its seconds.
Split best_split(const SolverProblem& pb, const SolverMatmul& m, size_t home, int phase, uint32_t set, uint32_t limited);

}  // namespace hetero::solver_detail
