// The provider's OpenCL C program, generated at build time from kernels/*.cl.
#pragma once

namespace hetero::opencl {
extern const char* const kKernelSource;
}
