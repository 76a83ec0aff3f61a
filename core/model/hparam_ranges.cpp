#include "hparam_ranges.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cmath>

namespace hetero::model_detail {

namespace {

// Metadata numbers are mostly float32: printed with float32's digits, and
// whole numbers in full.
std::string shown(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
    return fmt::format("{:.7g}", v);
}

}  // namespace

void require_in_range(const GgufFile& f, const std::string& key, double value, double lo, double hi, const std::string& hint) {
    if (value >= lo && value <= hi) return;  // false for NaN
    const std::string what = std::isfinite(value) ? fmt::format("is out of range [{}, {}]", shown(lo), shown(hi)) : "is not a finite number";
    throw Error(fmt::format("{}: metadata key '{}' = {} {}{}", f.path(), key, shown(value), what, hint.empty() ? "" : " (" + hint + ")"));
}

double float_in_range(const GgufFile& f, const std::string& key, double fallback, double lo, double hi) {
    const auto v = f.get_float(key);
    if (!v) return fallback;
    require_in_range(f, key, *v, lo, hi);
    return *v;
}

void check_rope_scaling_keys(const GgufFile& f, const std::string& arch) {
    const std::string a = arch + ".";
    for (const char* key : {"rope.scaling.factor", "rope.scale_linear", "rope.scaling.low_freq_factor", "rope.scaling.high_freq_factor"}) {
        if (!f.has(a + key)) continue;
        const double v = *f.get_float(a + key);
        // GGUF's readers take a factor of 0 as "no scaling".
        if (v == 0.0 && std::string(key) != "rope.scaling.low_freq_factor" && std::string(key) != "rope.scaling.high_freq_factor") continue;
        require_in_range(f, a + key, v, kMinRopeFactor, kMaxRopeFactor);
    }
    if (f.has(a + "rope.scaling.original_context_length"))
        require_in_range(f, a + "rope.scaling.original_context_length", *f.get_float(a + "rope.scaling.original_context_length"), 1,
                         kMaxTokens);
}

}  // namespace hetero::model_detail
