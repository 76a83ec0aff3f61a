// How long things take on a device: the solver's only view of the hardware,
// and what a session's trace shows as each task's predicted time (so the
// interface lives with the runtime, below the solver). Implementations:
// PriorCostModel (a roofline from hetero_device_props and the providers'
// op_supported estimates, for a first run with no profile;
// solver/prior_cost_model.hpp), ProfiledCostModel (measured tables,
// piecewise-linear in the token count; profile/profile.hpp) and the
// simulator's SocCostModel (sim/soc_cost_model.hpp).
#pragma once

#include <hetero/runtime/model_graph.hpp>
#include <hetero/runtime/plan.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace hetero {

class CostModel {
public:
    virtual ~CostModel() = default;
    // Seconds device `device` (an index into the devices the model was made
    // for) spends on one node of this shape, launch overhead excluded;
    // negative = the device cannot run it.
    virtual double node_seconds(size_t device, const OpShape& shape) const = 0;
    // Seconds of one execute whose completion the host waits for, beyond its
    // nodes' time: submission plus one synchronisation.
    virtual double launch_seconds(size_t device) const = 0;
    // Seconds one executable of a chunk of n tokens costs beyond its nodes'
    // time as a session runs it (launch_seconds plus the session's own
    // per-execute work, where a profile has measured it).
    virtual double execute_seconds(size_t device, int64_t /*n*/) const { return launch_seconds(device); }
    // Seconds to move `bytes` from one device's memory to another's (through
    // the host when they differ; ~0 when both share the host's memory).
    virtual double transfer_seconds(size_t from, size_t to, uint64_t bytes) const = 0;
    // One-off seconds before a device runs its first executable for a model
    // (kernel builds, graph compiles); 0 when cached or negligible.
    virtual double compile_seconds(size_t device) const = 0;
    // Where this device's figures come from, e.g. "profile (measured 2026-11-24)"
    // or "prior (roofline from device props)".
    virtual std::string source(size_t device) const = 0;
    // Row cuts of a matmul on this device are multiples of this (an NPU's
    // weight-row alignment, HeteroLLM §4.3).
    virtual int64_t row_align(size_t /*device*/) const { return 32; }
};

// The physical resource each device runs on: devices with equal ids share
// compute units and memory bandwidth (the CPU provider, PoCL's CPU device and
// lavapipe all run on the host's cores). From hetero_device_props.resource
// (ABI 1.1) where the provider fills it, else from kind + unified memory.
std::vector<int> resource_ids(const std::vector<DeviceRef>& devices);

}  // namespace hetero
