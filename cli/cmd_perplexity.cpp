// hetero perplexity: teacher-forced scoring of a text. Prints the model's
// perplexity on it and, with --reference PROVIDERS, how often the run's top-1
// token agrees with a reference run (e.g. int8 on an NPU against float on the
// CPU) and the mean KL divergence of the reference from the run.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hetero::cli {

namespace {

struct PerplexityOptions {
    ProviderFlags providers;
    std::string model, tokenizer, text_file, reference;
    int32_t window = 256;
    int32_t batch = 0;
    std::string cache_type = "auto";
    bool json = false;
};

// log-softmax of one row of logits, in double.
void log_softmax(const float* logits, size_t n, std::vector<double>& out) {
    const double mx = *std::max_element(logits, logits + n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += std::exp(double(logits[i]) - mx);
    const double lse = mx + std::log(sum);
    out.resize(n);
    for (size_t i = 0; i < n; ++i) out[i] = double(logits[i]) - lse;
}

struct Score {
    int64_t scored = 0;
    double nll = 0, nll_reference = 0, kl = 0;
    int64_t top1_agree = 0;
    double perplexity() const { return std::exp(nll / double(scored)); }
    double perplexity_reference() const { return std::exp(nll_reference / double(scored)); }
};

// Scores window after window; in each, token j is predicted from row j-1.
Score score(Session& run, Session* reference, const std::vector<int32_t>& tokens, int32_t window, int32_t n_vocab) {
    Score s;
    std::vector<double> lp, lq;
    const size_t V = size_t(n_vocab);
    for (const std::vector<int32_t>& w : token_windows(tokens, window)) {
        if (w.size() < 2) break;  // a last single token has nothing to predict it
        // Each session keeps its own logits until its next forward.
        const std::vector<float>& out = run.forward(w, 0);
        const std::vector<float>* ref = reference ? &reference->forward(w, 0) : nullptr;
        for (size_t j = 1; j < w.size(); ++j) {
            const float* row = out.data() + (j - 1) * V;
            log_softmax(row, V, lp);
            s.nll -= lp[size_t(w[j])];
            if (ref) {
                const float* rrow = ref->data() + (j - 1) * V;
                log_softmax(rrow, V, lq);
                s.nll_reference -= lq[size_t(w[j])];
                double kl = 0;
                for (size_t v = 0; v < V; ++v) kl += std::exp(lq[v]) * (lq[v] - lp[v]);
                s.kl += kl;
                s.top1_agree += std::max_element(row, row + V) - row == std::max_element(rrow, rrow + V) - rrow;
            }
            s.scored += 1;
        }
    }
    return s;
}

void perplexity(const PerplexityOptions& o) {
    Runtime rt = open_runtime(o.providers);
    OpenedModel m = open_model(o.model.empty() ? default_model_path() : o.model, o.tokenizer);
    const std::vector<int32_t> tokens = m.tokenizer->encode(read_text_file(o.text_file), true);
    if (tokens.size() < 2) throw Error(fmt::format("text {}: fewer than 2 tokens, nothing to score", o.text_file));
    SessionOptions so;
    so.n_ctx = context_length(m.file.hparams, o.window);
    if (o.window > so.n_ctx) throw Error(fmt::format("--window {} exceeds the context of {}", o.window, so.n_ctx));
    so.max_batch = o.batch > 0 ? o.batch : o.window;
    so.cache_type = cache_type_from_name(o.cache_type);
    so.sync = sync_mode_from_env();
    so.all_logits = true;
    const PlanRequest req = plan_request(so, so.n_ctx, o.window, 0);
    const PlannedRun planned = plan_model(rt, m.file, req);
    Session run(m.file, planned.plan, so);

    std::unique_ptr<Session> reference;
    PlannedRun ref_planned;
    if (!o.reference.empty()) {
        const std::vector<std::string> names = split_list(o.reference);
        std::vector<DeviceRef> devices;
        for (const DeviceRef& d : rt.devices)
            if (std::find(names.begin(), names.end(), d.provider->name()) != names.end()) devices.push_back(d);
        if (devices.empty())
            throw Error(fmt::format("--reference {}: no device of these providers is loaded (add them to --providers)", o.reference));
        ref_planned = plan_on_devices(devices, {}, m.file, req);
        SessionOptions ro = so;
        ro.cache_type = CacheType::f32;
        reference = std::make_unique<Session>(m.file, ref_planned.plan, ro);
    }
    const Score s = score(run, reference.get(), tokens, o.window, m.file.hparams.n_vocab);
    if (o.json) {
        fmt::print("{{\"tokens\": {}, \"scored\": {}, \"window\": {}, \"perplexity\": {:.6f}", tokens.size(), s.scored, o.window, s.perplexity());
        if (reference)
            fmt::print(", \"reference\": \"{}\", \"reference_perplexity\": {:.6f}, \"top1_agreement\": {:.6f}, \"mean_kl\": {:.8f}", o.reference,
                       s.perplexity_reference(), double(s.top1_agree) / double(s.scored), s.kl / double(s.scored));
        fmt::print("}}\n");
        return;
    }
    fmt::print("plan:\n{}\n", planned.plan.describe());
    fmt::print("{} tokens, {} scored in windows of {}: perplexity {:.4f}\n", tokens.size(), s.scored, o.window, s.perplexity());
    if (reference)
        fmt::print("reference ({}): perplexity {:.4f}; top-1 agreement {:.2f} %; mean KL(reference || run) {:.6f} nats\n", o.reference,
                   s.perplexity_reference(), 100.0 * double(s.top1_agree) / double(s.scored), s.kl / double(s.scored));
    for (const auto& st : run.stats())
        if (st.device_seconds >= 0)
            fmt::print("  {}: {} runs; device {:.1f} ms{}\n", st.label, st.runs, st.device_seconds * 1e3, st.simulated ? " (simulated)" : "");
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
    auto o = std::make_shared<PerplexityOptions>();
    CLI::App* cmd = app.add_subcommand("perplexity", "score a text: perplexity, and top-1 agreement with a reference run");
    add_model_options(*cmd, o->model, o->tokenizer);
    cmd->add_option("-f,--file", o->text_file, "the text to score")->required();
    cmd->add_option("--window", o->window, "tokens per scored window (each starts at position 0)")->check(CLI::Range(2, 1 << 20));
    cmd->add_option("--batch", o->batch, "tokens per forward pass (default: the window)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--reference", o->reference, "providers of a reference run to compare with, e.g. cpu (must be loaded too)");
    add_cache_type_option(*cmd, o->cache_type);
    cmd->add_flag("--json", o->json, "print the result as one JSON object");
    o->providers.add_to(*cmd);
    cmd->callback([o] { perplexity(*o); });
}

}  // namespace hetero::cli
