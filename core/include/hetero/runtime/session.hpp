// Runs a llama-family model over a Plan. The model graph of each chunk size
// is cut into tasks where the device changes or a matmul is split across
// devices (make_schedule, hetero/schedule/schedule.hpp); the session compiles
// that schedule and every device runs its tasks in order on its own worker thread
// (on the calling thread when the plan uses one device), tensors that cross
// devices are handed over through host memory (imported, so not copied, by
// devices that share the host's memory), and the row shares of a split
// matmul are merged where the next op runs. Weights are uploaded once per
// device (only the rows a device computes), each layer's KV cache lives on
// its home device. A session may hold several sequences (a server's slots),
// each with its own KV cache, and advance them together: a batched decode
// step runs one token of each through every matmul as one batch of rows,
// and each sequence's attention against its own cache (build_batch_graph).
#pragma once

#include <hetero/error.hpp>
#include <hetero/model/model.hpp>
#include <hetero/runtime/device.hpp>
#include <hetero/runtime/plan.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hetero {

class CostModel;
class TraceRecorder;
struct SessionDevice;   // the session's parts (core/runtime/session_parts.hpp)
struct SessionProgram;

// How a device waits for another's result. predicted_poll: sleep for the
// predicted remaining time, then poll a flag (HeteroLLM's fast
// synchronisation); block: a condition variable.
enum class SyncMode { predicted_poll, block };

struct SessionOptions {
    int32_t n_ctx = 0;        // 0 = the training context, clamped to [512, 4096]
    int32_t max_batch = 512;  // longer prompts are evaluated in chunks of this size (or of a static-shape device's chunk_tokens, when smaller)
    CacheType cache_type = CacheType::automatic;
    SyncMode sync = SyncMode::predicted_poll;
    const CostModel* cost = nullptr;  // when set, traces show each task's predicted time
    TraceRecorder* trace = nullptr;   // when set, every task, transfer and wait is recorded (tasks are waited for one by one)
    bool all_logits = false;          // forward returns every token's logits (perplexity), not only the last one's
    // Sequences the KV cache holds, each with n_ctx rows of its own (a
    // server's slots); forward() evaluates sequence 0.
    int32_t n_seq = 1;
};

// The context a session uses: `requested` when > 0, else the training
// context clamped to [512, 4096] (some converters record less than the model
// was trained with).
int32_t context_length(const LlamaHParams& hp, int32_t requested);

// The most tokens one forward of a session evaluates (its prompt chunks):
// max_batch, at most the context and at most the chunk_tokens of a
// static-shape device the plan uses.
int32_t chunk_limit(const Plan& plan, int32_t max_batch, int32_t n_ctx);

// Time spent per device, for the "which provider ran what" report.
struct SegmentStats {
    std::string label;
    double seconds = 0;  // host-side seconds its worker spent submitting and waiting for its tasks
    int64_t runs = 0;    // executes
    // Device seconds the provider reported for its executes (event_seconds),
    // and whether they are modelled (a simulated device); < 0 = none reported.
    double device_seconds = -1;
    bool simulated = false;
    // Bytes of the buffers the session allocated on the device: weights it
    // copied there, KV caches, activations. Host memory a device imports
    // (the mapped file on a CPU device) is not counted.
    uint64_t allocated_bytes = 0;
};

// A device of the plan failed while the session used it: one of its
// provider's calls (execute, event_wait, a buffer read, write or allocation,
// a compile) returned an error status. The message is the provider's error;
// device() is its index in Plan::devices. Errors of the model itself
// (non-finite logits, a full context) are plain hetero::Error.
class DeviceFault : public ProviderError {
public:
    DeviceFault(size_t device, std::string label, const ProviderError& cause)
        : ProviderError(cause), device_(device), label_(std::move(label)) {}
    size_t device() const { return device_; }
    const std::string& label() const { return label_; }  // "opencl:0"

private:
    size_t device_;
    std::string label_;
};

// What generate() needs: tokens in, logits out. Session runs one plan;
// ResilientSession (resilient_session.hpp) re-plans when a device fails.
class Evaluator {
public:
    virtual ~Evaluator() = default;
    // Evaluates tokens at positions pos, pos+1, ...; returns the logits of the
    // last token (see Session::forward); valid until the next call.
    virtual const std::vector<float>& forward(const std::vector<int32_t>& tokens, int32_t pos) = 0;
    virtual int32_t n_ctx() const = 0;
};

// One token of one sequence in a batched decode step.
struct SeqToken {
    int32_t seq = 0;    // which of the evaluator's sequences
    int32_t token = 0;
    int32_t pos = 0;    // its position in that sequence
};

// Several sequences in one KV cache, each with its own tokens and positions
// (a server's slots): a sequence is evaluated on its own (its prompt), and
// sequences that decode advance together, one token each, in one step whose
// matmuls read the weights once for all of them.
class BatchEvaluator {
public:
    virtual ~BatchEvaluator() = default;
    virtual int32_t n_seq() const = 0;
    virtual int32_t n_ctx() const = 0;  // per sequence
    // Evaluates tokens of sequence `seq` at positions pos, pos+1, ...; returns
    // the logits of the last token; valid until the next call.
    virtual const std::vector<float>& forward_seq(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) = 0;
    // One token for each of several distinct sequences; returns
    // [steps.size(), n_vocab] logits, row i for steps[i]; valid until the next call.
    virtual const std::vector<float>& decode_batch(const std::vector<SeqToken>& steps) = 0;
    // The final hidden states of tokens of sequence `seq` at positions pos,
    // pos+1, ... (after the output norm, before the output head):
    // [tokens.size(), n_embd], row i for tokens[i]; the vocabulary logits are
    // not computed. Writes the sequence's KV cache as forward_seq does; valid
    // until the next call. Evaluators that cannot give them throw hetero::Error.
    virtual const std::vector<float>& hidden_states(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos);
};

// One sequence of a BatchEvaluator as an Evaluator (a PrefixCache per slot).
class SequenceEvaluator : public Evaluator {
public:
    SequenceEvaluator(BatchEvaluator& batch, int32_t seq) : batch_(batch), seq_(seq) {}
    const std::vector<float>& forward(const std::vector<int32_t>& tokens, int32_t pos) override { return batch_.forward_seq(seq_, tokens, pos); }
    int32_t n_ctx() const override { return batch_.n_ctx(); }
    int32_t seq() const { return seq_; }

private:
    BatchEvaluator& batch_;
    int32_t seq_;
};

// One sequence's K and V cache of one layer, on the layer's home: buffers
// of its own, or its part (from `offset`) of the layer's stacked buffers.
struct KvCache {
    hetero_buffer* k = nullptr;
    hetero_buffer* v = nullptr;
    uint64_t offset = 0;
};

class Session : public Evaluator, public BatchEvaluator {
public:
    Session(const ModelFile& model, const Plan& plan, const SessionOptions& options = {});
    ~Session() override;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Evaluates tokens at positions pos, pos+1, ...; returns the logits of the
    // last token, or with SessionOptions::all_logits those of every token
    // ([tokens.size(), n_vocab]); valid until the next call. Throws
    // DeviceFault when a device fails (the session should not be used
    // further then), hetero::Error for everything else.
    const std::vector<float>& forward(const std::vector<int32_t>& tokens, int32_t pos) override { return forward_seq(0, tokens, pos); }
    // The same for any sequence of the KV cache (SessionOptions::n_seq).
    const std::vector<float>& forward_seq(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) override;
    // One batched decode step (BatchEvaluator); one step alone runs as a forward of one token.
    const std::vector<float>& decode_batch(const std::vector<SeqToken>& steps) override;
    // BatchEvaluator::hidden_states, through a graph without the vocabulary matmul (build_hidden_graph).
    const std::vector<float>& hidden_states(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) override;

    int32_t n_ctx() const override { return n_ctx_; }
    int32_t n_seq() const override { return options_.n_seq; }
    // Decode steps of several sequences attend over stacked caches (one
    // ATTENTION_SEQS a layer) rather than per sequence.
    bool stacked_caches() const { return stacked_; }
    const Plan& plan() const { return plan_; }
    std::vector<SegmentStats> stats() const;
    // Builds the n-token program now (uploading the weights it reads and
    // compiling its executables), so that the first forward of n tokens does
    // not pay them. Throws as forward does.
    void prepare(int32_t n);
    // Builds the programs of every decode-step bucket over stacked caches
    // (2, 4, ... up to the session's sequences), so that a server's first
    // step of each size does not pay their compile. Nothing without them.
    void prepare_decode_steps();

private:
    SessionProgram& program(int32_t n);        // the schedule for n tokens of one sequence, compiled (once per n)
    SessionProgram& batch_program(int32_t n);  // the schedule of a decode step of n sequences, compiled (once per n)
    SessionProgram& hidden_program(int32_t n); // the schedule for n tokens' normed hidden states, compiled (once per n)
    void check_tokens(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) const;  // throws for a bad forward
    SessionProgram& compile(std::unique_ptr<SessionProgram> prog, std::map<int32_t, std::unique_ptr<SessionProgram>>& into);
    std::vector<uint32_t> cache_dtypes() const;  // each layer's KV cache type on its home
    void bind_sequences(SessionProgram& P, const std::vector<int32_t>& seqs);
    // Whether every layer's home runs a decode step's attention over stacked
    // caches (ATTENTION_SEQS); HETERO_STACKED_KV=0 says no.
    bool stacked_caches_usable() const;
    void allocate_caches();
    // The stacked caches hold every sequence and one more, whose row 0 the
    // padding rows of a step write: steps run in buckets of rows.
    int32_t stacked_sequences() const;
    // The rows of a step of n sequences over stacked caches: the next power
    // of two, at most the session's sequences (a program per bucket, not per n).
    int32_t step_bucket(int32_t n) const;
    void run_tasks(SessionProgram& p, size_t device, int32_t pos);
    void begin(SessionProgram& P);             // a new forward of P: inputs are filled for it, then run
    void run(SessionProgram& P, int32_t pos);  // every device's queue of one forward
    // Copies the program's logits to `out` (from offset `at`) and checks them.
    void take_logits(SessionProgram& P, std::vector<float>& out, size_t at, const std::function<int32_t(size_t row)>& position);
    void evaluate_chunk(int32_t seq, const int32_t* tokens, int32_t n, int32_t pos);

    const ModelFile& model_;
    Plan plan_;
    SessionOptions options_;
    int32_t n_ctx_ = 0;
    std::vector<std::unique_ptr<SessionDevice>> devices_;  // parallel to plan_.devices; null where unused
    std::map<int32_t, std::unique_ptr<SessionProgram>> programs_;        // by chunk size
    std::map<int32_t, std::unique_ptr<SessionProgram>> batch_programs_;  // by sequences per decode step
    std::map<int32_t, std::unique_ptr<SessionProgram>> hidden_programs_; // by chunk size
    // Per layer, per sequence: K and V on the layer's home device.
    std::vector<std::vector<KvCache>> kv_caches_;
    bool stacked_ = false;  // one K and one V buffer per layer for every sequence (allocate_caches)
    uint64_t generation_ = 0;  // forwards run
    std::vector<float> logits_, batch_logits_, hidden_;
};

}  // namespace hetero
