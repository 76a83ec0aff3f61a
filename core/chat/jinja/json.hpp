// JSON in and out: the render variables arrive as JSON, and the tojson filter
// writes what Python's json.dumps(..., ensure_ascii=False) writes.
#pragma once

#include "value.hpp"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace hetero::jinja {

struct JsonStyle {
    std::optional<std::string> indent;  // json.dumps' indent, as the string put per level
    std::string item_separator = ", ";  // ", " without indent, "," with it (Python's defaults)
    std::string key_separator = ": ";
    bool sort_keys = false;
};

std::string to_json(const Value& v, const JsonStyle& style);
// Throws BudgetExceeded for JSON nested deeper than kMaxValueNesting.
Value from_json(const nlohmann::ordered_json& j, uint32_t depth = 0);

}  // namespace hetero::jinja
