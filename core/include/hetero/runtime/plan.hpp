// Which device runs which part of the model. A plan is a chain of segments,
// each a run of consecutive layers on one device; the first segment also
// embeds the tokens and the last one computes the logits.
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/registry.hpp>

#include <functional>
#include <string>
#include <vector>

namespace hetero {

struct DeviceRef {
    Provider* provider = nullptr;
    uint32_t index = 0;
    hetero_device_props props{};
    std::string label() const;  // "cpu:0"
};

struct Segment {
    DeviceRef device;
    int layer_begin = 0, layer_end = 0;  // [begin, end)
    bool embedding = false;              // runs the token embedding first
    bool head = false;                   // runs the final norm + output projection
};

struct Plan {
    std::vector<Segment> segments;
    std::string describe() const;
};

// Every device of `providers`, in their order, that `allowed` accepts (all
// when empty). Each provider discovers its devices here if it has not yet;
// one without devices is left out, with its reason logged.
using DeviceFilter = std::function<bool(const Provider&, uint32_t index, const hetero_device_props&)>;
std::vector<DeviceRef> available_devices(const std::vector<Provider*>& providers, const DeviceFilter& allowed = {});

// Keeps the devices that can run every op the model needs (asked through
// op_supported with the model's real shapes and dtypes); each dropped device
// is logged with the provider's reason. Throws when none is left.
std::vector<DeviceRef> devices_for_model(const ModelFile& model, const std::vector<DeviceRef>& devices, int32_t n_ctx);

// Splits n_layer layers over the devices in the given order, as evenly as the
// layer count allows (devices beyond n_layer get nothing).
Plan plan_even_layers(int n_layer, const std::vector<DeviceRef>& devices);

}  // namespace hetero
