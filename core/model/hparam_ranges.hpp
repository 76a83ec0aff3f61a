// The ranges real models keep their hyper-parameters in (private to
// core/model). A value outside them is damage or a mistake, and running
// with it gives fluent-looking garbage rather than an error, so the loader
// refuses it, naming the key and the value.
#pragma once

#include <hetero/model/gguf.hpp>

#include <string>

namespace hetero::model_detail {

// RoPE frequency divisors (rope.scaling.factor, low/high_freq_factor, the
// values of rope_freqs.weight): real models use 1 to a few dozen.
inline constexpr double kMinRopeFactor = 1.0 / 1024;
inline constexpr double kMaxRopeFactor = 1024;
// rope.freq_base and rope.freq_base_swa: real models use 1e4 to 1e7.
inline constexpr double kMinRopeBase = 1;
inline constexpr double kMaxRopeBase = 1e12;
// Soft-caps of attention scores and logits (Gemma: 50 and 30).
inline constexpr double kMinSoftcap = 0.1;
inline constexpr double kMaxSoftcap = 1e5;
// Token counts (context lengths, sliding windows).
inline constexpr double kMaxTokens = double(uint64_t(1) << 30);

// Throws hetero::Error "<file>: metadata key '<key>' = <value> is out of
// range [lo, hi]" (or "is not a finite number") when `value` is not in
// [lo, hi]; `hint` is appended to the message when not empty.
void require_in_range(const GgufFile& f, const std::string& key, double value, double lo, double hi, const std::string& hint = "");

// The number under `key`, else `fallback`; a present value must be in [lo, hi].
double float_in_range(const GgufFile& f, const std::string& key, double fallback, double lo, double hi);

// Every <arch>.rope.scaling.* number present (and rope.scale_linear) is
// checked whether or not the scaling type uses it, so a damaged key cannot
// hide behind a rope_freqs tensor or a type that ignores it.
void check_rope_scaling_keys(const GgufFile& f, const std::string& arch);

}  // namespace hetero::model_detail
