// The provider's OpenCL C programs, generated at build time from kernels/*.cl
// (CMakeLists.txt lists each program's files).
#pragma once

namespace hetero::opencl {
// Every kernel but the tensor-core attention: built for each device.
extern const char* const kBaseSource;
// The tensor-core prefill attention (kernels/attention_mma.cl): one program
// per padded head dim, built when an executable first needs it.
extern const char* const kMmaAttentionSource;
}  // namespace hetero::opencl
