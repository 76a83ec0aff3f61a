// The API key of `hetero serve --api-key`: requests to /v1/* and /metrics
// must carry `Authorization: Bearer KEY`. The comparison takes the same time
// wherever the given key first differs, so timing tells an attacker nothing
// of the key but its length.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

namespace hetero::serve {

// Whether `given` equals `secret`, in time that depends only on their lengths.
bool constant_time_equal(std::string_view secret, std::string_view given);

class ApiKey {
public:
    // Throws hetero::Error for an empty key or one holding spaces or control
    // characters (a Bearer token could not carry it).
    explicit ApiKey(std::string key);
    // Whether the request's Authorization header is "Bearer KEY".
    bool admits(const httplib::Request& req) const;

private:
    std::string key_;
};

// The key in FILE: its first line, surrounding whitespace removed (hetero::Error naming the file).
std::string read_api_key_file(const std::string& path);

}  // namespace hetero::serve
