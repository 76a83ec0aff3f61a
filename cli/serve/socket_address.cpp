#include "socket_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace hetero::serve {

namespace {

SocketAddress to_text(const sockaddr_storage& a) {
    SocketAddress out;
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
        const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
        inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
        out.port = ntohs(v4.sin_port);
    } else if (a.ss_family == AF_INET6) {
        const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
        if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr))
            inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof text);
        else
            inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
        out.port = ntohs(v6.sin6_port);
    }
    out.ip = text;
    return out;
}

}  // namespace

SocketAddress peer_address(int socket) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (getpeername(socket, reinterpret_cast<sockaddr*>(&a), &len) != 0) return {};
    return to_text(a);
}

SocketAddress local_address(int socket) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (getsockname(socket, reinterpret_cast<sockaddr*>(&a), &len) != 0) return {};
    return to_text(a);
}

std::string url_host(const std::string& host) {
    if (host.find(':') != std::string::npos && !host.starts_with('[')) return "[" + host + "]";
    return host;
}

}  // namespace hetero::serve
