// A buffer of one OpenCL device. Imported host memory keeps its pointer so
// the host can reach the bytes without a map.
#pragma once

#include <CL/cl.h>
#include <hetero/sdk/provider.hpp>

namespace hetero::opencl {

class ClBuffer final : public sdk::Buffer {
public:
    ClBuffer(uint32_t device, uint64_t size, cl_mem mem, void* host) : sdk::Buffer(device, size), mem_(mem), host_(host) {}
    ~ClBuffer() override { clReleaseMemObject(mem_); }
    ClBuffer(const ClBuffer&) = delete;
    ClBuffer& operator=(const ClBuffer&) = delete;
    cl_mem mem() const { return mem_; }
    void* host() const { return host_; }

private:
    cl_mem mem_;
    void* host_;
};

inline cl_mem mem_of(const sdk::Buffer* b) { return static_cast<const ClBuffer*>(b)->mem(); }

}  // namespace hetero::opencl
