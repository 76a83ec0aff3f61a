// The filter and test tables: functions listed by name, looked up by name.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

namespace hetero::jinja {

// The function `table` lists under `name`, or nullptr.
template <class Fn, std::size_t N>
Fn find_by_name(const std::pair<const char*, Fn> (&table)[N], std::string_view name) {
    for (const auto& [n, fn] : table)
        if (name == n) return fn;
    return nullptr;
}

}  // namespace hetero::jinja
