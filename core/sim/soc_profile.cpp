#include <hetero/error.hpp>
#include <hetero/sim/soc_profile.hpp>

#include <hetero/sdk/soc_profile_reader.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace hetero {

namespace {

namespace fs = std::filesystem;

void append_dirs(std::vector<std::string>& dirs, const std::string& list) {
    std::stringstream ss(list);
    std::string d;
    while (std::getline(ss, d, ':'))
        if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
}

}  // namespace

size_t SocProfile::unit_index(const std::string& unit) const {
    std::string known;
    for (size_t i = 0; i < units.size(); ++i) {
        if (units[i].name == unit) return i;
        known += (known.empty() ? "" : ", ") + units[i].name;
    }
    throw Error(fmt::format("SoC profile {} has no unit '{}' (units: {})", id, unit, known));
}

SocProfile parse_soc_profile(const std::string& text, const std::string& origin) {
    try {
        return SocProfile{sdk::parse_soc_profile(text, origin)};
    } catch (const std::runtime_error& e) {  // sdk::SocProfileError, sdk::JsonError
        throw Error(e.what());
    }
}

SocProfile load_soc_profile_file(const std::string& path) {
    try {
        return SocProfile{sdk::load_soc_profile_file(path)};
    } catch (const std::runtime_error& e) {
        throw Error(e.what());
    }
}

std::vector<std::string> soc_profile_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("HETERO_SOC_PROFILE_DIR")) append_dirs(dirs, env);
    boost::system::error_code ec;
    const boost::dll::fs::path self = boost::dll::this_line_location(ec);
    if (!ec) append_dirs(dirs, (fs::path(self.string()).parent_path() / HETERO_SOC_SUBDIR_FROM_LIB).lexically_normal().string());
    append_dirs(dirs, std::string(HETERO_SOURCE_DIR) + "/profiles/soc");
    return dirs;
}

std::string find_soc_profile(const std::string& name) {
    if (name.empty()) throw Error("no SoC profile named (--profile NAME or FILE.json)");
    const bool is_path = name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".json");
    if (is_path) {
        if (!fs::is_regular_file(name)) throw Error(fmt::format("SoC profile file {} does not exist", name));
        return name;
    }
    std::set<std::string> known;
    const std::vector<std::string> dirs = soc_profile_dirs();
    for (const std::string& d : dirs) {
        const fs::path f = fs::path(d) / (name + ".json");
        std::error_code ec;
        if (fs::is_regular_file(f, ec)) return f.string();
        for (const auto& e : fs::directory_iterator(d, ec))
            if (e.path().extension() == ".json") known.insert(e.path().stem().string());
    }
    throw Error(fmt::format("unknown SoC profile '{}' (looked in {}; known: {})", name, fmt::join(dirs, ", "),
                            known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
}

SocProfile load_soc_profile(const std::string& name_or_path) { return load_soc_profile_file(find_soc_profile(name_or_path)); }

}  // namespace hetero
