// One client connection as cpp-httplib reads and writes it, with deadlines:
// the headers of a request must arrive within ServerLimits::header_timeout
// and be at most max_header_bytes, its body within body_timeout; a read past
// a deadline or a cap fails, which ends the request and the connection. The
// end of the headers is seen in the bytes handed out (the blank line), so the
// deadlines hold whatever the client sends and however slowly.
#pragma once

#include "server_limits.hpp"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>

namespace hetero::serve {

class ConnectionStream : public httplib::Stream {
public:
    using Clock = std::chrono::steady_clock;

    // Takes `socket` (closed by the destructor). `stopping` ends waits early.
    ConnectionStream(int socket, const ServerLimits& limits, const std::atomic<bool>& stopping);
    ~ConnectionStream() override;
    ConnectionStream(const ConnectionStream&) = delete;
    ConnectionStream& operator=(const ConnectionStream&) = delete;

    // A new connection's first request: its headers' deadline runs from `opened`.
    void start_first_request(Clock::time_point opened);
    // A kept-alive connection's next request: waits for its first byte until
    // `first_byte_by` (false when none came or the client left); the headers'
    // deadline runs from that byte.
    bool next_request(Clock::time_point first_byte_by);

    // Whether the client has closed its side (or reset the connection); data
    // it sent and nobody read yet does not count. For a handler that waits.
    bool peer_closed() const;
    bool body_too_large() const { return body_too_large_; }
    bool timed_out() const { return timed_out_; }  // a read ran past the headers' or the body's deadline
    size_t body_bytes() const { return body_bytes_; }
    // The connection ends after the response being written (its request's
    // body was refused unread, so what follows is not a request).
    void close_after_response() { close_after_response_ = true; }
    bool closing() const { return close_after_response_; }

    // The stream serving the calling thread's connection, or null: each
    // connection has a thread of its own, so a handler finds its client here.
    static ConnectionStream* current();
    void make_current();

    // httplib::Stream
    bool is_readable() const override;
    bool is_writable() const override;
    ssize_t read(char* ptr, size_t size) override;
    ssize_t write(const char* ptr, size_t size) override;
    void get_remote_ip_and_port(std::string& ip, int& port) const override;
    void get_local_ip_and_port(std::string& ip, int& port) const override;
    socket_t socket() const override { return socket_; }

private:
    enum class Phase { headers, body };
    void begin_headers(Clock::time_point from);
    // Waits (in short slices, watching `stopping`) until the socket has data; false past `deadline`.
    bool wait_readable(Clock::time_point deadline) const;
    void take(const char* bytes, size_t n);  // phase bookkeeping for bytes handed to httplib

    int socket_;
    const ServerLimits& limits_;
    const std::atomic<bool>& stopping_;
    Phase phase_ = Phase::headers;
    Clock::time_point deadline_;
    size_t header_bytes_ = 0, body_bytes_ = 0;
    uint32_t last_four_ = 0;  // the last bytes of the headers, to see "\r\n\r\n"
    bool body_too_large_ = false, timed_out_ = false, close_after_response_ = false;
    char buffer_[4096];
    size_t buffered_ = 0, offset_ = 0;
};

}  // namespace hetero::serve
