#include "overflow_responder.hpp"

#include "openai_response.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hetero::serve {

namespace {

constexpr size_t kMaxWaiting = 64;
constexpr auto kRequestLineTime = std::chrono::seconds(1);
constexpr size_t kMaxReceived = 4096;

std::string http_response(const char* status, const std::string& body, const char* extra_headers = "") {
    return fmt::format("HTTP/1.1 {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n{}", status,
                       body.size(), extra_headers, body);
}

void send_and_close(int socket, const std::string& response) {
    (void)::send(socket, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::shutdown(socket, SHUT_WR);
    ::close(socket);
}

}  // namespace

OverflowResponder::OverflowResponder(std::string refusal)
    : refusal_(http_response("503 Service Unavailable", to_text(error_body(ApiError(503, "server_error", std::move(refusal), "", "too_many_connections"))),
                             "Retry-After: 1\r\n")),
      wake_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      thread_([this] { run(); }) {}

OverflowResponder::~OverflowResponder() {
    stopping_.store(true);
    const uint64_t one = 1;
    (void)::write(wake_, &one, sizeof one);
    thread_.join();
    for (int s : incoming_) send_and_close(s, refusal_);
    ::close(wake_);
}

void OverflowResponder::take(int socket) {
    ::fcntl(socket, F_SETFL, ::fcntl(socket, F_GETFL) | O_NONBLOCK);
    {
        std::lock_guard lock(mutex_);
        incoming_.push_back(socket);
    }
    const uint64_t one = 1;
    (void)::write(wake_, &one, sizeof one);
}

bool OverflowResponder::read_request_line(Waiting& w) {
    char buf[1024];
    for (;;) {
        const ssize_t n = ::recv(w.socket, buf, sizeof buf, 0);
        if (n == 0) return true;  // the client closed: answer (into the void) and close
        if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
        w.received.append(buf, size_t(n));
        if (w.received.size() >= kMaxReceived) return true;
        if (w.received.find('\n') != std::string::npos) return true;
    }
}

void OverflowResponder::answer(const Waiting& w) const {
    const std::string_view r = w.received;
    const bool health = r.starts_with("GET /health ") || r.starts_with("GET /health?");
    send_and_close(w.socket, health ? http_response("200 OK", R"({"status":"ok"})") : refusal_);
}

void OverflowResponder::run() {
    std::vector<Waiting> waiting;
    while (!stopping_.load()) {
        {
            std::lock_guard lock(mutex_);
            for (int s : incoming_) {
                if (waiting.size() >= kMaxWaiting)
                    send_and_close(s, refusal_);
                else
                    waiting.push_back({s, std::chrono::steady_clock::now() + kRequestLineTime, {}});
            }
            incoming_.clear();
        }
        std::vector<pollfd> fds{{wake_, POLLIN, 0}};
        for (const Waiting& w : waiting) fds.push_back({w.socket, POLLIN, 0});
        ::poll(fds.data(), fds.size(), 50);
        if (fds[0].revents & POLLIN) {
            uint64_t n;
            (void)::read(wake_, &n, sizeof n);
        }
        const auto now = std::chrono::steady_clock::now();
        std::vector<Waiting> still;
        for (size_t i = 0; i < waiting.size(); ++i) {
            Waiting& w = waiting[i];
            if ((fds[i + 1].revents && read_request_line(w)) || now >= w.deadline)
                answer(w);
            else
                still.push_back(std::move(w));
        }
        waiting.swap(still);
    }
    for (const Waiting& w : waiting) send_and_close(w.socket, refusal_);
}

}  // namespace hetero::serve
