// Session::program: one chunk size's schedule, compiled. The schedule says
// what each device runs and which tensors cross; here every hand-over gets
// host memory and a binding on each device that touches it, and every
// execute task becomes one graph compiled on its device.
#include <hetero/crash_report.hpp>
#include <hetero/progress.hpp>
#include <hetero/runtime/graph_builder.hpp>
#include <hetero/runtime/trace.hpp>
#include <hetero/sdk/graph_check.hpp>

#include "session_parts.hpp"

#include <algorithm>

namespace hetero {

namespace {

// A session's programs, one per row count, compiled on first use.
using ProgramCache = std::map<int32_t, std::unique_ptr<SessionProgram>>;

SessionProgram* cached_program(const ProgramCache& cache, int32_t n) {
    auto found = cache.find(n);
    return found == cache.end() ? nullptr : found->second.get();
}

std::unique_ptr<SessionProgram> new_program(int32_t n, ModelGraph graph) {
    auto prog = std::make_unique<SessionProgram>();
    prog->n = n;
    prog->graph = std::move(graph);
    return prog;
}

// Binds a program's hand-overs on devices and builds its tasks' graphs.
class ProgramCompiler {
public:
    ProgramCompiler(const ModelFile& model, const Plan& plan, std::vector<std::unique_ptr<SessionDevice>>& devices,
                    const KvCaches& kv_caches, SessionProgram& program, TraceRecorder* trace)
        : model_(model), plan_(plan), devices_(devices), kv_caches_(kv_caches), P_(program), trace_(trace) {}

    // Builds execute task `ti`'s graph, binds what it touches and compiles it.
    void compile(size_t ti);

private:
    Exchange::OnDevice& bind_on(int x, size_t device);
    // The id in `gb` of graph tensor `id` as task `t` sees it, bound or constant as it must be.
    int32_t map_tensor(GraphBuilder& gb, std::map<int32_t, int32_t>& local, std::vector<hetero_binding>& constants, size_t ti, int32_t id,
                       bool is_output);

    const ModelFile& model_;
    const Plan& plan_;
    std::vector<std::unique_ptr<SessionDevice>>& devices_;
    const KvCaches& kv_caches_;
    SessionProgram& P_;
    TraceRecorder* trace_;
};

// A device's binding of a hand-over: imported host memory, or its own buffer;
// the head's input inside the final hidden state's binding on its producer.
Exchange::OnDevice& ProgramCompiler::bind_on(int x, size_t d) {
    Exchange& e = *P_.exchanges[size_t(x)];
    auto it = e.on_device.find(d);
    if (it != e.on_device.end()) return it->second;
    Exchange::OnDevice od;
    if (e.alias_of >= 0 && long(d) == e.producer) {
        Exchange::OnDevice& base = P_.exchanges[size_t(e.alias_of)]->on_device.at(d);
        od.buffer = base.buffer;
        od.offset = base.offset + e.alias_offset;
        od.imported = base.imported;
    } else {
        SessionDevice& dv = *devices_[d];
        od.buffer = dv.import(e.host->data, e.bytes);
        od.imported = od.buffer != nullptr;
        if (!od.buffer) od.buffer = dv.alloc(e.bytes, e.name);
    }
    return e.on_device.emplace(d, od).first->second;
}

int32_t ProgramCompiler::map_tensor(GraphBuilder& gb, std::map<int32_t, int32_t>& local, std::vector<hetero_binding>& constants, size_t ti,
                                    int32_t id, bool is_output) {
    auto it = local.find(id);
    if (it != local.end()) return it->second;
    const ScheduledTask& t = P_.schedule.tasks[ti];
    CompiledTask& c = P_.compiled[ti];
    SessionDevice& dv = *devices_[t.device];
    const bool split = t.share >= 0;
    const ModelTensor& mt = P_.graph.tensors[size_t(id)];
    std::vector<int64_t> shape(mt.desc.shape, mt.desc.shape + mt.desc.ndim);
    int32_t lid = -1;
    if (mt.use == TensorUse::weight) {
        const WeightView& w = model_.weight(mt.desc.name);
        int64_t r0 = 0, r1 = w.shape[0];
        if (split) {
            r0 = t.rows.row_begin;
            r1 = t.rows.row_end;
            shape[0] = r1 - r0;
        }
        lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_CONSTANT, mt.desc.name);
        constants.push_back({lid, 0, dv.weight(w, r0, r1), 0});
    } else if (mt.use == TensorUse::k_cache || mt.use == TensorUse::v_cache) {
        lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_BOUND, mt.desc.name);
        if (plan_.layers[size_t(mt.layer)].home != t.device)
            throw Error(fmt::format("internal: layer {} attention is not on its KV cache's device", mt.layer));
        // Sequence 0's cache until the session binds the sequence a run is
        // for; the stacked caches start with sequence 0's rows.
        const KvCache& kv = kv_caches_[size_t(mt.layer)].front();
        const bool k = mt.use == TensorUse::k_cache;
        c.caches.push_back({c.bindings.size(), mt.layer, k, mt.seq});
        c.bindings.push_back({lid, 0, k ? kv.k : kv.v, kv.offset});
    } else if (split && is_output) {
        // The share's own rows of the output, handed to the merge.
        const int x = t.outputs.front();
        shape = {shape[0], t.rows.row_end - t.rows.row_begin};
        lid = gb.tensor(HETERO_DTYPE_F32, shape, HETERO_TENSOR_BOUND, P_.exchanges[size_t(x)]->name);
        const Exchange::OnDevice& od = bind_on(x, t.device);
        c.bindings.push_back({lid, 0, od.buffer, od.offset});
        return lid;  // not memoised: the split output is not the model tensor
    } else if (mt.view_of >= 0) {
        // Rows of a batched step's tensor: bound inside the memory its base is bound to.
        const int x = P_.schedule.hand_over_of[size_t(mt.view_of)];
        if (x < 0) throw Error(fmt::format("internal: {} is a view of {}, which no task hands over", mt.desc.name, P_.graph.name(mt.view_of)));
        lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_BOUND, mt.desc.name);
        const Exchange::OnDevice& od = bind_on(x, t.device);
        c.bindings.push_back({lid, 0, od.buffer, od.offset + mt.view_offset});
    } else if (const int x = P_.schedule.hand_over_of[size_t(id)]; x >= 0) {
        lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_BOUND, mt.desc.name);
        const Exchange::OnDevice& od = bind_on(x, t.device);
        c.bindings.push_back({lid, 0, od.buffer, od.offset});
    } else {
        lid = gb.tensor(mt.desc.dtype, shape, HETERO_TENSOR_INTERNAL, mt.desc.name);
    }
    local[id] = lid;
    return lid;
}

void ProgramCompiler::compile(size_t ti) {
    const ScheduledTask& t = P_.schedule.tasks[ti];
    CompiledTask& c = P_.compiled[ti];
    SessionDevice& dv = *devices_[t.device];
    const auto t0 = TraceRecorder::Clock::now();
    const uint64_t uploaded = dv.uploaded_bytes;
    const double upload_seconds = dv.upload_seconds;
    GraphBuilder gb;
    std::map<int32_t, int32_t> local;
    std::vector<hetero_binding> constants;
    for (size_t i : t.nodes) {
        const hetero_node& nd = P_.graph.nodes[i].node;
        hetero_node ln = nd;
        for (uint32_t k = 0; k < nd.n_inputs; ++k) ln.inputs[k] = map_tensor(gb, local, constants, ti, nd.inputs[k], false);
        ln.output = map_tensor(gb, local, constants, ti, nd.output, true);
        gb.node(ln);
    }
    // The head's input is written with the final hidden state: bound inside it.
    for (int x : t.outputs)
        if (P_.exchanges[size_t(x)]->alias_of >= 0) bind_on(x, t.device);
    const hetero_graph view = gb.view();
    if (std::string e = sdk::check_graph(view); !e.empty()) throw Error("internal graph error: " + e);
    const auto tc = TraceRecorder::Clock::now();
    const PluginCall call("compile");
    dv.check(dv.api->compile(dv.p->ep(), dv.dev, &view, constants.data(), constants.size(), &c.exe),
             fmt::format("compiling {} for {} tokens on {}", t.name, P_.n, dv.ref.label()));
    if (!trace_) return;
    // One-off work, apart from the executes: the weights this task uploaded
    // first, then the provider's compile.
    if (dv.uploaded_bytes > uploaded)
        trace_->add({dv.ref.label(), fmt::format("upload {} MiB for {}", (dv.uploaded_bytes - uploaded) >> 20, t.name), "upload", t0,
                     dv.upload_seconds - upload_seconds, -1, false, -1, dv.uploaded_bytes - uploaded});
    trace_->add({dv.ref.label(), fmt::format("compile {} ({} tokens)", t.name, P_.n), "compile", tc, seconds_since(tc), -1});
}

// Releases the executables compiled so far unless the program was built.
struct ReleaseOnFailure {
    std::vector<std::unique_ptr<SessionDevice>>& devices;
    SessionProgram& P;
    bool done = false;
    ~ReleaseOnFailure() {
        if (done) return;
        for (size_t ti = 0; ti < P.compiled.size(); ++ti)
            if (P.compiled[ti].exe) devices[P.schedule.tasks[ti].device]->release(P.compiled[ti].exe);
    }
};

}  // namespace

void Session::prepare(int32_t n) {
    if (n < 1 || n > options_.max_batch || n > n_ctx_)
        throw Error(fmt::format("prepare: {} tokens outside 1..{} (chunk size and context)", n, std::min(options_.max_batch, n_ctx_)));
    program(n);
}

void Session::prepare_decode_steps() {
    if (!stacked_) return;
    for (int32_t b = 2;; b *= 2) {
        batch_program(std::min(b, options_.n_seq));
        if (b >= options_.n_seq) break;
    }
}

SessionProgram& Session::program(int32_t n) {
    if (SessionProgram* p = cached_program(programs_, n)) return *p;
    return compile(new_program(n, build_model_graph(model_, n, n_ctx_, cache_dtypes(), true, options_.all_logits)), programs_);
}

SessionProgram& Session::hidden_program(int32_t n) {
    if (SessionProgram* p = cached_program(hidden_programs_, n)) return *p;
    return compile(new_program(n, build_hidden_graph(model_, n, n_ctx_, cache_dtypes())), hidden_programs_);
}

SessionProgram& Session::batch_program(int32_t n) {
    if (SessionProgram* p = cached_program(batch_programs_, n)) return *p;
    const int32_t stacked = stacked_ ? stacked_sequences() : 0;
    return compile(new_program(n, build_batch_graph(model_, n, n_ctx_, cache_dtypes(), stacked)), batch_programs_);
}

std::vector<uint32_t> Session::cache_dtypes() const {
    std::vector<uint32_t> cache(size_t(model_.hparams.n_layer));
    for (size_t l = 0; l < cache.size(); ++l) cache[l] = cache_dtype(options_.cache_type, plan_.devices[plan_.layers[l].home].props);
    return cache;
}

SessionProgram& Session::compile(std::unique_ptr<SessionProgram> prog, std::map<int32_t, std::unique_ptr<SessionProgram>>& into) {
    SessionProgram& P = *prog;
    const int32_t n = P.n;
    P.schedule = make_schedule(P.graph, plan_);
    for (const HandOver& h : P.schedule.hand_overs) P.exchanges.push_back(std::make_unique<Exchange>(h));
    P.compiled.resize(P.schedule.tasks.size());

    ReleaseOnFailure release_on_failure{devices_, P};
    ProgramCompiler compiler(model_, plan_, devices_, kv_caches_, P, options_.trace);
    // The first program uploads the weights and compiles kernels: seconds to
    // minutes on a discrete GPU or a cold kernel cache.
    const std::string what = P.graph.n_seq > 1 ? fmt::format("{}-sequence decode", n) : fmt::format("{}-token", n);
    ProgressTask progress(fmt::format("preparing the {} program (weights, kernels)", what), P.schedule.tasks.size(), "tasks");
    for (size_t ti = 0; ti < P.schedule.tasks.size(); ++ti) {
        struct CountWhenDone {
            ProgressTask& progress;
            ~CountWhenDone() { progress.advance(1); }
        } count_when_done{progress};
        if (P.schedule.tasks[ti].kind == TaskKind::execute) compiler.compile(ti);
    }
    SessionProgram& built = *into.emplace(n, std::move(prog)).first->second;
    release_on_failure.done = true;
    return built;
}

}  // namespace hetero
