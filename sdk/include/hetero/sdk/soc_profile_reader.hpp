// The strict reader of SoC profiles (soc_profile.hpp's types): the
// simulator in the core and the NPU-emulation provider read profiles by this
// one rule. Header-only and built in-tree only: it needs nlohmann-json, and
// the installed SDK holds only headers that need nothing beyond the standard
// library.
#pragma once

#include <hetero/sdk/json_strict.hpp>
#include <hetero/sdk/soc_profile.hpp>

#include <nlohmann/json.hpp>

#include <charconv>
#include <fstream>
#include <string>

namespace hetero::sdk {

namespace soc_detail {

using nlohmann::json;

// The shortest text that reads back as `v` ("0.1", "1e+30").
inline std::string number_text(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

inline std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// Reads figures and checks them, naming origin and JSON path in every error.
class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const { throw SocProfileError(origin_ + ": " + path + ": " + what); }

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
        if (strict_positive && !(out.value > 0)) fail(p + ".value", "must be positive (is " + number_text(out.value) + ")");
        if (!(out.value >= min_value))
            fail(p + ".value", "must be at least " + number_text(min_value) + " (is " + number_text(out.value) + ")");
        return out;
    }

    std::string source_of(const json& f, const std::string& p) const {
        if (!f.contains("source")) fail(p, "missing \"source\"");
        if (!f.at("source").is_string() || f.at("source").get<std::string>().find_first_not_of(" \t") == std::string::npos)
            fail(p + ".source", "must name a paper with section, table or figure, \"fitted to ...\" or \"assumed: ...\"");
        return f.at("source").get<std::string>();
    }

private:
    std::string origin_;
};

inline uint32_t kind_from(const Reader& r, const std::string& s, const std::string& path) {
    if (s == "cpu") return HETERO_DEVICE_CPU;
    if (s == "gpu") return HETERO_DEVICE_GPU;
    if (s == "npu") return HETERO_DEVICE_NPU;
    r.fail(path, "unknown kind '" + s + "' (known: cpu, gpu, npu)");
}

inline void read_prepared_tokens(const Reader& r, const json& j, const std::string& p, SocNpu& n) {
    if (!j.contains("prepared_tokens")) {
        n.prepared_tokens = {1, int64_t(n.default_chunk_tokens.value)};
        n.prepared_source = "default: one decode graph and the default chunk";
        return;
    }
    const std::string pp = join(p, "prepared_tokens");
    const json& f = j.at("prepared_tokens");
    if (!f.is_object()) r.fail(pp, "must be an object {\"value\": [...], \"source\": \"...\"}");
    n.prepared_source = r.source_of(f, pp);
    if (!f.contains("value") || !f.at("value").is_array()) r.fail(pp + ".value", "must be an array of token counts");
    for (const json& v : f.at("value")) {
        if (!v.is_number_integer() || v.get<int64_t>() < 1) r.fail(pp + ".value", "token counts must be positive integers");
        n.prepared_tokens.push_back(v.get<int64_t>());
    }
}

inline SocNpu read_npu(const Reader& r, const json& j, const std::string& p) {
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
    read_prepared_tokens(r, j, p, n);
    n.activation_quant = r.string(j, "activation_quant", p);
    if (n.activation_quant != "per_tensor") r.fail(join(p, "activation_quant"), "must be \"per_tensor\"");
    n.weight_quant = r.string(j, "weight_quant", p);
    if (n.weight_quant != "per_tensor" && n.weight_quant != "per_channel") r.fail(join(p, "weight_quant"), "must be \"per_tensor\" or \"per_channel\"");
    return n;
}

inline std::string joined(const std::set<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

inline SocUnit read_unit(const Reader& r, const std::string& name, const json& j, const std::string& p) {
    if (!j.is_object()) r.fail(p, "must be an object");
    SocUnit u;
    u.name = name;
    u.kind = kind_from(r, r.string(j, "kind", p), join(p, "kind"));
    u.fp32_gflops = r.figure(j, "fp32_gflops", p, 0, false);
    u.fp16_gflops = r.figure(j, "fp16_gflops", p, 0, false);
    u.int8_gops = r.figure(j, "int8_gops", p, 0, false);
    if (u.fp32_gflops.value <= 0 && u.fp16_gflops.value <= 0 && u.int8_gops.value <= 0) r.fail(p, "computes nothing: every rate is 0");
    u.bandwidth_gbs = r.figure(j, "bandwidth_gbs", p, 0, true);
    u.launch_us = r.figure(j, "launch_us", p, 0, false);
    // Reference figures: optional, but sourced when present.
    for (const char* k : {"peak_int8_gops", "peak_fp16_gflops", "actual_gops"})
        if (j.contains(k)) r.figure(j, k, p, 0, false);
    const std::string op = join(p, "ops");
    if (!j.contains("ops") || !j.at("ops").is_array()) r.fail(op, "missing (an array of op names)");
    for (const json& o : j.at("ops")) {
        if (!o.is_string() || !soc_op_names().count(o.get<std::string>()))
            r.fail(op, "unknown op " + o.dump() + " (known: " + joined(soc_op_names()) + ")");
        u.ops.insert(o.get<std::string>());
    }
    u.has_npu = j.contains("npu");
    if (u.kind == HETERO_DEVICE_NPU && !u.has_npu) r.fail(join(p, "npu"), "missing (a unit of kind \"npu\" needs its NPU section)");
    if (u.kind != HETERO_DEVICE_NPU && u.has_npu) r.fail(join(p, "npu"), "only a unit of kind \"npu\" has an NPU section");
    if (u.has_npu) u.npu = read_npu(r, r.object(j, "npu", p), join(p, "npu"));
    return u;
}

}  // namespace soc_detail

// Parses and validates; `origin` names the text in messages (a file path).
// Throws SocProfileError, or JsonError for text that is not strict JSON.
inline SocProfile parse_soc_profile(const std::string& text, const std::string& origin) {
    using soc_detail::Reader;
    const Reader r(origin);
    const nlohmann::json j = parse_json_strict(text, origin);
    if (!j.is_object()) r.fail("(top level)", "must be an object");
    SocProfile p;
    const std::string schema = r.string(j, "schema", "");
    if (schema != "hetero-soc-profile/1") r.fail("schema", "is \"" + schema + "\", this reader knows \"hetero-soc-profile/1\"");
    p.id = r.string(j, "id", "");
    if (p.id.empty() || p.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
        r.fail("id", "\"" + p.id + "\" must match [a-z0-9-]+");
    p.name = r.string(j, "name", "");
    const nlohmann::json& m = r.object(j, "memory", "");
    p.memory.peak_gbs = r.figure(m, "peak_gbs", "memory", 0, true);
    p.memory.combined_gbs = r.figure(m, "combined_gbs", "memory", 0, true);
    p.memory.sync_us = r.figure(m, "sync_us", "memory", 0, false);
    p.memory.copy_gbs = r.figure(m, "copy_gbs", "memory", 0, true);
    if (p.memory.combined_gbs.value > p.memory.peak_gbs.value)
        r.fail("memory.combined_gbs", soc_detail::number_text(p.memory.combined_gbs.value) + " GB/s exceeds memory.peak_gbs (" +
                                          soc_detail::number_text(p.memory.peak_gbs.value) + " GB/s)");
    const nlohmann::json& units = r.object(j, "units", "");
    if (units.empty()) r.fail("units", "names no unit");
    for (auto it = units.begin(); it != units.end(); ++it) p.units.push_back(soc_detail::read_unit(r, it.key(), it.value(), "units." + it.key()));
    return p;
}

// Reads a file (a regular file, at most 1 MiB) and parses it.
inline SocProfile load_soc_profile_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw SocProfileError("cannot read SoC profile " + path);
    std::string text;
    constexpr size_t kMaxBytes = 1 << 20;  // profiles are a few KiB; refuse to slurp anything huge
    text.resize(kMaxBytes + 1);
    in.read(text.data(), std::streamsize(text.size()));
    text.resize(size_t(in.gcount()));
    if (text.size() > kMaxBytes) throw SocProfileError("SoC profile " + path + " is over 1 MiB: not a profile");
    SocProfile p = parse_soc_profile(text, path);
    p.path = path;
    return p;
}

}  // namespace hetero::sdk
