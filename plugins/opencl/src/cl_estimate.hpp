// op_supported's time estimate for the OpenCL provider: the SDK's roofline
// (sdk/roofline.hpp) over the device's props, scaled by what this provider's
// kernels reach on that kind of device. The kernels are written for GPUs: on
// a CPU device (PoCL) they reach a few percent of its peak.
#pragma once

#include "cl_device.hpp"

#include <hetero/ep_api.h>

namespace hetero::opencl {

// Seconds `node` takes on `device`, whose props are `props` (for the peak and
// bandwidth hints), with the GEMM tiling `gemm` and tensor-core kernels when
// `mma`.
double estimate_seconds(const ClDevice& device, const hetero_device_props& props, const GemmConfig& gemm, bool mma,
                        const hetero_node& node, const hetero_tensor_desc* tensors);

}  // namespace hetero::opencl
