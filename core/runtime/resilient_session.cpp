#include <hetero/log.hpp>
#include <hetero/runtime/resilient_session.hpp>

#include <fmt/format.h>

#include <algorithm>

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
    history_.resize(size_t(session_->n_seq()));
}

ResilientSession::~ResilientSession() = default;

void ResilientSession::prepare(int32_t n) {
    try {
        session_->prepare(n);
    } catch (const DeviceFault&) {
    }
}

void ResilientSession::prepare_decode_steps() {
    try {
        session_->prepare_decode_steps();
    } catch (const DeviceFault&) {
    }
}

std::vector<size_t> ResilientSession::history_sizes() const {
    std::vector<size_t> sizes;
    for (const auto& h : history_) sizes.push_back(h.size());
    return sizes;
}

std::vector<int32_t>& ResilientSession::checked_history(int32_t seq, int32_t pos, std::vector<size_t>& keep) {
    if (seq < 0 || size_t(seq) >= history_.size()) throw Error(fmt::format("sequence {} outside the session's 0..{}", seq, history_.size() - 1));
    std::vector<int32_t>& history = history_[size_t(seq)];
    if (pos < 0 || size_t(pos) > history.size())
        throw Error(fmt::format("forward at position {}, but only {} tokens were evaluated before", pos, history.size()));
    keep = history_sizes();
    keep[size_t(seq)] = size_t(pos);
    return history;
}

const std::vector<float>& ResilientSession::forward_seq(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) {
    std::vector<size_t> keep;
    std::vector<int32_t>& history = checked_history(seq, pos, keep);
    return recovering(
        [&]() -> const std::vector<float>& {
            const std::vector<float>& logits = session_->forward_seq(seq, tokens, pos);
            history.resize(size_t(pos));
            history.insert(history.end(), tokens.begin(), tokens.end());
            if (spot_ && seq == 0) {
                const Plan& plan = session_->plan();
                const size_t blamed = checked_device(plan, spot_->reference());
                if (std::string why = spot_->after_forward(history, pos, tokens.size(), logits, plan.devices[blamed].label()); !why.empty()) {
                    throw DeviceFault(blamed, plan.devices[blamed].label(),
                                      ProviderError(plan.devices[blamed].provider ? plan.devices[blamed].provider->name() : "?", HETERO_ERR_INTERNAL,
                                                    fmt::format("wrong results: a spot check against {} found at {}", spot_->reference().label(), why)));
                }
            }
            return logits;
        },
        keep, pos);
}

const std::vector<float>& ResilientSession::hidden_states(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) {
    std::vector<size_t> keep;
    std::vector<int32_t>& history = checked_history(seq, pos, keep);
    return recovering(
        [&]() -> const std::vector<float>& {
            const std::vector<float>& hidden = session_->hidden_states(seq, tokens, pos);
            history.resize(size_t(pos));
            history.insert(history.end(), tokens.begin(), tokens.end());
            return hidden;
        },
        keep, pos);
}

const std::vector<float>& ResilientSession::decode_batch(const std::vector<SeqToken>& steps) {
    std::vector<size_t> keep = history_sizes();
    for (const SeqToken& s : steps) {
        if (s.seq < 0 || size_t(s.seq) >= history_.size()) throw Error(fmt::format("sequence {} outside the session's 0..{}", s.seq, history_.size() - 1));
        if (s.pos < 0 || size_t(s.pos) > history_[size_t(s.seq)].size())
            throw Error(fmt::format("decode step of sequence {} at position {}, but only {} of its tokens were evaluated before", s.seq, s.pos,
                                    history_[size_t(s.seq)].size()));
        keep[size_t(s.seq)] = std::min(keep[size_t(s.seq)], size_t(s.pos));
    }
    return recovering(
        [&]() -> const std::vector<float>& {
            const std::vector<float>& logits = session_->decode_batch(steps);
            for (const SeqToken& s : steps) {
                std::vector<int32_t>& history = history_[size_t(s.seq)];
                history.resize(size_t(s.pos));
                history.push_back(s.token);
            }
            return logits;
        },
        keep, steps.empty() ? 0 : steps.front().pos);
}

const std::vector<float>& ResilientSession::recovering(const std::function<const std::vector<float>&()>& attempt, const std::vector<size_t>& keep,
                                                       int32_t pos) {
    Plan plan = session_->plan();
    bool rebuild = false;
    for (;;) {
        try {
            if (rebuild) {
                session_ = std::make_unique<Session>(model_, plan, options_);
                // The new session's KV caches: each sequence's history again, as a prefill.
                for (size_t s = 0; s < history_.size(); ++s)
                    if (keep[s] > 0)
                        session_->forward_seq(int32_t(s), std::vector<int32_t>(history_[s].begin(), history_[s].begin() + std::ptrdiff_t(keep[s])), 0);
                rebuild = false;
            }
            const std::vector<float>& logits = attempt();
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
            size_t replayed = 0;
            for (size_t k : keep) replayed += k;
            log(LogLevel::warn, fmt::format("{} failed at position {}: {}; re-planned onto {}, replaying {} tokens", r.device, pos, r.error,
                                            used_labels(next.plan), replayed));
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
