// Addresses of a connected socket as text, and a host written into a URL.
#pragma once

#include <string>

namespace hetero::serve {

struct SocketAddress {
    std::string ip;  // "127.0.0.1", "::1"; an IPv4 client of an IPv6 socket as IPv4
    int port = 0;
};

SocketAddress peer_address(int socket);
SocketAddress local_address(int socket);

// `host` as a URL writes it: an IPv6 address in brackets ("[::1]").
std::string url_host(const std::string& host);

}  // namespace hetero::serve
