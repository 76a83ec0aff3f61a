#include "npu_profile.hpp"

#include <hetero/sdk/provider.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hetero::npu {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

[[noreturn]] void bad(const std::string& file, const std::string& where, const std::string& what) {
    sdk::fail(HETERO_ERR_INVALID_ARGUMENT, "npu_emu: SoC profile " + file + ": " + where + ": " + what);
}

// A figure is {"value": v, "source": "..."}; the source is required.
const json& figure(const json& parent, const std::string& key, const std::string& file, const std::string& where) {
    const std::string path = where + "." + key;
    if (!parent.contains(key)) bad(file, path, "missing");
    const json& f = parent.at(key);
    if (!f.is_object() || !f.contains("value")) bad(file, path, "must be {\"value\": ..., \"source\": \"...\"}");
    if (!f.contains("source") || !f.at("source").is_string() || f.at("source").get<std::string>().empty())
        bad(file, path, "missing \"source\"");
    return f.at("value");
}

double number(const json& parent, const std::string& key, const std::string& file, const std::string& where, double lo) {
    const json& v = figure(parent, key, file, where);
    if (!v.is_number() || !(v.get<double>() >= lo)) bad(file, where + "." + key, "must be a number >= " + std::to_string(lo));
    return v.get<double>();
}

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
    std::ifstream in(p.path);
    std::stringstream text;
    text << in.rdbuf();
    json j;
    try {
        j = json::parse(text.str());
    } catch (const json::exception& e) {
        bad(p.path, "(file)", std::string("not JSON: ") + e.what());
    }
    try {
        if (j.value("schema", "") != "hetero-soc-profile/1") bad(p.path, "schema", "must be \"hetero-soc-profile/1\"");
        p.id = j.value("id", "");
        p.name = j.value("name", p.id);
        if (!j.contains("units") || !j["units"].contains("npu")) bad(p.path, "units.npu", "missing: this SoC has no NPU section");
        const json& u = j["units"]["npu"];
        const std::string w = "units.npu";
        p.int8_gops = number(u, "int8_gops", p.path, w, 0);
        p.fp16_gflops = number(u, "fp16_gflops", p.path, w, 0);
        p.bandwidth_gbs = number(u, "bandwidth_gbs", p.path, w, 1e-6);
        p.launch_us = number(u, "launch_us", p.path, w, 0);
        if (!u.contains("ops") || !u["ops"].is_array()) bad(p.path, w + ".ops", "missing or not an array of op names");
        for (const json& o : u["ops"]) p.ops.push_back(o.get<std::string>());
        if (!u.contains("npu")) bad(p.path, w + ".npu", "missing");
        const json& n = u["npu"];
        const std::string wn = w + ".npu";
        p.tile_rows = int64_t(number(n, "tile_rows", p.path, wn, 1));
        p.tile_cols = int64_t(number(n, "tile_cols", p.path, wn, 1));
        p.row_align = int64_t(number(n, "row_align", p.path, wn, 1));
        p.order_penalty_max = number(n, "order_penalty_max", p.path, wn, 1);
        p.order_knee_rows = n.contains("order_knee_rows") ? number(n, "order_knee_rows", p.path, wn, 1) : double(p.tile_rows);
        p.shape_penalty_max = number(n, "shape_penalty_max", p.path, wn, 1);
        p.graph_switch_us = number(n, "graph_switch_us", p.path, wn, 0);
        p.compile_ms_base = number(n, "compile_ms_base", p.path, wn, 0);
        p.compile_ms_per_mflop = number(n, "compile_ms_per_mflop", p.path, wn, 0);
        p.map_limit_bytes = uint64_t(number(n, "map_limit_bytes", p.path, wn, 1));
        p.default_chunk_tokens = int64_t(number(n, "default_chunk_tokens", p.path, wn, 1));
        const std::string wq = n.value("weight_quant", "per_channel");
        if (wq != "per_channel" && wq != "per_tensor") bad(p.path, wn + ".weight_quant", "must be \"per_channel\" or \"per_tensor\"");
        p.weight_per_tensor = wq == "per_tensor";
        if (j["units"].contains("cpu")) {
            const json& c = j["units"]["cpu"];
            p.cpu_fp32_gflops = number(c, "fp32_gflops", p.path, "units.cpu", 1e-6);
            p.cpu_bandwidth_gbs = number(c, "bandwidth_gbs", p.path, "units.cpu", 1e-6);
            p.cpu_launch_us = number(c, "launch_us", p.path, "units.cpu", 0);
        }
        if (j.contains("memory") && j["memory"].contains("sync_us")) p.sync_us = number(j["memory"], "sync_us", p.path, "memory", 0);
        if (n.value("activation_quant", "per_tensor") != "per_tensor") bad(p.path, wn + ".activation_quant", "only \"per_tensor\" is emulated");
    } catch (const json::exception& e) {
        bad(p.path, "(structure)", e.what());
    }
    return p;
}

}  // namespace hetero::npu
