// What a model needs in memory against what the devices have, as the
// solver states it when no placement fits (private to core/solver). The
// figures are totals over the whole chain, so they grow with the context
// (the KV cache) rather than depending on which layer overflowed first.
#pragma once

#include <hetero/solver/solver.hpp>

#include <string>

namespace hetero::solver_detail {

// "the model needs 119.44 GiB (weights 0.00 GiB, KV cache 119.21 GiB,
// activations about 0.23 GiB); the devices have 31.27 GiB (cpu:0 31.27 GiB)"
// and, when the total would fit, why it still does not (the largest layer).
std::string memory_shortfall(const SolverProblem& pb);

}  // namespace hetero::solver_detail
