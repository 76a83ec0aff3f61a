// What one client, and all of them together, may hold of `hetero serve`:
// how long a request's headers and body may take to arrive, how large they
// may be, and how many connections may be open at once.
#pragma once

#include <chrono>
#include <cstddef>

namespace hetero::serve {

struct ServerLimits {
    // From a connection's first byte (or its opening, for its first request)
    // to the blank line that ends the headers; then from there to the body's end.
    std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};
    std::chrono::milliseconds body_timeout{std::chrono::seconds(30)};
    // A kept-alive connection waits this long for its next request.
    std::chrono::milliseconds keep_alive_timeout{std::chrono::seconds(2)};
    // A reply the client does not take (a full socket buffer) fails after this long.
    std::chrono::milliseconds write_timeout{std::chrono::seconds(5)};
    size_t max_header_bytes = 64u << 10;  // request line and headers together
    size_t max_body_bytes = 16u << 20;    // the decoded body, whatever its transfer encoding
    // Open connections; each holds one thread. Connections past either cap are
    // answered at once: /health as usual, anything else 503.
    int max_connections = 128;
    int max_connections_per_client = 32;  // per client IP address
};

}  // namespace hetero::serve
