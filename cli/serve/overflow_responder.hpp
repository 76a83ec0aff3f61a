// Answers the connections a full server does not admit, on one thread of its
// own, without tying up a connection thread: GET /health as usual (a health
// check keeps working while a client holds every place it may), anything
// else 503 with an OpenAI error object. Each gets a second to send its
// request line; at most 64 wait at once, more are refused unread.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hetero::serve {

class OverflowResponder {
public:
    // `refusal`: the error message of the 503.
    explicit OverflowResponder(std::string refusal);
    ~OverflowResponder();  // answers what it holds with 503, then stops
    OverflowResponder(const OverflowResponder&) = delete;
    OverflowResponder& operator=(const OverflowResponder&) = delete;

    // Takes `socket` (a connected client) to answer and close.
    void take(int socket);

private:
    struct Waiting {
        int socket;
        std::chrono::steady_clock::time_point deadline;
        std::string received;
    };
    void run();
    // Reads what has arrived; true once the request line is complete (or can never be).
    static bool read_request_line(Waiting& w);
    void answer(const Waiting& w) const;

    const std::string refusal_;
    const int wake_;  // eventfd: a socket was taken, or stopping
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;
    std::vector<int> incoming_;
    std::thread thread_;
};

}  // namespace hetero::serve
