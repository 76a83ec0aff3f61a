// cpp-httplib's request handling behind an accept loop of our own, so that
// no client can stall the server: every admitted connection has a thread of
// its own (none waits in a queue behind slow clients), connections past the
// caps of ServerLimits go to an OverflowResponder (/health still answered),
// and each request's headers and body must arrive within their deadlines
// (ConnectionStream). Routes are registered as on any httplib::Server.
#pragma once

#include "connection_admission.hpp"
#include "overflow_responder.hpp"
#include "server_limits.hpp"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace hetero::serve {

class GuardedServer : public httplib::Server {
public:
    explicit GuardedServer(const ServerLimits& limits);
    ~GuardedServer() override;  // stops serving and waits for the connection threads

    // After bind_to_port / bind_to_any_port: takes connections until
    // stop_serving(), then waits for the open ones to end. False when
    // accepting failed for another reason.
    bool serve();
    // Thread-safe; requests being read end at once, running handlers finish.
    void stop_serving();
    const ServerLimits& limits() const { return limits_; }

private:
    void serve_connection(int socket, std::chrono::steady_clock::time_point opened);
    void start_connection_thread(int socket, std::unique_ptr<ConnectionAdmission::Ticket> ticket);
    void wait_for_connections();

    const ServerLimits limits_;
    std::atomic<bool> stopping_{false};
    ConnectionAdmission admission_;
    std::unique_ptr<OverflowResponder> overflow_;
    std::mutex threads_mutex_;
    std::condition_variable threads_changed_;
    int threads_ = 0;
};

}  // namespace hetero::serve
