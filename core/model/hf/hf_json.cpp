#include "hf_json.hpp"

#include "../mapped_file.hpp"

#include <hetero/error.hpp>
#include <hetero/sdk/json_strict.hpp>

#include <fmt/format.h>

#include <cmath>

namespace hetero::model_detail {

namespace {

constexpr uint64_t kMaxJsonBytes = 1ull << 30;

const nlohmann::json* present(const nlohmann::json& j, const std::string& key) {
    if (!j.is_object()) return nullptr;
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

// A value as an error message shows it: cut short when long.
std::string shown(const nlohmann::json& v) {
    std::string s = v.dump();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
    const MappedFile file(path);
    if (file.size() > kMaxJsonBytes) throw Error(fmt::format("{}: {} bytes: larger than any model's JSON file (at most 1 GiB)", path, file.size()));
    const std::string text(reinterpret_cast<const char*>(file.data()), size_t(file.size()));
    try {
        return sdk::parse_json_strict(text, path);
    } catch (const sdk::JsonError& e) {
        throw Error(e.what());
    }
}

std::optional<int64_t> json_int(const nlohmann::json& j, const std::string& key, const std::string& path, int64_t lo, int64_t hi) {
    const nlohmann::json* v = present(j, key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) throw Error(fmt::format("{}: '{}' must be an integer, not {}", path, key, shown(*v)));
    const int64_t x = v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX) ? INT64_MAX : v->get<int64_t>();
    if (x < lo || x > hi) throw Error(fmt::format("{}: '{}' = {} is out of range ({} .. {})", path, key, shown(*v), lo, hi));
    return x;
}

std::optional<double> json_number(const nlohmann::json& j, const std::string& key, const std::string& path, double lo, double hi) {
    const nlohmann::json* v = present(j, key);
    if (!v) return std::nullopt;
    if (!v->is_number()) throw Error(fmt::format("{}: '{}' must be a number, not {}", path, key, shown(*v)));
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) throw Error(fmt::format("{}: '{}' = {} is out of range ({} .. {})", path, key, shown(*v), lo, hi));
    return x;
}

std::optional<bool> json_bool(const nlohmann::json& j, const std::string& key, const std::string& path) {
    const nlohmann::json* v = present(j, key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) throw Error(fmt::format("{}: '{}' must be true or false, not {}", path, key, shown(*v)));
    return v->get<bool>();
}

std::optional<std::string> json_string(const nlohmann::json& j, const std::string& key, const std::string& path) {
    const nlohmann::json* v = present(j, key);
    if (!v) return std::nullopt;
    if (!v->is_string()) throw Error(fmt::format("{}: '{}' must be a string, not {}", path, key, shown(*v)));
    return v->get<std::string>();
}

}  // namespace hetero::model_detail
