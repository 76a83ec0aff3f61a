#include "api_key.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cctype>
#include <fstream>

namespace hetero::serve {

bool constant_time_equal(std::string_view secret, std::string_view given) {
    // Every byte of `given` is looked at, against the secret or against itself.
    unsigned char diff = secret.size() == given.size() ? 0 : 1;
    for (size_t i = 0; i < given.size(); ++i) {
        const unsigned char s = i < secret.size() ? static_cast<unsigned char>(secret[i]) : static_cast<unsigned char>(given[i]);
        diff |= static_cast<unsigned char>(s ^ static_cast<unsigned char>(given[i]));
    }
    return diff == 0;
}

ApiKey::ApiKey(std::string key) : key_(std::move(key)) {
    if (key_.empty()) throw Error("the API key is empty");
    for (unsigned char c : key_)
        if (c <= ' ' || c == 0x7f) throw Error("the API key holds a space or a control character, which an Authorization header cannot carry");
}

bool ApiKey::admits(const httplib::Request& req) const {
    const std::string header = req.get_header_value("Authorization");
    constexpr std::string_view kScheme = "Bearer ";
    if (header.size() < kScheme.size()) return false;
    // The scheme's name is case-insensitive (RFC 9110).
    for (size_t i = 0; i < kScheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(header[i])) != std::tolower(static_cast<unsigned char>(kScheme[i]))) return false;
    return constant_time_equal(key_, std::string_view(header).substr(kScheme.size()));
}

std::string read_api_key_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error(fmt::format("--api-key-file {}: cannot be read", path));
    std::string line;
    std::getline(in, line);
    const size_t first = line.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) throw Error(fmt::format("--api-key-file {}: its first line is empty", path));
    return line.substr(first, line.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace hetero::serve
