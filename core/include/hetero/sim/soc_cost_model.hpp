// The cost model of a SoC profile (profiles/soc/SCHEMA.md, "Time of one
// matmul"): per unit, a node's compute seconds (rate by compute type, NPU
// tiles, order and shape factors) and its bytes over the unit's own
// bandwidth; launch and synchronisation from the profile; unified memory
// (hand-overs without copies; a split's merge copies); the NPU's graph compile for
// token counts it has no prepared graph for. Every time is simulated.
#pragma once

#include <hetero/runtime/cost_model.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/sim/soc_profile.hpp>

#include <string>
#include <vector>

namespace hetero {

// One simulated device per unit named in `units` (all units when empty), in
// that order: provider nullptr, index 0, props.name = the unit's name
// ("npu"), kind, flags UNIFIED_MEMORY | SIMULATED_TIME (| STATIC_SHAPES for
// an NPU), resource "soc:<id>:<unit>", bandwidth and peak hints.
std::vector<DeviceRef> soc_devices(const SocProfile& profile, const std::vector<std::string>& units = {});

class SocCostModel final : public CostModel {
public:
    // `devices` from soc_devices (matched to units by props.name).
    SocCostModel(SocProfile profile, const std::vector<DeviceRef>& devices);

    struct Work {
        bool supported = false;
        double compute_seconds = 0;  // at the unit's rate, after tiles and penalties
        double bytes = 0;            // streamed from DRAM
        std::string op;              // the profile's op name it was asked as
    };
    // What a node costs device `device` before bandwidth is shared.
    Work work(size_t device, const OpShape& shape) const;

    // max(compute, bytes / the unit's own bandwidth); negative when refused.
    double node_seconds(size_t device, const OpShape& shape) const override;
    // The unit's launch plus one synchronisation (memory.sync_us).
    double launch_seconds(size_t device) const override;
    // 0: the units share DRAM and hand over through buffers both map (a
    // split's merge, a memcpy at memory.copy_gbs, is the simulator's to charge).
    double transfer_seconds(size_t from, size_t to, uint64_t bytes) const override;
    // A static-shape unit: the graph compile for the prefill chunk set by
    // set_prefill_chunk when it is not a prepared token count; else 0.
    double compile_seconds(size_t device) const override;
    std::string source(size_t device) const override;

    // Seconds to compile graphs of `mflop` MFLOP on a static-shape device.
    double compile_seconds_for(size_t device, double mflop) const;
    // Whether `n` tokens have a prepared graph on the device (always true for a
    // device without static shapes).
    bool prepared(size_t device, int64_t n) const;
    // The chunk the solver plans for and the matmul work of one chunk
    // (MFLOP), for compile_seconds.
    void set_prefill_chunk(int64_t tokens, double mflop);

    // Row alignment for row cuts on this device (NPU: row_align; else 32).
    int64_t row_align(size_t device) const override;
    const SocProfile& profile() const { return profile_; }
    const SocUnit& unit(size_t device) const { return profile_.units[unit_of_[device]]; }
    double bandwidth_gbs(size_t device) const { return unit(device).bandwidth_gbs.value; }

private:
    SocProfile profile_;
    std::vector<size_t> unit_of_;
    int64_t chunk_tokens_ = 0;
    double chunk_mflop_ = 0;
};

}  // namespace hetero
