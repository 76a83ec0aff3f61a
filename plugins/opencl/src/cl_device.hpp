// One OpenCL device of a provider instance: what it reports (queried when the
// provider discovers its devices), and, created by the first call that needs them, its
// context and in-order queue and the provider's programs built for it: the
// base program, and each tensor-core attention instance an executable needs
// (attention_programs.hpp).
#pragma once

#include "buffer_pool.hpp"
#include "pinned_flags.hpp"
#include "planar_weights.hpp"
#include "program.hpp"

#include <CL/cl.h>
#include <hetero/ep_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hetero::opencl {

struct DeviceInfo {
    std::string name, vendor, driver_version, platform_name, platform_version, extensions;
    cl_device_type type = 0;
    uint64_t global_mem = 0;
    uint64_t max_alloc = 0;
    uint64_t local_mem = 0;
    uint32_t compute_units = 0;
    uint32_t clock_mhz = 0;
    size_t max_wg = 1;
    bool unified_memory = false;
    bool fp16 = false;
    bool correctly_rounded_div_sqrt = false;
    uint32_t subgroup_size = 0;
    // NVIDIA compute capability 8.0 or later: kernels may use inline PTX
    // (NV_PTX): mma.sync on tensor cores (kernels/gemm_mma.cl,
    // attention_mma.cl) and warp shuffles.
    bool tensor_cores = false;
    // The physical device, for hetero_device_props.resource: the UUID
    // (cl_khr_device_uuid; Vulkan reports the same one for the same GPU) or
    // the PCI address (cl_khr_pci_bus_info) where the driver gives them.
    uint32_t vendor_id = 0;
    bool has_uuid = false;
    uint8_t uuid[16]{};
    bool has_pci = false;
    uint32_t pci_domain = 0, pci_bus = 0, pci_device = 0, pci_function = 0;
};

// HETERO_CL_MMA: unset or "1" runs Q4_0/Q8_0 prefill GEMMs and f16-cache
// prefill attention on tensor cores where the device has them; "0" never;
// "emulate" runs those kernels on any device with plain arithmetic in place
// of the mma instructions (for tests).
enum class MmaMode { Auto, Off, Emulate };
MmaMode mma_mode();

// GGUF's other block types and hetero's E0M4 (kernels/quant_other.cl:
// dequantized quad by quad), llama-quantize's fallbacks among them.
inline bool other_quant_type(uint32_t dtype) {
    return dtype == HETERO_DTYPE_Q4_1 || dtype == HETERO_DTYPE_Q5_0 || dtype == HETERO_DTYPE_Q5_1 || dtype == HETERO_DTYPE_IQ4_NL ||
           dtype == HETERO_DTYPE_Q2_K || dtype == HETERO_DTYPE_Q3_K || dtype == HETERO_DTYPE_E0M4;
}

// Weight dtypes whose decode matvecs fuse (the RMSNORM before, the SwiGLU
// after a gate/up pair, Q/K/V grouped into one launch) and that have
// tensor-core GEMMs. Q4_0, Q8_0 and the K-quants also have planar decode
// kernels (the rope_store fused too); the other types run the fusions on
// their plain matvec.
inline bool fused_weight_type(uint32_t dtype) {
    return dtype == HETERO_DTYPE_Q4_0 || dtype == HETERO_DTYPE_Q8_0 || dtype == HETERO_DTYPE_Q4_K || dtype == HETERO_DTYPE_Q5_K ||
           dtype == HETERO_DTYPE_Q6_K || other_quant_type(dtype);
}

// Weight dtypes with a tensor-core GEMM (gemm_mma_*).
inline bool mma_weight_type(uint32_t dtype) { return fused_weight_type(dtype); }

// Tiling of the tensor-core GEMMs (kernels/gemm_mma.cl; passed to them as
// MMA_WARPS_N/M and MMA_FRAGS_N/M): a work-group of warps_n x warps_m warps,
// each computing frags_n mma tiles of 16 activation rows by frags_m tiles of
// 8 weight rows. HETERO_CL_MMA_WARPS=N,M[,FN,FM] tries others (see
// mma_tiling() for the limits). The default, 4 x 1 warps of 32 x 64 (a
// tile of 128 x 64 from 128 work-items), was the fastest at 7B on an H200
// (driver 580; x copied by cp.async, work-groups in n order; pp512 tok/s,
// same run): Llama-7B shape Q4_0 12,208-12,248 against 11,411-11,471 (4,2,
// 2,4: the same tile from 8 warps of 32 x 32) and 11,383-11,387 (2,2,4,4:
// 4 warps of 64 x 32); Q8_0 11,339-11,591 against 10,158-10,220 and
// 11,625-11,797. At 1.1B (fewer tiles) 8 warps fill the GPU better:
// TinyLlama Q4_0 47,222-47,277 against 47,884-48,130 and 44,165-44,425.
// Tiles of 64 x 128 (weight rows doubled, so x is read from L2 half as
// often) were slower in another run: Q4_0 10,398 (2,4,2,4) and 11,525
// (2,2,2,8) against 12,127; Q8_0 10,284 and 11,004 against 11,600.
// Earlier (H100, registers for x): 4,2,2,4 ahead of 2,2,4,4, 2,4,2,4,
// 2,4,4,4 and 2,2,2,8; 4,4,2,4 (512 work-items) ran 4x slower.
// HETERO_CL_LDMATRIX=0 has the fragments loaded a word at a time instead of
// by ldmatrix (for diagnosis; about as fast there).
struct MmaTiling {
    int warps_n = 4, warps_m = 1, frags_n = 2, frags_m = 8;
    size_t group() const { return size_t(32 * warps_n * warps_m); }
    int64_t tile_n() const { return 16 * int64_t(frags_n) * warps_n; }  // activation rows
    int64_t tile_m() const { return 8 * int64_t(frags_m) * warps_m; }   // weight rows
};
const MmaTiling& mma_tiling();
// The order of the tensor-core GEMM's work-groups (HETERO_CL_MMA_ORDER): n
// (the default) runs the activation tiles of one weight tile together, so
// the weights are read from memory once; m the weight tiles of one
// activation tile. n was 2.5-6 % faster at 7B (Q4_0 11,199-11,291 -> 11,474-
// 11,506, Q8_0 9,537-9,641 -> 10,263 at 4,2,2,4 on an H200), even at 1.1B.
bool mma_n_fastest();
// The tensor-core prefill attention (kernels/attention_mma.cl): one kernel
// per padded head dim, each a program of its own built when an executable
// first needs it (AttentionPrograms), which takes every head dim up to it
// above the one before (the real one is an argument; the tiles' columns past
// it are zeros, and whole 16-column steps past it are skipped, so a head dim
// pays for its own columns rounded up to 16). Each has its query rows of one
// head per work-group (16 per warp) and keys per tile (passed as AM_ROWS and
// AM_KEYS with AM_HD).
struct MmaAttentionKernel {
    int64_t head_dim;
    int64_t rows;
    int64_t keys;
    const char* name;
    size_t group() const { return size_t(32 * rows / 16); }
    // Local memory on NVIDIA: two buffers of K and V tiles (rows of
    // head_dim + 8 halves), the rows' positions, and some room.
    uint64_t local_bytes() const { return uint64_t(2 * 2 * keys * (head_dim + 8) * 2 + 2 * rows * 4 + 1024); }
};
// Five kernels, of which a model's cold start builds the one its head dim
// takes (when it first runs a prefill on tensor cores). What a head dim
// below its kernel's costs is registers and local memory for the padding
// (the O accumulator is head_dim / 2 floats a lane, Q's fragments
// head_dim / 4 words), not work. 32 (small models), 64 and 128 (most) are
// exact; 96 takes 72, 80 (Phi-2) and 96 (Phi-3); 256 (Gemma) takes 160 and
// 192. Keys per tile: as many (64, 32, 16) as keep the two buffers within
// 36 KiB of the 48 KiB NVIDIA gives a work-group (20, 36, 26, 34 and 33
// KiB); at head dim 256, 16 keys and so at most 32 rows, as Q is staged in
// the second buffer before its fragments become registers (rows <= 2 *
// keys).
inline constexpr MmaAttentionKernel kMmaAttentionKernels[] = {
    {32, 64, 64, "attention_mma_hd32"},  {64, 64, 64, "attention_mma_hd64"},   {96, 64, 32, "attention_mma_hd96"},
    {128, 64, 32, "attention_mma_hd128"}, {256, 32, 16, "attention_mma_hd256"},
};
// The kernel for a head dim (the smallest that takes it), or null where none
// does (above 256).
inline const MmaAttentionKernel* mma_attention_kernel(int64_t head_dim) {
    if (head_dim < 1) return nullptr;
    for (const MmaAttentionKernel& k : kMmaAttentionKernels)
        if (head_dim <= k.head_dim) return &k;
    return nullptr;
}

// HETERO_CL_PROFILE=1: queues are created with profiling on and executables
// time every kernel, logging the totals when they are released.
bool profiling_enabled();

// Scores the attention kernel keeps in local memory per chunk of keys.
inline constexpr int kAttentionChunk = 512;
// The prefill attention kernel (attention_tiled): cache rows per key/value
// tile, and head dims per work-item (a row's slice; wider heads take several).
inline constexpr int kAttentionTileKeys = 32;
inline constexpr int kAttentionSlice = 64;

class AttentionPrograms;

class ClDevice {
public:
    // Reads the device's properties; creates nothing on the device.
    ClDevice(cl_platform_id platform, cl_device_id device);
    ~ClDevice();
    ClDevice(const ClDevice&) = delete;
    ClDevice& operator=(const ClDevice&) = delete;

    const DeviceInfo& info() const { return info_; }
    // Everything but compile_seconds_hint (see compile_seconds_hint()).
    void fill_props(hetero_device_props& props) const;
    // "host" for a CPU device, else the GPU's UUID or PCI address, else its
    // vendor id and name (see sdk/device_resource.hpp).
    std::string resource() const;
    // Seconds before a typical model's first executables run: the base
    // program (until program(cache_dir, gemm) has returned) plus, where
    // prefill attention runs on tensor cores, one attention instance (the
    // one a model needs is not known here: the cheapest, as a device that has
    // one built or cached most likely runs that model again). Each counts 0
    // once built, a binary load when the cache holds it, else a cold build.
    double compile_seconds_hint(const std::string& cache_dir, const GemmConfig* gemm = nullptr);
    // The GEMM tiling program(cache_dir, gemm) uses (known before it is built).
    GemmConfig gemm_config(const GemmConfig* gemm = nullptr) const;
    // Whether the program's quantized prefill GEMMs and attention run on
    // tensor cores (known before it is built, as program() would decide).
    bool plans_mma() const;
    cl_device_id id() const { return device_; }
    // The context and queue, created by the first call (thread-safe). A
    // failure throws sdk::Error and leaves them uncreated, so a later call
    // tries again.
    cl_context context() const {
        open();
        return context_;
    }
    cl_command_queue queue() const {
        open();
        return queue_;
    }
    // The provider's program for this device; built (or loaded from the cache
    // in `cache_dir`) by the first caller. `gemm` overrides the GEMM tiling
    // chosen from the device limits. Thread-safe.
    const Program& program(const std::string& cache_dir, const GemmConfig* gemm = nullptr);
    // The program of the tensor-core attention instance `kernel` (an element
    // of kMmaAttentionKernels), built, or loaded from the cache program()
    // used, on first need and shared after; null where it failed to build
    // (then logged once, naming it and `head_dim`). Only after program(),
    // and only where it has mma(). Thread-safe.
    const Program* attention_program(const MmaAttentionKernel& kernel, int64_t head_dim);
    // False once the instance failed to build (the estimate then takes the
    // generic kernels).
    bool attention_program_usable(const MmaAttentionKernel& kernel) const;
    // Planar copies of constant quantized weights (see planar_weights.hpp).
    PlanarWeightCache& planar_weights() { return planar_weights_; }
    // Blocks buffers are carved from (opens the context like context()).
    const std::shared_ptr<BufferPool>& buffer_pool() const {
        open();
        return buffer_pool_;
    }
    // Pinned host slots the executables read their error flags into.
    PinnedFlagSlots& flag_slots() { return flag_slots_; }

private:
    // A context costs milliseconds to create (about 5 ms on PoCL), so
    // listing devices does not create one.
    void open() const {
        if (!opened_.load(std::memory_order_acquire)) open_slow();
    }
    void open_slow() const;

    DeviceInfo info_;
    cl_platform_id platform_;
    cl_device_id device_;
    mutable std::mutex open_mutex_;
    mutable std::atomic<bool> opened_{false};  // set once context_ and queue_ are valid
    mutable cl_context context_ = nullptr;
    mutable cl_command_queue queue_ = nullptr;
    mutable std::shared_ptr<BufferPool> buffer_pool_;
    std::mutex program_mutex_;
    std::unique_ptr<Program> program_;
    bool program_ptx_ = false;  // program_ was built with inline PTX
    std::string cache_dir_;     // where program_ was cached; the attention programs go there too
    std::unique_ptr<AttentionPrograms> attention_programs_;
    PlanarWeightCache planar_weights_;
    PinnedFlagSlots flag_slots_;
};

enum class DeviceTypes { All, Gpu, Cpu, Accelerator };

// Every usable device of every platform whose name contains `platform_filter`
// (case-insensitive; empty = any). Loads the OpenCL drivers. Throws
// sdk::Error naming the reason (no platform, nothing matching) when the list
// would be empty.
std::vector<std::unique_ptr<ClDevice>> enumerate_devices(DeviceTypes types, const std::string& platform_filter);

}  // namespace hetero::opencl
