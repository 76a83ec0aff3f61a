// JSON as the core reads hand-written files (the config, profiles): the
// SDK's strict reader (hetero/sdk/json_strict.hpp) with hetero::Error. Like
// nlohmann::json::parse, but a key repeated within one object is an error
// rather than "the last one wins", so an edit that adds a second "threads"
// beside the first cannot be silently ignored.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace hetero::json_detail {

// Parses `text`; `source` prefixes every error (e.g. "config /etc/x.json").
// Invalid JSON (syntax, numbers out of range) throws hetero::Error
// "<source>: invalid JSON: ...", a repeated key hetero::Error
// "<source>: duplicate key '<path>'" with the key's path from the top level,
// e.g. providers[0].options.threads.
nlohmann::json parse_json_strict(const std::string& text, const std::string& source);

}  // namespace hetero::json_detail
