// Counts the open connections, per client address and in total, and admits
// a new one only under both caps (ServerLimits). A ticket is held for as long
// as its connection is open.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace hetero::serve {

class ConnectionAdmission {
public:
    ConnectionAdmission(int max_total, int max_per_client) : max_total_(max_total), max_per_client_(max_per_client) {}

    // Releases its place when destroyed.
    class Ticket {
    public:
        ~Ticket();
        Ticket(const Ticket&) = delete;
        Ticket& operator=(const Ticket&) = delete;

    private:
        friend class ConnectionAdmission;
        Ticket(ConnectionAdmission& owner, std::string client) : owner_(owner), client_(std::move(client)) {}
        ConnectionAdmission& owner_;
        std::string client_;
    };

    // A ticket, or null when `client` or the server is at its cap.
    std::unique_ptr<Ticket> admit(const std::string& client);
    int open() const;

private:
    void release(const std::string& client);

    const int max_total_, max_per_client_;
    mutable std::mutex mutex_;
    int total_ = 0;
    std::map<std::string, int> per_client_;
};

}  // namespace hetero::serve
