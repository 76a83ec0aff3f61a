// The tensor-core prefill attention's programs of one device: one per
// instance of kMmaAttentionKernels (padded head dims 32, 64, 96, 128 and
// 256), built, or loaded from the program cache, when an executable first
// needs that instance, then shared by every later executable of the device.
// A model needs one of them, so its cold start builds one instead of five.
//
// A program that fails to build is reported once (a warning naming the
// instance and the head dim that asked for it) and not tried again: the
// executables needing it take the generic attention kernels, as the base
// program's portable kernels stand in where a driver refuses inline PTX.
#pragma once

#include "cl_device.hpp"
#include "program.hpp"

#include <array>
#include <atomic>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>

namespace hetero::opencl {

class AttentionPrograms {
public:
    // What the programs are built for. `ptx`: with inline PTX, as the base
    // program was built (else emulated).
    struct Target {
        cl_context context;
        cl_device_id device;
        const DeviceInfo& info;
        const std::string& cache_dir;
        bool ptx;
    };

    // The program holding `kernel` (an element of kMmaAttentionKernels),
    // built by the first caller while later ones needing the same instance
    // wait; null where its build failed. `head_dim` is the graph's, for the
    // warning. Thread-safe.
    const Program* get(const Target& target, const MmaAttentionKernel& kernel, int64_t head_dim);
    // Seconds get() would take now: 0 once built (or failed), a binary load
    // when the cache holds the program, else a cold build (so too while
    // another thread builds it: this never waits).
    double seconds_until_ready(const DeviceInfo& info, const MmaAttentionKernel& kernel, bool ptx, const std::string& cache_dir);
    // Whether the instance failed to build (its head dims take the generic kernels).
    bool failed(const MmaAttentionKernel& kernel) const;

private:
    struct Slot {
        std::mutex mutex;  // held while the program builds
        std::unique_ptr<Program> program;
        std::atomic<bool> failed{false};
    };
    Slot& slot(const MmaAttentionKernel& kernel);
    const Slot& slot(const MmaAttentionKernel& kernel) const;

    std::array<Slot, std::size(kMmaAttentionKernels)> slots_;
};

}  // namespace hetero::opencl
