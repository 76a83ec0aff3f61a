#include "connection_stream.hpp"

#include "socket_address.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hetero::serve {

namespace {

thread_local ConnectionStream* t_current = nullptr;

// Waits are cut into slices this long so a stopping server is noticed.
constexpr auto kSlice = std::chrono::milliseconds(100);

// Chunked framing ("1000\r\n" per chunk) comes on top of the decoded body;
// past this much more the client is not sending a body of the allowed size.
size_t body_wire_limit(size_t max_body) { return max_body + max_body / 16 + (64u << 10); }

}  // namespace

ConnectionStream::ConnectionStream(int socket, const ServerLimits& limits, const std::atomic<bool>& stopping)
    : socket_(socket), limits_(limits), stopping_(stopping) {}

ConnectionStream::~ConnectionStream() {
    if (t_current == this) t_current = nullptr;
    ::shutdown(socket_, SHUT_RDWR);
    ::close(socket_);
}

ConnectionStream* ConnectionStream::current() { return t_current; }
void ConnectionStream::make_current() { t_current = this; }

void ConnectionStream::begin_headers(Clock::time_point from) {
    phase_ = Phase::headers;
    deadline_ = from + limits_.header_timeout;
    header_bytes_ = body_bytes_ = 0;
    last_four_ = 0;
    body_too_large_ = timed_out_ = close_after_response_ = false;
}

void ConnectionStream::start_first_request(Clock::time_point opened) { begin_headers(opened); }

bool ConnectionStream::next_request(Clock::time_point first_byte_by) {
    if (offset_ == buffered_ && !wait_readable(first_byte_by)) return false;
    begin_headers(Clock::now());
    return true;
}

bool ConnectionStream::wait_readable(Clock::time_point deadline) const {
    for (;;) {
        if (stopping_.load()) return false;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return false;
        pollfd p{socket_, POLLIN, 0};
        const int r = ::poll(&p, 1, int(std::min(left, std::chrono::milliseconds(kSlice)).count()));
        if (r > 0) return true;  // data, or an end or error that recv reports
        if (r < 0 && errno != EINTR) return false;
    }
}

bool ConnectionStream::peer_closed() const {
    pollfd p{socket_, POLLRDHUP, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

bool ConnectionStream::is_readable() const {
    if (offset_ < buffered_) return true;
    pollfd p{socket_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

bool ConnectionStream::is_writable() const {
    const auto deadline = Clock::now() + limits_.write_timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return false;
        pollfd p{socket_, POLLOUT, 0};
        const int r = ::poll(&p, 1, int(left.count()));
        if (r > 0) return (p.revents & (POLLERR | POLLHUP)) == 0;
        if (r < 0 && errno != EINTR) return false;
    }
}

void ConnectionStream::take(const char* bytes, size_t n) {
    if (phase_ == Phase::body) {
        body_bytes_ += n;
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        if (phase_ == Phase::body) {
            body_bytes_ += n - i;
            return;
        }
        ++header_bytes_;
        last_four_ = (last_four_ << 8) | uint8_t(bytes[i]);
        if (last_four_ == 0x0d0a0d0a) {  // "\r\n\r\n": the blank line after the headers
            phase_ = Phase::body;
            deadline_ = Clock::now() + limits_.body_timeout;
        }
    }
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
    if (phase_ == Phase::headers && header_bytes_ >= limits_.max_header_bytes) return -1;
    if (phase_ == Phase::body && body_bytes_ >= body_wire_limit(limits_.max_body_bytes)) {
        body_too_large_ = true;
        return -1;
    }
    if (offset_ == buffered_) {
        if (!wait_readable(deadline_)) {
            timed_out_ = !stopping_.load();
            return -1;
        }
        ssize_t n;
        do n = ::recv(socket_, buffer_, sizeof buffer_, 0);
        while (n < 0 && errno == EINTR);
        if (n <= 0) return n;
        buffered_ = size_t(n);
        offset_ = 0;
    }
    const size_t n = std::min(size, buffered_ - offset_);
    std::memcpy(ptr, buffer_ + offset_, n);
    take(buffer_ + offset_, n);
    offset_ += n;
    return ssize_t(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = ::send(socket_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
    const SocketAddress a = peer_address(socket_);
    ip = a.ip;
    port = a.port;
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
    const SocketAddress a = local_address(socket_);
    ip = a.ip;
    port = a.port;
}

}  // namespace hetero::serve
