#include "program.hpp"

#include "cl_util.hpp"

#include <algorithm>

namespace hetero::opencl {

Program::Program(cl_program p, cl_device_id dev, const std::vector<const char*>& kernels, bool from_cache, GemmConfig gemm, bool mma)
    : program_(p), gemm_(gemm), mma_(mma), from_cache_(from_cache) {
    for (const char* name : kernels) {
        cl_int err = CL_SUCCESS;
        cl_kernel k = clCreateKernel(p, name, &err);
        if (err != CL_SUCCESS) {
            clReleaseProgram(p);
            program_ = nullptr;
            sdk::fail(HETERO_ERR_COMPILE_FAILED, std::string("kernel '") + name + "' missing from the built program: " + cl_error_name(err));
        }
        size_t wg = 1;
        clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr);
        kernel_wg_[name] = std::max<size_t>(1, wg);
        // Private memory a work-item spills to: drivers reserve it for every
        // resident work-item of the device, which shows as device memory.
        cl_ulong private_bytes = 0;
        if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof private_bytes, &private_bytes, nullptr) == CL_SUCCESS &&
            private_bytes > 0)
            sdk::log(HETERO_LOG_DEBUG, "opencl", std::string("kernel ") + name + ": " + std::to_string(private_bytes) + " bytes of private memory");
        clReleaseKernel(k);
    }
}

Program::~Program() {
    if (program_) clReleaseProgram(program_);
}

size_t Program::group_size(const char* kernel, size_t cap) const {
    auto it = kernel_wg_.find(kernel);
    // A kernel missing from the checked list would silently run one work-item a group.
    if (it == kernel_wg_.end()) sdk::fail(HETERO_ERR_INTERNAL, std::string("kernel '") + kernel + "' is not among the program's checked kernels");
    const size_t limit = std::min(cap, it->second);
    size_t s = 1;
    while (s * 2 <= limit) s *= 2;
    return s;
}

}  // namespace hetero::opencl
