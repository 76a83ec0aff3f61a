#include "guarded_server.hpp"

#include "connection_stream.hpp"
#include "memory_relief.hpp"
#include "openai_response.hpp"
#include "socket_address.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace hetero::serve {

namespace {

constexpr int kMaxRequestsPerConnection = 100;

// Refuses, before its body is read, a request whose Content-Length is over the limit.
httplib::Server::HandlerResponse refuse_large_body(const ServerLimits& limits, const httplib::Request& req, httplib::Response& res) {
    if (!req.has_header("Content-Length")) return httplib::Server::HandlerResponse::Unhandled;
    const std::string text = req.get_header_value("Content-Length");
    char* end = nullptr;
    const unsigned long long length = std::strtoull(text.c_str(), &end, 10);
    if (end != text.c_str() && *end == '\0' && length <= limits.max_body_bytes) return httplib::Server::HandlerResponse::Unhandled;
    const bool malformed = end == text.c_str() || *end != '\0';
    const ApiError e = malformed ? ApiError(400, "invalid_request_error", fmt::format("Content-Length '{}' is not a number", text))
                                 : ApiError(413, "invalid_request_error",
                                            fmt::format("the request body is too large ({} bytes; at most {})", length, limits.max_body_bytes));
    res.status = e.status;
    res.set_header("Connection", "close");
    res.set_content(to_text(error_body(e)), "application/json");
    if (auto* connection = ConnectionStream::current()) connection->close_after_response();  // the body stays unread
    return httplib::Server::HandlerResponse::Handled;
}

// The answer to a request whose first line did not arrive in time (httplib
// answers nothing then; a late header or body gets 408 from the error handler).
void answer_late_request(ConnectionStream& stream, const ServerLimits& limits) {
    const std::string body = to_text(error_body(ApiError(
        408, "invalid_request_error", fmt::format("the request did not arrive in time (headers within {} ms)", limits.header_timeout.count()))));
    const std::string response = fmt::format(
        "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}", body.size(), body);
    stream.write(response.data(), response.size());
}

}  // namespace

GuardedServer::GuardedServer(const ServerLimits& limits)
    : limits_(limits), admission_(limits.max_connections, limits.max_connections_per_client) {
    set_payload_max_length(limits.max_body_bytes);
    set_keep_alive_max_count(kMaxRequestsPerConnection);
    set_keep_alive_timeout(std::max<time_t>(1, std::chrono::duration_cast<std::chrono::seconds>(limits.keep_alive_timeout).count()));
    set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) { return refuse_large_body(limits_, req, res); });
}

GuardedServer::~GuardedServer() {
    stop_serving();
    wait_for_connections();
}

void GuardedServer::stop_serving() { stopping_.store(true); }

bool GuardedServer::serve() {
    // httplib listens with a backlog of 5: a burst of clients would have its
    // connections dropped and retried a second later (a health probe among them).
    ::listen(svr_sock_.load(), SOMAXCONN);
    overflow_ = std::make_unique<OverflowResponder>(
        fmt::format("too many open connections (at most {} from one client, {} in all); try again later", limits_.max_connections_per_client,
                    limits_.max_connections));
    bool ok = true;
    while (!stopping_.load()) {
        pollfd p{svr_sock_.load(), POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const int socket = ::accept4(p.fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (socket < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));  // out of descriptors: let some close
                continue;
            }
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED || errno == EPROTO) continue;
            ok = false;
            break;
        }
        auto ticket = admission_.admit(peer_address(socket).ip);
        if (!ticket) {
            overflow_->take(socket);
            continue;
        }
        start_connection_thread(socket, std::move(ticket));
    }
    stopping_.store(true);
    const int listener = svr_sock_.exchange(INVALID_SOCKET);
    if (listener != INVALID_SOCKET) ::close(listener);
    wait_for_connections();
    overflow_.reset();
    return ok;
}

void GuardedServer::start_connection_thread(int socket, std::unique_ptr<ConnectionAdmission::Ticket> ticket) {
    const auto opened = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(threads_mutex_);
        ++threads_;
    }
    try {
        std::thread([this, socket, opened, ticket = std::move(ticket)]() mutable {
            serve_connection(socket, opened);
            ticket.reset();
            std::lock_guard lock(threads_mutex_);
            --threads_;
            threads_changed_.notify_all();
        }).detach();
    } catch (const std::system_error&) {  // no thread to be had: refuse as when full
        std::lock_guard lock(threads_mutex_);
        --threads_;
        overflow_->take(socket);
    }
}

void GuardedServer::serve_connection(int socket, std::chrono::steady_clock::time_point opened) {
    ConnectionStream stream(socket, limits_, stopping_);
    stream.make_current();
    stream.start_first_request(opened);
    for (int served = 1;; ++served) {
        const bool last = served >= kMaxRequestsPerConnection || stopping_.load();
        bool client_closes = false;
        const bool ok = process_request(stream, last, client_closes, nullptr);
        release_memory_after(stream.body_bytes());
        if (!ok && stream.timed_out()) answer_late_request(stream, limits_);
        if (!ok || last || client_closes || stream.closing() || stopping_.load()) return;
        if (!stream.next_request(std::chrono::steady_clock::now() + limits_.keep_alive_timeout)) return;
    }
}

void GuardedServer::wait_for_connections() {
    std::unique_lock lock(threads_mutex_);
    threads_changed_.wait(lock, [&] { return threads_ == 0; });
}

}  // namespace hetero::serve
