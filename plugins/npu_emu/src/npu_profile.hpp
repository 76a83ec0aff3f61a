// The NPU section of a SoC profile (profiles/soc/SCHEMA.md): what the
// emulated NPU runs and the figures its time model uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::npu {

struct NpuProfile {
    std::string id, name, path;  // profile id, SoC name, file read
    double int8_gops = 0, fp16_gflops = 0, bandwidth_gbs = 0, launch_us = 0;
    std::vector<std::string> ops;  // units.npu.ops
    int64_t tile_rows = 32, tile_cols = 32, row_align = 256;
    double order_penalty_max = 1, order_knee_rows = 32, shape_penalty_max = 1;
    double graph_switch_us = 0, compile_ms_base = 0, compile_ms_per_mflop = 0;
    uint64_t map_limit_bytes = 0;
    int64_t default_chunk_tokens = 256;
    bool weight_per_tensor = false;  // weight_quant "per_tensor" (else per output channel)
    // The CPU that runs shadow outlier matmuls, and the NPU-CPU hand-over
    // (units.cpu, memory.sync_us); 0 = the profile has no CPU section.
    double cpu_fp32_gflops = 0, cpu_bandwidth_gbs = 0, cpu_launch_us = 0, sync_us = 0;

    bool runs(const std::string& op) const;
};

// `name_or_path`: a path (contains '/' or ends in .json) or a profile name
// looked up in $HETERO_SOC_PROFILE_DIR, the install tree's share/hetero/soc
// (relative to `plugin_dir`) and the source tree's profiles/soc. Throws
// sdk::Error naming the file and the JSON path of a bad or unsourced figure.
NpuProfile load_npu_profile(const std::string& name_or_path, const std::string& plugin_dir);

}  // namespace hetero::npu
