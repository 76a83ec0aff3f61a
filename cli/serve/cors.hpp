// Cross-origin access for web pages (CORS). As llama.cpp's server does,
// `hetero serve` lets a page from any origin call it unless told otherwise:
// every reply carries Access-Control-Allow-Origin, and a browser's OPTIONS
// preflight is answered with the methods and the headers it asked for
// (Authorization among them, so a page can send the API key). Given origins
// (--cors-origin, repeatable) narrow it to those; "none" turns it off.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

namespace hetero::serve {

struct CorsPolicy {
    bool enabled = true;
    std::vector<std::string> origins;  // empty: any origin ("*")
};

// From the values of --cors-origin: none given or "*" = any origin, "none" =
// off, else the origins themselves ("https://app.example.com"). Throws
// hetero::Error for "none" or "*" among other origins, or an origin that is
// not scheme://host[:port].
CorsPolicy cors_policy(const std::vector<std::string>& values);

// The preflight route (OPTIONS on any path) and the headers on every reply
// (a post-routing handler). Nothing when the policy is off.
void install_cors(httplib::Server& server, const CorsPolicy& policy);

}  // namespace hetero::serve
