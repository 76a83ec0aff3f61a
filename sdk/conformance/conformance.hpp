// The provider conformance kit: runs every op of the C ABI on a provider,
// through the C ABI alone, and compares the results with hetero::reference.
// Vendors run it on their plugin without the core (see the hetero-conformance
// tool); the core's test suite runs it on every provider it finds.
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::conformance {

// How a tensor's initial contents are made (seeded, so runs repeat exactly).
struct Fill {
    enum Kind {
        Uniform,  // floats uniform in [lo, hi), stored in the tensor's dtype
        Ids,      // i32 uniform in [lo, hi)
        Values,   // i32 taken from `values`
        Garbage   // a NaN byte pattern: outputs, so an element nobody writes shows
    };
    Kind kind = Uniform;
    double lo = -1.0, hi = 1.0;
    // Uniform only: rows (of the outermost dimension) from this one on are
    // NaN bytes instead; < 0 = none. A KV cache's rows that no query may
    // read (the contract says rows 0..position), as memory that was never
    // written, or held another tensor, is on a real device.
    int64_t poison_from_row = -1;
    std::vector<int32_t> values;
};

struct TensorSpec {
    hetero_tensor_desc desc{};  // desc.name is ignored; `name` is used
    std::string name;
    Fill fill;
};

enum class CaseKind {
    Compare,          // run the graph, compare every bound output with the reference
    RejectCompile,    // compile must fail with HETERO_ERR_INVALID_ARGUMENT
    RejectExecute,    // execution must end with an error status, not a crash
    BufferRange,      // out-of-range buffer writes, reads and copies must fail
    BufferRoundTrip,  // write -> copy -> read returns the bytes written
    DeviceProps       // device_props honours the caller's struct_size; 1.1 fields are sane
};

// What a RejectExecute / RejectCompile case breaks on purpose.
enum class Fault {
    None,              // the data itself is bad (e.g. an id outside the table)
    Unbound,           // fault_tensor (a bound tensor) is left without a binding
    BindingOutOfRange, // fault_tensor is bound past the end of its buffer
    GraphStructSize,   // hetero_graph.struct_size too small
    GraphAbiMajor      // hetero_graph.abi_version of another major version
};

struct Case {
    std::string name;  // stable, e.g. "matmul/q4_0/n1_m33_k64_bias"
    CaseKind kind = CaseKind::Compare;
    std::vector<TensorSpec> tensors;
    std::vector<hetero_node> nodes;
    uint64_t seed = 0;
    Fault fault = Fault::None;
    int32_t fault_tensor = -1;
    bool packed = false;        // every bound/constant tensor in one buffer at nonzero offsets
    uint64_t buffer_bytes = 0;  // size used by the buffer cases
};

struct CaseResult {
    bool passed = false;
    bool skipped = false;  // the provider said (op_supported) it does not run this
    std::string message;   // why it failed or was skipped; for a pass, the worst error seen
    // Skipped only: the op the provider refused and the dtype that sets it
    // apart ("matmul", "q4_K"; a conversion's dtype is "f32_to_q8_0").
    std::string skip_op, skip_dtype;
    // The worst element of a compared output (index = flat element index).
    std::string tensor;
    int64_t index = -1;
    double expected = 0.0, actual = 0.0, error = 0.0, tolerance = 0.0;
};

// Every case, in a stable order with unique names.
std::vector<Case> all_cases();

// Runs one case on `device` of the provider instance `ep`. Never throws for
// provider misbehaviour (bad status, wrong numbers): that is a failed result.
CaseResult run_case(const hetero_ep_api& api, hetero_ep* ep, uint32_t device, const Case& c);

// Stable seed of a case name (FNV-1a), so a case's data never depends on order.
uint64_t seed_of(const std::string& name);

// The family a case belongs to: its name up to the first '/' ("matmul").
std::string family_of(const std::string& case_name);

// The case name as a GoogleTest-friendly identifier ("matmul/q4_0/n1" -> "matmul_q4_0_n1").
std::string identifier(const std::string& name);

}  // namespace hetero::conformance
