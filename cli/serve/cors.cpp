#include "cors.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero::serve {

namespace {

constexpr const char* kAllowedMethods = "GET, POST, OPTIONS";
constexpr const char* kPreflightMaxAgeSeconds = "86400";

// The Access-Control-Allow-Origin for a request from `origin`; "" = none.
std::string allowed_origin(const CorsPolicy& policy, const std::string& origin) {
    if (policy.origins.empty()) return "*";
    return std::find(policy.origins.begin(), policy.origins.end(), origin) != policy.origins.end() ? origin : "";
}

}  // namespace

CorsPolicy cors_policy(const std::vector<std::string>& values) {
    CorsPolicy p;
    if (values.empty() || (values.size() == 1 && values[0] == "*")) return p;
    if (values.size() == 1 && values[0] == "none") {
        p.enabled = false;
        return p;
    }
    for (const std::string& v : values) {
        if (v == "*" || v == "none") throw Error(fmt::format("--cors-origin {} cannot be given beside other origins", v));
        const size_t scheme = v.find("://");
        if (scheme == std::string::npos || scheme == 0 || scheme + 3 == v.size() || v.find('/', scheme + 3) != std::string::npos)
            throw Error(fmt::format("--cors-origin '{}' is not an origin: give scheme://host[:port], e.g. https://app.example.com", v));
        p.origins.push_back(v);
    }
    return p;
}

void install_cors(httplib::Server& server, const CorsPolicy& policy) {
    if (!policy.enabled) return;
    server.Options(R"(.*)", [policy](const httplib::Request& req, httplib::Response& res) {
        res.status = 204;
        res.set_header("Access-Control-Allow-Methods", kAllowedMethods);
        // "*" would not cover Authorization: the headers asked for are named back.
        const std::string asked = req.get_header_value("Access-Control-Request-Headers");
        res.set_header("Access-Control-Allow-Headers", asked.empty() ? "Authorization, Content-Type" : asked);
        res.set_header("Access-Control-Max-Age", kPreflightMaxAgeSeconds);
    });
    server.set_post_routing_handler([policy](const httplib::Request& req, httplib::Response& res) {
        const std::string origin = allowed_origin(policy, req.get_header_value("Origin"));
        if (!policy.origins.empty()) res.set_header("Vary", "Origin");  // the answer depends on who asks
        if (origin.empty()) return;
        res.set_header("Access-Control-Allow-Origin", origin);
        res.set_header("Access-Control-Expose-Headers", "*");
    });
}

}  // namespace hetero::serve
