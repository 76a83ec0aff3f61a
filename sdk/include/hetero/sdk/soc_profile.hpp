// A SoC profile (profiles/soc/SCHEMA.md, schema "hetero-soc-profile/1"):
// what each unit of a system-on-chip computes and streams, how the units
// share memory, and what launching, synchronising and compiling cost. Every
// figure keeps its source. Parsing validates everything and names the
// origin and JSON path of the first fault ("units.npu.npu.tile_rows: missing
// \"source\""). This header holds the types; the reader is
// soc_profile_reader.hpp. Times derived from a profile are simulated.
#pragma once

#include <hetero/ep_api.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetero::sdk {

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
    // The unit called `name`, or nullptr.
    const SocUnit* find_unit(const std::string& unit) const {
        for (const SocUnit& u : units)
            if (u.name == unit) return &u;
        return nullptr;
    }
};

// "<origin>: <json path>: <what is wrong>", or a JsonError for bad JSON.
class SocProfileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The op names a unit may list in "ops".
inline const std::set<std::string>& soc_op_names() {
    static const std::set<std::string> names = {"matmul_w8a8", "matmul_f16", "matmul_f32", "matmul_w4a16", "rmsnorm", "rope", "attention",
                                                "swiglu",      "add",        "mul",        "softmax",      "embedding", "convert", "store_rows"};
    return names;
}

}  // namespace hetero::sdk
