// A SoC profile (profiles/soc/SCHEMA.md, schema "hetero-soc-profile/1"):
// what each unit of a system-on-chip computes and streams, how the units
// share memory, and what launching, synchronising and compiling cost. Every
// figure keeps its source. Loading validates everything and names the file
// and JSON path of the first fault ("units.npu.npu.tile_rows: missing
// \"source\""). Times derived from a profile are simulated.
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace hetero {

struct SocFigure {
    double value = 0;
    std::string source;
};

struct SocNpu {
    SocFigure tile_rows, tile_cols, row_align, seq_align, order_penalty_max, order_knee_rows, shape_penalty_max, graph_switch_us,
        compile_ms_base, compile_ms_per_mflop, map_limit_bytes, default_chunk_tokens;
    std::vector<int64_t> prepared_tokens;  // token counts with a graph prepared ahead
    std::string prepared_source;
    std::string activation_quant, weight_quant;
};

struct SocUnit {
    std::string name;  // the key under "units": "cpu", "gpu", "npu"
    uint32_t kind = HETERO_DEVICE_CPU;
    SocFigure fp32_gflops, fp16_gflops, int8_gops, bandwidth_gbs, launch_us;
    std::set<std::string> ops;
    bool has_npu = false;
    SocNpu npu;  // when has_npu (kind "npu")
    bool runs(const std::string& op) const { return ops.count(op) != 0; }
};

struct SocMemory {
    SocFigure peak_gbs, combined_gbs, sync_us, copy_gbs;
};

struct SocProfile {
    std::string path;  // the file it came from ("" when parsed from text)
    std::string id, name;
    SocMemory memory;
    std::vector<SocUnit> units;  // in the file's key order (sorted by name)
    // Index of the unit called `name`; throws hetero::Error listing the units.
    size_t unit_index(const std::string& name) const;
};

// The op names a unit may list in "ops".
const std::set<std::string>& soc_op_names();

// Parses and validates; `origin` names the text in messages (a file path).
// Throws hetero::Error "<origin>: <json path>: <what is wrong>".
SocProfile parse_soc_profile(const std::string& text, const std::string& origin);
// Reads and parses a file.
SocProfile load_soc_profile_file(const std::string& path);

// Where `--profile NAME` looks, in order: $HETERO_SOC_PROFILE_DIR (colon
// separated), <prefix>/share/hetero/soc next to the installed library, the
// source tree's profiles/soc.
std::vector<std::string> soc_profile_dirs();
// A path (contains '/' or ends in ".json") is taken as given; a name is
// looked up as NAME.json in soc_profile_dirs(). Throws hetero::Error naming
// where it looked and the profiles found there.
std::string find_soc_profile(const std::string& name_or_path);
// find_soc_profile + load_soc_profile_file.
SocProfile load_soc_profile(const std::string& name_or_path);

}  // namespace hetero
