#include "connection_admission.hpp"

namespace hetero::serve {

ConnectionAdmission::Ticket::~Ticket() { owner_.release(client_); }

std::unique_ptr<ConnectionAdmission::Ticket> ConnectionAdmission::admit(const std::string& client) {
    std::lock_guard lock(mutex_);
    if (total_ >= max_total_) return nullptr;
    int& mine = per_client_[client];
    if (mine >= max_per_client_) return nullptr;
    ++mine;
    ++total_;
    return std::unique_ptr<Ticket>(new Ticket(*this, client));
}

int ConnectionAdmission::open() const {
    std::lock_guard lock(mutex_);
    return total_;
}

void ConnectionAdmission::release(const std::string& client) {
    std::lock_guard lock(mutex_);
    --total_;
    if (const auto it = per_client_.find(client); it != per_client_.end() && --it->second <= 0) per_client_.erase(it);
}

}  // namespace hetero::serve
