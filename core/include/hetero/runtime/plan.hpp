// Which device runs which part of the model: a plain value the solver
// produces, `hetero plan` prints and the session's scheduler runs.
//
// Every layer has a home device: it runs the layer's norms, rope, attention
// (and holds that layer's KV cache, in both phases) and residual adds. Each
// matmul of a layer runs on the home unless the plan moves it to another
// device or cuts it by output rows across several (a list of shares), per
// phase: prefill (chunks of more than one token) and decode (one token) may
// place matmuls differently. The embedding runs on layer 0's home; the entry
// after the last layer is the output head (final norm + output matmul).
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/device.hpp>
#include <hetero/runtime/model_graph.hpp>

#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace hetero {

// Prefill (chunks of more than one token) and decode (one token): a plan may
// place matmuls differently in each.
enum Phase : int { kPrefill = 0, kDecode = 1 };
inline constexpr int kPhases = 2;
const char* phase_name(int phase);

// Rows [row_begin, row_end) of a matmul's output computed on `device`.
struct Share {
    size_t device = 0;
    int64_t row_begin = 0, row_end = 0;
    bool operator==(const Share&) const = default;
};

struct LayerPlacement {
    size_t home = 0;  // index into Plan::devices
    // matmuls[phase][role]: where that matmul runs; absent = the home runs it whole.
    std::array<std::map<Role, std::vector<Share>>, kPhases> matmuls;
};

struct Plan {
    std::vector<DeviceRef> devices;      // the devices it may use
    std::vector<LayerPlacement> layers;  // n_layer + 1 entries; the last is the output head
    // What the solver predicted (0 when the plan was not solved): seconds of a
    // prefill of prompt_len tokens and of one decode step.
    int32_t prompt_len = 0;
    std::array<double, kPhases> predicted_seconds{};
    std::string cost_source;  // which cost model the prediction came from

    int n_layer() const { return int(layers.size()) - 1; }
    // Shares of a matmul in a phase; one share covering all `rows` on the home when the plan leaves it there.
    std::vector<Share> shares(int layer, Role role, int phase, int64_t rows) const;
    // Devices the plan actually uses (homes and shares), ascending.
    std::vector<size_t> used_devices() const;
    std::string describe() const;
    std::string to_json() const;  // the same, as JSON
};

// Every device of `providers`, in their order, that `allowed` accepts (all
// when empty). Each provider discovers its devices here if it has not yet;
// one without devices is left out, with its reason logged.
using DeviceFilter = std::function<bool(const Provider&, uint32_t index, const hetero_device_props&)>;
std::vector<DeviceRef> available_devices(const std::vector<Provider*>& providers, const DeviceFilter& allowed = {});

// Why `device` cannot run node `i` of `graph`, or "" when it can (asked
// through op_supported with the graph's real shapes and dtypes).
std::string unsupported_reason(const DeviceRef& device, const ModelGraph& graph, size_t node);

// Keeps the devices that can run every op the model needs (asked through
// op_supported with the model's real shapes and dtypes and the cache type the
// device would get); each dropped device is logged with the provider's reason.
// Throws when none is left.
std::vector<DeviceRef> devices_for_model(const ModelFile& model, const std::vector<DeviceRef>& devices, int32_t n_ctx);

// Every layer and the head on one device.
Plan plan_single_device(int n_layer, const std::vector<DeviceRef>& devices, size_t device);
// Splits n_layer layers over the devices in the given order, as evenly as the
// layer count allows (devices beyond n_layer get nothing); the head goes with
// the last layer.
Plan plan_even_layers(int n_layer, const std::vector<DeviceRef>& devices);

}  // namespace hetero
