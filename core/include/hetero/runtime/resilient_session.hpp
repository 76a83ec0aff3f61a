// A session that survives a device failing mid-run. It keeps the tokens
// evaluated so far (per sequence); when a forward throws DeviceFault it drops
// that device, asks for a plan on the devices left, builds a new Session on
// it, rebuilds the lost KV cache by evaluating each sequence's token history
// again from position 0 (a prefill), and then evaluates the tokens that failed. Greedy generation
// gives the tokens a run without the failure gives, as long as the devices
// left compute the same logits.
#pragma once

#include <hetero/runtime/cost_model.hpp>
#include <hetero/runtime/plan.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/runtime/spot_check.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hetero {

// A plan for a set of devices, and optionally the cost model it was solved
// with (kept for traces' predicted times when SessionOptions::cost is set).
struct Replanned {
    Plan plan;
    std::unique_ptr<CostModel> cost;
};
// Plans the model on `devices` (never empty); throws hetero::Error when they
// cannot run it.
using Replanner = std::function<Replanned(const std::vector<DeviceRef>& devices)>;

// One recovery: which device failed, at which position, how, and the stats
// of the session that was running then.
struct Recovery {
    std::string device;  // label, "opencl:0"
    std::string error;   // the provider's error
    int32_t position = 0;  // tokens evaluated before the failed forward (replayed)
    std::vector<SegmentStats> stats;  // of the session that failed
    Plan plan;           // the plan it continued with
};

class ResilientSession : public Evaluator, public BatchEvaluator {
public:
    // `options` apply to every session; `replan` is asked for a new plan after
    // each failure.
    ResilientSession(const ModelFile& model, const Plan& plan, const SessionOptions& options, Replanner replan);
    ~ResilientSession() override;
    ResilientSession(const ResilientSession&) = delete;
    ResilientSession& operator=(const ResilientSession&) = delete;

    // As Session::forward; `pos` must not be beyond the tokens evaluated so
    // far (the history the session can replay). A device failure is
    // recovered from as described above (one warning is logged per failure);
    // throws hetero::Error when no device is left or the devices left cannot
    // run the model.
    const std::vector<float>& forward(const std::vector<int32_t>& tokens, int32_t pos) override { return forward_seq(0, tokens, pos); }
    // The same for the session's other sequences (SessionOptions::n_seq), and
    // a batched decode step (each step's `pos` at most its sequence's
    // history); both recover as forward does.
    const std::vector<float>& forward_seq(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) override;
    const std::vector<float>& decode_batch(const std::vector<SeqToken>& steps) override;
    // Session::hidden_states, recovering as forward does.
    const std::vector<float>& hidden_states(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) override;
    int32_t n_ctx() const override { return n_ctx_; }
    int32_t n_seq() const override { return options_.n_seq; }
    // Session::prepare; a device failing here is left to the first forward,
    // which recovers from it as from any failure.
    void prepare(int32_t n);
    // Session::prepare_decode_steps, failures left to the first step likewise.
    void prepare_decode_steps();
    // Every forward of sequence 0 is followed by the spot check (batched
    // decode steps are not checked); a disagreement is a failure of the
    // device that computed the logits (the head's home, or the first device
    // the plan uses besides the reference).
    void set_spot_check(std::unique_ptr<SpotCheck> check) { spot_ = std::move(check); }
    const SpotCheck* spot_check() const { return spot_.get(); }

    const Session& session() const { return *session_; }  // the one running now
    const Plan& plan() const { return session_->plan(); }
    const std::vector<Recovery>& recoveries() const { return recoveries_; }

private:
    // Runs `attempt` on the session, recovering from device failures: after
    // one, the new session gets every sequence's history back, sequence s up
    // to keep[s] tokens, before `attempt` runs again.
    const std::vector<float>& recovering(const std::function<const std::vector<float>&()>& attempt, const std::vector<size_t>& keep,
                                         int32_t position);
    std::vector<size_t> history_sizes() const;
    // Sequence `seq`'s history, once seq and pos are checked (pos at most the
    // tokens evaluated before); `keep` gets what recovering() restores.
    std::vector<int32_t>& checked_history(int32_t seq, int32_t pos, std::vector<size_t>& keep);

    const ModelFile& model_;
    SessionOptions options_;
    Replanner replan_;
    std::unique_ptr<CostModel> cost_;  // of the latest re-plan
    std::unique_ptr<Session> session_;
    int32_t n_ctx_ = 0;
    std::vector<std::vector<int32_t>> history_;  // per sequence: tokens at positions 0, 1, ...
    std::vector<Recovery> recoveries_;
    std::unique_ptr<SpotCheck> spot_;
};

}  // namespace hetero
