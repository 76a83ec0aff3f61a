// What the Vulkan provider predicts about a device: the hints of
// hetero_device_props that Vulkan itself does not report (peak, bandwidth,
// the physical resource, launch and compile costs) and op_supported's time
// estimate, the SDK's roofline (sdk/roofline.hpp) scaled by what this
// provider's shaders reach on that kind of device.
#pragma once

#include "vk_device.hpp"

#include <hetero/ep_api.h>

namespace hetero::vk {

// Fills the performance fields of `p`: peak_gflops, peak_bandwidth_gbs,
// compute_units, resource, launch_seconds_hint, compile_seconds_hint.
void fill_performance_hints(const DeviceInfo& info, hetero_device_props& p);

// Seconds `node` takes on the device `info` describes, whose props are `props`.
double estimate_seconds(const DeviceInfo& info, const hetero_device_props& props, const hetero_node& node,
                        const hetero_tensor_desc* tensors);

}  // namespace hetero::vk
