// What the host CPU offers: the kernel table for an `isa` option, and the
// descriptive facts shown in the device properties.
#pragma once

#include "kernels.hpp"

#include <cstdint>
#include <string>

namespace hetero::cpu {

// "auto" picks the best table this CPU runs; a named ISA that the CPU lacks
// is an sdk::Error naming it. Only the chosen table's code ever runs.
const Kernels& select_kernels(const std::string& isa);

// The `isa` option values this build knows, e.g. "auto, scalar, avx2, avx512".
const char* isa_choices();

std::string cpu_model_name();      // from /proc/cpuinfo, or a generic name
bool cpu_is_intel();               // /proc/cpuinfo's vendor_id is GenuineIntel
uint64_t physical_memory_bytes();  // 0 when unknown

// f32 flops per cycle per core of a kernel table (FMA width x pipes), a hint.
double flops_per_cycle(const Kernels& k);

}  // namespace hetero::cpu
