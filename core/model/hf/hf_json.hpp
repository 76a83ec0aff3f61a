// The JSON files of a Hugging Face model folder (config.json,
// tokenizer.json, ...), read strictly: a repeated key, a value of the wrong
// type or out of range is a hetero::Error naming the file and the key.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace hetero::model_detail {

// A JSON file (a regular file of at most 1 GiB), parsed.
nlohmann::json read_json_file(const std::string& path);

// Typed reads of `key` in object `j` of file `path`: nullopt when absent or
// null, an Error when present with another type or outside [lo, hi].
std::optional<int64_t> json_int(const nlohmann::json& j, const std::string& key, const std::string& path, int64_t lo, int64_t hi);
std::optional<double> json_number(const nlohmann::json& j, const std::string& key, const std::string& path, double lo, double hi);
std::optional<bool> json_bool(const nlohmann::json& j, const std::string& key, const std::string& path);
std::optional<std::string> json_string(const nlohmann::json& j, const std::string& key, const std::string& path);

}  // namespace hetero::model_detail
