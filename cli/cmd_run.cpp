// hetero run: generate text, streaming it to stdout; timings and the plan to stderr.
#include "commands.hpp"
#include "background_profile.hpp"
#include "common.hpp"
#include "logprobs.hpp"
#include "restart_output.hpp"
#include "sampling_flags.hpp"

#include <hetero/engine/loaded_model.hpp>
#include <hetero/runtime/spot_check.hpp>
#include <hetero/runtime/trace.hpp>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>

namespace hetero::cli {

namespace {

struct RunOptions {
    ProviderFlags providers;
    std::string model, tokenizer, prompt;
    int32_t n_predict = 256;
    int32_t ctx = 0;
    std::string cache_type = "auto";
    SamplingFlags sampling;
    bool quiet = false;
    bool verbose = false;
    int32_t verify = 0;
    std::string profile = "off";
    std::string trace;
    std::string logprobs;
    int32_t top_logprobs = 5;
};

// SIGINT / SIGTERM: the generation stops before its next token, the text so
// far and the stats are printed, and the exit code is 128 + the signal.
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
void on_signal(int sig) {
    g_signal.store(sig);
    g_stop.store(true);
}

void run(const RunOptions& o) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    restart_on_plugin_crash();
    Runtime rt = open_runtime(o.providers);
    TraceRecorder trace;
    ModelLoadOptions lo;
    lo.path = o.model;
    lo.tokenizer = o.tokenizer;
    lo.n_ctx = o.ctx;
    lo.cache_type = cache_type_from_name(o.cache_type);
    lo.plan_prompt = o.prompt;
    lo.expected_reply = o.n_predict;
    lo.load_chat_template = false;
    lo.verify_every = o.verify;
    if (!o.trace.empty()) lo.trace = &trace;
    // A device that fails mid-run is dropped: the model is planned again on
    // the devices left and generation goes on.
    LoadedModel model(rt, lo);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!o.quiet) fmt::print(stderr, "plan:\n{}\n", model.initial_plan().describe());
    if (!o.quiet) {
        for (const std::string& n : model.planning_notes()) fmt::print(stderr, "note: {}\n", n);
        for (const UnusedProvider& u : model.unused_providers()) fmt::print(stderr, "note: {} not used: {}\n", u.provider, u.reason);
        if (o.verbose) fmt::print(stderr, "{}", model.describe_candidates());
    }
    const ResilientSession& session = model.session();

    const SamplerOptions sampling = sampler_options(o.sampling, model.n_vocab());
    Sampler sampler(sampling);
    std::unique_ptr<LogprobsWriter> logprobs;
    OnSample on_sample;
    if (!o.logprobs.empty()) {
        logprobs = std::make_unique<LogprobsWriter>(o.logprobs, model.tokenizer(), o.top_logprobs);
        on_sample = [&](const std::vector<float>& logits, int32_t token) { logprobs->write(logits, token); };
    }
    RestartedOutput output;
    const GenerationResult r =
        model.generate(o.prompt, o.n_predict, sampler, [&](const std::string& piece) { output.write(piece, stdout); }, &g_stop, on_sample);
    output.finish(stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    if (r.stats.interrupted) {
        const int sig = g_signal.load();
        fmt::print(stderr, "interrupted by {} after {} of {} tokens\n", sig == SIGINT ? "SIGINT" : "SIGTERM", r.stats.n_generated, o.n_predict);
        exit_code() = 128 + sig;
    }
    if (r.stats.context_full)
        fmt::print(stderr, "stopped after {} of {} tokens: the context ({} tokens) is full\n", r.stats.n_generated, o.n_predict, session.n_ctx());
    if (!o.trace.empty()) write_trace(trace, o.trace);
    if (o.profile == "auto")
        if (const std::string note = start_background_profile(model); !note.empty() && !o.quiet) fmt::print(stderr, "note: {}\n", note);
    if (o.quiet) return;
    for (const std::string& v : model.describe_spot_checks()) fmt::print(stderr, "verify: {}\n", v);
    const auto& s = r.stats;
    if (sampling.temperature > 0) fmt::print(stderr, "seed: {} (--seed {} repeats this run)\n", sampling.seed, sampling.seed);
    fmt::print(stderr, "load: {:.1f} ms; first token after {:.1f} ms\n", load_s * 1e3, (load_s + s.first_token_seconds) * 1e3);
    fmt::print(stderr, "prefill: {} tokens in {:.1f} ms ({:.1f} tok/s)\n", s.n_prompt, s.prefill_seconds * 1e3,
               s.prefill_seconds > 0 ? s.n_prompt / s.prefill_seconds : 0.0);
    fmt::print(stderr, "decode: {} tokens in {:.1f} ms ({:.1f} tok/s)\n", s.n_generated, s.decode_seconds * 1e3,
               s.decode_seconds > 0 ? (s.n_generated > 1 ? (s.n_generated - 1) / s.decode_seconds : 0.0) : 0.0);
    const auto print_stats = [](const std::vector<SegmentStats>& stats, const char* indent) {
        for (const auto& st : stats) {
            fmt::print(stderr, "{}{}: {} runs, {:.1f} ms", indent, st.label, st.runs, st.seconds * 1e3);
            if (st.device_seconds >= 0) fmt::print(stderr, "; device {:.1f} ms{}", st.device_seconds * 1e3, st.simulated ? " (simulated)" : "");
            fmt::print(stderr, "\n");
        }
    };
    if (session.recoveries().empty()) {
        print_stats(session.session().stats(), "  ");
        return;
    }
    // Each session that ran, then the plan the run finished on.
    for (const Recovery& rec : session.recoveries()) {
        fmt::print(stderr, "  until {} failed at position {}:\n", rec.device, rec.position);
        print_stats(rec.stats, "    ");
    }
    fmt::print(stderr, "  after re-planning (replayed {} tokens):\n", session.recoveries().back().position);
    print_stats(session.session().stats(), "    ");
    fmt::print(stderr, "re-planned {} time{}; final plan:\n{}\n", session.recoveries().size(), session.recoveries().size() == 1 ? "" : "s",
               session.plan().describe());
}

}  // namespace

void add_run_command(CLI::App& app) {
    auto o = std::make_shared<RunOptions>();
    CLI::App* cmd = add_model_command(app, "run", "generate text with a model (default: the shipped TinyStories model)", *o);
    cmd->add_option("-p,--prompt", o->prompt, "prompt text");
    cmd->add_option("-n,--n-predict", o->n_predict, "tokens to generate")->check(CLI::NonNegativeNumber);
    cmd->add_option("-c,--ctx-size", o->ctx, "context size (default: the model's, at most 4096)")->check(CLI::NonNegativeNumber);
    add_cache_type_option(*cmd, o->cache_type);
    add_sampling_flags(*cmd, o->sampling);
    cmd->add_flag("-q,--quiet", o->quiet, "print only the generated text");
    cmd->add_option("--verify", o->verify,
                    "every N decode steps, check the step's logits against the cpu provider (tolerance, for every weight and "
                    "cache type: " + spot_check_tolerance() + "); a provider that disagrees is named, dropped and the model "
                    "re-planned without it; the cost is printed at the end")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--profile", o->profile,
                    "auto: after the answer, profile in the background the devices the plan used that have no profile for this "
                    "model (later runs plan with it); off (default)")
        ->check(CLI::IsMember({"off", "auto"}));
    cmd->add_flag("-v,--verbose", o->verbose, "also print each device alone against the plan (predicted prefill, decode, builds)");
    cmd->add_option("--trace", o->trace, "write a Chrome trace (Perfetto, chrome://tracing) of every device's work to FILE");
    cmd->add_option("--logprobs", o->logprobs,
                    "write one JSON line per sampled token to FILE: its id, piece, log-probability and the --top-logprobs most likely tokens");
    cmd->add_option("--top-logprobs", o->top_logprobs, "alternatives per line of --logprobs (default 5)")->check(CLI::Range(1, 1000));
    o->providers.add_to(*cmd);
    cmd->callback([o] { run(*o); });
}

}  // namespace hetero::cli
