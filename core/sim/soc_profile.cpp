#include <hetero/error.hpp>
#include <hetero/sim/soc_profile.hpp>

#include "../util/json_strict.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hetero {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSchema = "hetero-soc-profile/1";

// Reads figures and checks them, naming origin and JSON path in every error.
class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw Error(fmt::format("{}: {}: {}", origin_, path, what));
    }

    const json& object(const json& parent, const std::string& key, const std::string& path) const {
        const std::string p = join(path, key);
        if (!parent.contains(key)) fail(p, "missing");
        const json& v = parent.at(key);
        if (!v.is_object()) fail(p, "must be an object");
        return v;
    }

    std::string string(const json& parent, const std::string& key, const std::string& path) const {
        const std::string p = join(path, key);
        if (!parent.contains(key)) fail(p, "missing");
        if (!parent.at(key).is_string()) fail(p, "must be a string");
        return parent.at(key).get<std::string>();
    }

    // A figure: {"value": number, "source": "..."}; min_value is inclusive.
    SocFigure figure(const json& parent, const std::string& key, const std::string& path, double min_value, bool strict_positive) const {
        const std::string p = join(path, key);
        if (!parent.contains(key)) fail(p, "missing");
        const json& f = parent.at(key);
        if (!f.is_object()) fail(p, "must be an object {\"value\": ..., \"source\": \"...\"}");
        SocFigure out;
        out.source = source_of(f, p);
        if (!f.contains("value")) fail(p, "missing \"value\"");
        if (!f.at("value").is_number()) fail(p + ".value", "must be a number");
        out.value = f.at("value").get<double>();
        if (strict_positive && !(out.value > 0)) fail(p + ".value", fmt::format("must be positive (is {})", out.value));
        if (!(out.value >= min_value)) fail(p + ".value", fmt::format("must be at least {} (is {})", min_value, out.value));
        return out;
    }

    std::string source_of(const json& f, const std::string& p) const {
        if (!f.contains("source")) fail(p, "missing \"source\"");
        if (!f.at("source").is_string() || f.at("source").get<std::string>().find_first_not_of(" \t") == std::string::npos)
            fail(p + ".source", "must name a paper with section, table or figure, \"fitted to ...\" or \"assumed: ...\"");
        return f.at("source").get<std::string>();
    }

    static std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

private:
    std::string origin_;
};

uint32_t kind_from(const Reader& r, const std::string& s, const std::string& path) {
    if (s == "cpu") return HETERO_DEVICE_CPU;
    if (s == "gpu") return HETERO_DEVICE_GPU;
    if (s == "npu") return HETERO_DEVICE_NPU;
    r.fail(path, fmt::format("unknown kind '{}' (known: cpu, gpu, npu)", s));
}

SocNpu read_npu(const Reader& r, const json& j, const std::string& p) {
    SocNpu n;
    n.tile_rows = r.figure(j, "tile_rows", p, 1, true);
    n.tile_cols = r.figure(j, "tile_cols", p, 1, true);
    n.row_align = r.figure(j, "row_align", p, 1, true);
    n.seq_align = r.figure(j, "seq_align", p, 1, true);
    n.order_penalty_max = r.figure(j, "order_penalty_max", p, 1, true);
    n.shape_penalty_max = r.figure(j, "shape_penalty_max", p, 1, true);
    n.graph_switch_us = r.figure(j, "graph_switch_us", p, 0, false);
    n.compile_ms_base = r.figure(j, "compile_ms_base", p, 0, false);
    n.compile_ms_per_mflop = r.figure(j, "compile_ms_per_mflop", p, 0, false);
    n.map_limit_bytes = r.figure(j, "map_limit_bytes", p, 0, true);
    n.default_chunk_tokens = r.figure(j, "default_chunk_tokens", p, 1, true);
    if (j.contains("order_knee_rows")) n.order_knee_rows = r.figure(j, "order_knee_rows", p, 1, true);
    else n.order_knee_rows = {n.tile_rows.value, "default: tile_rows (no knee)"};
    if (j.contains("prepared_tokens")) {
        const std::string pp = Reader::join(p, "prepared_tokens");
        const json& f = j.at("prepared_tokens");
        if (!f.is_object()) r.fail(pp, "must be an object {\"value\": [...], \"source\": \"...\"}");
        n.prepared_source = r.source_of(f, pp);
        if (!f.contains("value") || !f.at("value").is_array()) r.fail(pp + ".value", "must be an array of token counts");
        for (const json& v : f.at("value")) {
            if (!v.is_number_integer() || v.get<int64_t>() < 1) r.fail(pp + ".value", "token counts must be positive integers");
            n.prepared_tokens.push_back(v.get<int64_t>());
        }
    } else {
        n.prepared_tokens = {1, int64_t(n.default_chunk_tokens.value)};
        n.prepared_source = "default: one decode graph and the default chunk";
    }
    n.activation_quant = r.string(j, "activation_quant", p);
    if (n.activation_quant != "per_tensor") r.fail(Reader::join(p, "activation_quant"), "must be \"per_tensor\"");
    n.weight_quant = r.string(j, "weight_quant", p);
    if (n.weight_quant != "per_tensor" && n.weight_quant != "per_channel")
        r.fail(Reader::join(p, "weight_quant"), "must be \"per_tensor\" or \"per_channel\"");
    return n;
}

SocUnit read_unit(const Reader& r, const std::string& name, const json& j, const std::string& p) {
    if (!j.is_object()) r.fail(p, "must be an object");
    SocUnit u;
    u.name = name;
    u.kind = kind_from(r, r.string(j, "kind", p), Reader::join(p, "kind"));
    u.fp32_gflops = r.figure(j, "fp32_gflops", p, 0, false);
    u.fp16_gflops = r.figure(j, "fp16_gflops", p, 0, false);
    u.int8_gops = r.figure(j, "int8_gops", p, 0, false);
    if (u.fp32_gflops.value <= 0 && u.fp16_gflops.value <= 0 && u.int8_gops.value <= 0) r.fail(p, "computes nothing: every rate is 0");
    u.bandwidth_gbs = r.figure(j, "bandwidth_gbs", p, 0, true);
    u.launch_us = r.figure(j, "launch_us", p, 0, false);
    // Reference figures: optional, but sourced when present.
    for (const char* k : {"peak_int8_gops", "peak_fp16_gflops", "actual_gops"})
        if (j.contains(k)) r.figure(j, k, p, 0, false);
    const std::string op = Reader::join(p, "ops");
    if (!j.contains("ops") || !j.at("ops").is_array()) r.fail(op, "missing (an array of op names)");
    for (const json& o : j.at("ops")) {
        if (!o.is_string() || !soc_op_names().count(o.get<std::string>()))
            r.fail(op, fmt::format("unknown op {} (known: {})", o.dump(), fmt::join(soc_op_names(), ", ")));
        u.ops.insert(o.get<std::string>());
    }
    u.has_npu = j.contains("npu");
    if (u.kind == HETERO_DEVICE_NPU && !u.has_npu) r.fail(Reader::join(p, "npu"), "missing (a unit of kind \"npu\" needs its NPU section)");
    if (u.kind != HETERO_DEVICE_NPU && u.has_npu) r.fail(Reader::join(p, "npu"), "only a unit of kind \"npu\" has an NPU section");
    if (u.has_npu) u.npu = read_npu(r, r.object(j, "npu", p), Reader::join(p, "npu"));
    return u;
}

void append_dirs(std::vector<std::string>& dirs, const std::string& list) {
    std::stringstream ss(list);
    std::string d;
    while (std::getline(ss, d, ':'))
        if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
}

}  // namespace

const std::set<std::string>& soc_op_names() {
    static const std::set<std::string> names = {"matmul_w8a8", "matmul_f16", "matmul_f32", "matmul_w4a16", "rmsnorm", "rope", "attention",
                                                "swiglu",      "add",        "mul",        "softmax",      "embedding", "convert", "store_rows"};
    return names;
}

size_t SocProfile::unit_index(const std::string& unit) const {
    std::string known;
    for (size_t i = 0; i < units.size(); ++i) {
        if (units[i].name == unit) return i;
        known += (known.empty() ? "" : ", ") + units[i].name;
    }
    throw Error(fmt::format("SoC profile {} has no unit '{}' (units: {})", id, unit, known));
}

SocProfile parse_soc_profile(const std::string& text, const std::string& origin) {
    const Reader r(origin);
    const json j = json_detail::parse_json_strict(text, origin);
    if (!j.is_object()) r.fail("(top level)", "must be an object");
    SocProfile p;
    const std::string schema = r.string(j, "schema", "");
    if (schema != kSchema) r.fail("schema", fmt::format("is \"{}\", this reader knows \"{}\"", schema, kSchema));
    p.id = r.string(j, "id", "");
    if (p.id.empty() || p.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
        r.fail("id", fmt::format("\"{}\" must match [a-z0-9-]+", p.id));
    p.name = r.string(j, "name", "");
    const json& m = r.object(j, "memory", "");
    p.memory.peak_gbs = r.figure(m, "peak_gbs", "memory", 0, true);
    p.memory.combined_gbs = r.figure(m, "combined_gbs", "memory", 0, true);
    p.memory.sync_us = r.figure(m, "sync_us", "memory", 0, false);
    p.memory.copy_gbs = r.figure(m, "copy_gbs", "memory", 0, true);
    if (p.memory.combined_gbs.value > p.memory.peak_gbs.value)
        r.fail("memory.combined_gbs", fmt::format("{} GB/s exceeds memory.peak_gbs ({} GB/s)", p.memory.combined_gbs.value, p.memory.peak_gbs.value));
    const json& units = r.object(j, "units", "");
    if (units.empty()) r.fail("units", "names no unit");
    for (auto it = units.begin(); it != units.end(); ++it) p.units.push_back(read_unit(r, it.key(), it.value(), "units." + it.key()));
    return p;
}

SocProfile load_soc_profile_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(fmt::format("cannot read SoC profile {}", path));
    std::stringstream ss;
    ss << in.rdbuf();
    SocProfile p = parse_soc_profile(ss.str(), path);
    p.path = path;
    return p;
}

std::vector<std::string> soc_profile_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("HETERO_SOC_PROFILE_DIR")) append_dirs(dirs, env);
    boost::system::error_code ec;
    const boost::dll::fs::path self = boost::dll::this_line_location(ec);
    if (!ec) append_dirs(dirs, (fs::path(self.string()).parent_path() / HETERO_SOC_SUBDIR_FROM_LIB).lexically_normal().string());
    append_dirs(dirs, std::string(HETERO_SOURCE_DIR) + "/profiles/soc");
    return dirs;
}

std::string find_soc_profile(const std::string& name) {
    if (name.empty()) throw Error("no SoC profile named (--profile NAME or FILE.json)");
    const bool is_path = name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".json");
    if (is_path) {
        if (!fs::is_regular_file(name)) throw Error(fmt::format("SoC profile file {} does not exist", name));
        return name;
    }
    std::set<std::string> known;
    const std::vector<std::string> dirs = soc_profile_dirs();
    for (const std::string& d : dirs) {
        const fs::path f = fs::path(d) / (name + ".json");
        std::error_code ec;
        if (fs::is_regular_file(f, ec)) return f.string();
        for (const auto& e : fs::directory_iterator(d, ec))
            if (e.path().extension() == ".json") known.insert(e.path().stem().string());
    }
    throw Error(fmt::format("unknown SoC profile '{}' (looked in {}; known: {})", name, fmt::join(dirs, ", "),
                            known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
}

SocProfile load_soc_profile(const std::string& name_or_path) { return load_soc_profile_file(find_soc_profile(name_or_path)); }

}  // namespace hetero
