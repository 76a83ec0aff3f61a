#include <hetero/log.hpp>
#include <hetero/runtime/resilient_session.hpp>

#include <fmt/format.h>

namespace hetero {

namespace {

std::string labels(const std::vector<DeviceRef>& devices) {
    std::string s;
    for (const DeviceRef& d : devices) s += (s.empty() ? "" : ", ") + d.label();
    return s;
}

// The devices a plan runs on.
std::string used_labels(const Plan& plan) {
    std::vector<DeviceRef> used;
    for (size_t d : plan.used_devices()) used.push_back(plan.devices.at(d));
    return labels(used);
}

// The device a spot check blames: the head's home unless that is the
// reference itself, else the first device the plan uses besides it.
size_t checked_device(const Plan& plan, const DeviceRef& reference) {
    auto same = [&](size_t d) { return plan.devices[d].provider == reference.provider && plan.devices[d].index == reference.index; };
    const size_t head = plan.layers.back().home;
    if (!same(head)) return head;
    for (size_t d : plan.used_devices())
        if (!same(d)) return d;
    return head;
}

}  // namespace

ResilientSession::ResilientSession(const ModelFile& model, const Plan& plan, const SessionOptions& options, Replanner replan)
    : model_(model), options_(options), replan_(std::move(replan)) {
    session_ = std::make_unique<Session>(model_, plan, options_);
    n_ctx_ = session_->n_ctx();
}

ResilientSession::~ResilientSession() = default;

void ResilientSession::prepare(int32_t n) {
    try {
        session_->prepare(n);
    } catch (const DeviceFault&) {
    }
}

const std::vector<float>& ResilientSession::forward(const std::vector<int32_t>& tokens, int32_t pos) {
    if (pos < 0 || size_t(pos) > history_.size())
        throw Error(fmt::format("forward at position {}, but only {} tokens were evaluated before", pos, history_.size()));
    Plan plan = session_->plan();
    bool rebuild = false;
    for (;;) {
        try {
            if (rebuild) {
                session_ = std::make_unique<Session>(model_, plan, options_);
                // The new session's KV cache: the history again, as a prefill.
                if (pos > 0) session_->forward(std::vector<int32_t>(history_.begin(), history_.begin() + pos), 0);
                rebuild = false;
            }
            const std::vector<float>& logits = session_->forward(tokens, pos);
            history_.resize(size_t(pos));
            history_.insert(history_.end(), tokens.begin(), tokens.end());
            if (spot_) {
                if (std::string why = spot_->after_forward(history_, pos, tokens.size(), logits); !why.empty()) {
                    const size_t blamed = checked_device(plan, spot_->reference());
                    throw DeviceFault(blamed, plan.devices[blamed].label(),
                                      ProviderError(plan.devices[blamed].provider ? plan.devices[blamed].provider->name() : "?", HETERO_ERR_INTERNAL,
                                                    fmt::format("wrong results: a spot check against {} found that {}", spot_->reference().label(), why)));
                }
            }
            return logits;
        } catch (const DeviceFault& f) {
            Recovery r;
            r.device = f.label();
            r.error = f.what();
            r.position = pos;
            if (session_) r.stats = session_->stats();
            // The failed session goes first: its device memory is freed before
            // the devices left take over its work.
            session_.reset();
            std::vector<DeviceRef> left = plan.devices;
            if (f.device() < left.size()) left.erase(left.begin() + long(f.device()));
            if (left.empty()) throw Error(fmt::format("{} failed and no other device is left to continue on: {}", r.device, r.error));
            Replanned next;
            try {
                next = replan_(left);
            } catch (const std::exception& e) {
                throw Error(fmt::format("{} failed ({}), and the devices left ({}) cannot run the model: {}", r.device, r.error, labels(left), e.what()));
            }
            if (next.plan.devices.empty()) throw Error(fmt::format("{} failed ({}), and re-planning gave no device", r.device, r.error));
            log(LogLevel::warn, fmt::format("{} failed at position {}: {}; re-planned onto {}, replaying {} tokens", r.device, pos, r.error,
                                            used_labels(next.plan), pos));
            // A trace's predicted times need the cost model of the plan that runs.
            cost_ = std::move(next.cost);
            if (options_.cost) options_.cost = cost_.get();
            plan = next.plan;
            if (spot_) {
                bool only_reference = true;
                for (size_t d : plan.used_devices())
                    only_reference = only_reference && plan.devices[d].provider == spot_->reference().provider &&
                                     plan.devices[d].index == spot_->reference().index;
                if (only_reference) spot_->stop();
            }
            r.plan = std::move(next.plan);
            recoveries_.push_back(std::move(r));
            rebuild = true;
        }
    }
}

}  // namespace hetero
