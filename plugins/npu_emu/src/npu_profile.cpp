#include "npu_profile.hpp"

#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/soc_profile_reader.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace hetero::npu {

namespace {

namespace fs = std::filesystem;

std::string find_profile(const std::string& name, const std::string& plugin_dir) {
    const bool is_path = name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".json");
    if (is_path) return name;
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("HETERO_SOC_PROFILE_DIR"); env && *env) dirs.emplace_back(env);
    if (!plugin_dir.empty()) dirs.push_back(fs::path(plugin_dir) / ".." / ".." / ".." / "share" / "hetero" / "soc");
    dirs.push_back(fs::path(HETERO_SOURCE_DIR) / "profiles" / "soc");
    std::error_code ec;
    for (const fs::path& d : dirs)
        if (fs::is_regular_file(d / (name + ".json"), ec)) return (d / (name + ".json")).lexically_normal().string();
    std::string looked;
    for (const fs::path& d : dirs) looked += (looked.empty() ? "" : ", ") + d.lexically_normal().string();
    sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "npu_emu: no SoC profile named '" + name + "' (looked in " + looked + ")");
}

}  // namespace

bool NpuProfile::runs(const std::string& op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

NpuProfile load_npu_profile(const std::string& name_or_path, const std::string& plugin_dir) {
    NpuProfile p;
    p.path = find_profile(name_or_path, plugin_dir);
    std::error_code ec;
    if (!fs::is_regular_file(p.path, ec)) sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "npu_emu: SoC profile " + p.path + " is not a regular file");
    // The simulator's strict reader: every figure sourced and in range, no
    // repeated key, so the provider and `hetero simulate` never disagree on a file.
    sdk::SocProfile soc;
    try {
        soc = sdk::load_soc_profile_file(p.path);
    } catch (const std::runtime_error& e) {
        sdk::fail(HETERO_ERR_INVALID_ARGUMENT, std::string("npu_emu: ") + e.what());
    }
    const sdk::SocUnit* npu = soc.find_unit("npu");
    if (!npu || !npu->has_npu) sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "npu_emu: SoC profile " + p.path + ": units.npu: missing: this SoC has no NPU unit");
    p.id = soc.id;
    p.name = soc.name.empty() ? soc.id : soc.name;
    p.int8_gops = npu->int8_gops.value;
    p.fp16_gflops = npu->fp16_gflops.value;
    p.bandwidth_gbs = npu->bandwidth_gbs.value;
    p.launch_us = npu->launch_us.value;
    p.ops.assign(npu->ops.begin(), npu->ops.end());
    const sdk::SocNpu& n = npu->npu;
    p.tile_rows = int64_t(n.tile_rows.value);
    p.tile_cols = int64_t(n.tile_cols.value);
    p.row_align = int64_t(n.row_align.value);
    p.order_penalty_max = n.order_penalty_max.value;
    p.order_knee_rows = n.order_knee_rows.value;
    p.shape_penalty_max = n.shape_penalty_max.value;
    p.graph_switch_us = n.graph_switch_us.value;
    p.compile_ms_base = n.compile_ms_base.value;
    p.compile_ms_per_mflop = n.compile_ms_per_mflop.value;
    p.map_limit_bytes = uint64_t(n.map_limit_bytes.value);
    p.default_chunk_tokens = int64_t(n.default_chunk_tokens.value);
    p.weight_per_tensor = n.weight_quant == "per_tensor";
    if (const sdk::SocUnit* cpu = soc.find_unit("cpu")) {
        p.cpu_fp32_gflops = cpu->fp32_gflops.value;
        p.cpu_bandwidth_gbs = cpu->bandwidth_gbs.value;
        p.cpu_launch_us = cpu->launch_us.value;
    }
    p.sync_us = soc.memory.sync_us.value;
    return p;
}

}  // namespace hetero::npu
