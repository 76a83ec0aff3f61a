#include "cpu_info.hpp"

#include <hetero/sdk/host_cpu.hpp>
#include <hetero/sdk/provider.hpp>

#include <sys/syscall.h>
#include <unistd.h>

namespace hetero::cpu {
namespace {

#if defined(HETERO_CPU_X86)
// The CPU checks run here, in baseline code; libgcc's checks include the
// OS's XSAVE support for the wider registers.
bool has_avx2() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}
bool has_avx512() {
    return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
bool has_avx512_vnni() { return has_avx512() && __builtin_cpu_supports("avx512vnni"); }
// AMX tiles need the CPU's support and then the kernel's permission for this
// process (Linux 5.16+, arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA), asked
// once: without it the first tile instruction would fault.
bool has_amx() {
    static const bool granted = [] {
        if (!has_avx512_vnni() || !__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-int8")) return false;
        constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
        return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
    }();
    return granted;
}
#endif

}  // namespace

const char* isa_choices() {
#if defined(HETERO_CPU_X86)
    return "auto, scalar, avx2, avx512, avx512-novnni, avx512-amx";
#elif defined(HETERO_CPU_AARCH64)
    return "auto, scalar, neon";
#else
    return "auto, scalar";
#endif
}

const Kernels& select_kernels(const std::string& isa) {
    if (isa == "scalar") return kernels_scalar();
#if defined(HETERO_CPU_X86)
    auto unsupported = [&](const char* why) -> const Kernels& {
        sdk::fail(HETERO_ERR_UNSUPPORTED, "cpu: option 'isa' = '" + isa + "': " + why);
    };
    if (isa == "auto") {
        if (has_amx()) return kernels_avx512_amx();
        if (has_avx512_vnni()) return kernels_avx512_vnni();
        if (has_avx512()) return kernels_avx512();
        if (has_avx2()) return kernels_avx2();
        return kernels_scalar();
    }
    if (isa == "avx512-amx")
        return has_amx() ? kernels_avx512_amx() : unsupported("this CPU or OS offers no AMX tiles (amx-tile, amx-int8, XTILEDATA permission)");
    if (isa == "avx2") return has_avx2() ? kernels_avx2() : unsupported("this CPU lacks AVX2/FMA/F16C");
    if (isa == "avx512") {
        if (has_avx512_vnni()) return kernels_avx512_vnni();
        return has_avx512() ? kernels_avx512() : unsupported("this CPU lacks AVX-512 F/BW/VL/DQ");
    }
    // The AVX-512 table without VNNI, so tests cover it on VNNI machines too.
    if (isa == "avx512-novnni") return has_avx512() ? kernels_avx512() : unsupported("this CPU lacks AVX-512 F/BW/VL/DQ");
#elif defined(HETERO_CPU_AARCH64)
    if (isa == "auto" || isa == "neon") return kernels_neon();  // NEON is baseline on aarch64
#else
    if (isa == "auto") return kernels_scalar();
#endif
    sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "cpu: option 'isa' must be one of " + std::string(isa_choices()) + ", got '" + isa + "'");
}

bool cpu_is_intel() { return sdk::cpuinfo_value("vendor_id") == "GenuineIntel"; }

std::string cpu_model_name() {
    std::string name = sdk::cpuinfo_value("model name");
    if (name.empty()) name = sdk::cpuinfo_value("Hardware");
#if defined(HETERO_CPU_AARCH64)
    if (name.empty()) {
        const std::string part = sdk::cpuinfo_value("CPU part");
        name = part.empty() ? "aarch64 CPU" : "aarch64 CPU (part " + part + ")";
    }
#endif
    return name.empty() ? "host CPU" : name;
}

uint64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

double flops_per_cycle(const Kernels& k) {
    const std::string n = k.name;
    if (n == "avx512" || n == "avx512-vnni") return 64.0;  // 2 x 16-lane FMA (32 on double-pumped cores)
    if (n == "avx2") return 32.0;                           // 2 x 8-lane FMA
    if (n == "neon") return 16.0;                           // 2 x 4-lane FMA
    return 4.0;                                             // compiler-vectorised SSE2
}

}  // namespace hetero::cpu
