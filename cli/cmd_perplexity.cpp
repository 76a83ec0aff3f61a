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
#include <cstdint>
#include <cstring>
#include <fstream>

namespace hetero::cli {

namespace {

struct PerplexityOptions : TextWindowOptions {
    std::string reference;
    int32_t batch = 0;
    std::string cache_type = "auto";
    int32_t chunk = 0;     // > 0: llama-perplexity's method with chunks of this many tokens
    int32_t n_chunks = 0;  // > 0: score at most this many chunks
    std::string llama_logits;
    bool json = false;
};

// The file llama-perplexity --kl-divergence-base writes: "_logits_", n_ctx,
// n_vocab, n_chunk (int32 each), the n_chunk*n_ctx tokens it scored (int32,
// as tokenized: the BOS substitution is not written), then for every chunk
// its n_ctx-1-n_ctx/2 scored rows. A row is nv = 2*((n_vocab+1)/2)+4 uint16:
// two floats (scale, min_log_prob), then per token q, whose log-probability
// is scale*q + min_log_prob; q = 0 stands for anything at or below
// min_log_prob, which lies at most 16 below the row's largest log-probability.
struct LlamaLogits {
    int32_t n_ctx = 0, n_vocab = 0, n_chunk = 0;
    std::vector<int32_t> tokens;
    std::vector<uint16_t> rows;
    size_t nv() const { return 2 * ((size_t(n_vocab) + 1) / 2) + 4; }
    size_t rows_per_chunk() const { return size_t(n_ctx - 1 - n_ctx / 2); }
    const uint16_t* row(size_t chunk, size_t r) const { return rows.data() + (chunk * rows_per_chunk() + r) * nv(); }
};

LlamaLogits read_llama_logits(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(fmt::format("--llama-logits {}: cannot open it", path));
    char magic[8] = {};
    in.read(magic, 8);
    if (!in || std::memcmp(magic, "_logits_", 8) != 0)
        throw Error(fmt::format("--llama-logits {}: not a llama-perplexity --kl-divergence-base file (no _logits_ magic)", path));
    LlamaLogits f;
    in.read(reinterpret_cast<char*>(&f.n_ctx), 4);
    in.read(reinterpret_cast<char*>(&f.n_vocab), 4);
    in.read(reinterpret_cast<char*>(&f.n_chunk), 4);
    if (!in || f.n_ctx < 4 || f.n_vocab < 1 || f.n_chunk < 1)
        throw Error(fmt::format("--llama-logits {}: bad header (n_ctx {}, n_vocab {}, n_chunk {})", path, f.n_ctx, f.n_vocab, f.n_chunk));
    f.tokens.resize(size_t(f.n_ctx) * size_t(f.n_chunk));
    in.read(reinterpret_cast<char*>(f.tokens.data()), std::streamsize(f.tokens.size() * 4));
    f.rows.resize(size_t(f.n_chunk) * f.rows_per_chunk() * f.nv());
    in.read(reinterpret_cast<char*>(f.rows.data()), std::streamsize(f.rows.size() * 2));
    if (!in) throw Error(fmt::format("--llama-logits {}: truncated ({} chunks of {} tokens announced)", path, f.n_chunk, f.n_ctx));
    return f;
}

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
    // Against llama.cpp's rows (--llama-logits).
    double nll_llama = 0, kl_llama = 0, max_dlogprob = 0;
    int64_t top1_llama = 0;
    int64_t max_dlogprob_at = -1;  // token index (in the text) of the row with the largest difference
    double perplexity_llama() const { return std::exp(nll_llama / double(scored)); }
};

// Compares one row of hetero's log-probabilities (lp) with llama.cpp's
// quantized row; `at` is the position in the text of the row, for the report.
void compare_llama_row(const std::vector<double>& lp, const float* logits, const uint16_t* base, int32_t n_vocab, int32_t target, int64_t at,
                       Score& s) {
    float scale = 0, min_lp = 0;
    std::memcpy(&scale, base, 4);
    std::memcpy(&min_lp, base + 2, 4);
    const uint16_t* q = base + 4;
    double kl = 0, dmax = 0;
    int32_t top_base = 0;
    for (int32_t v = 0; v < n_vocab; ++v) {
        const double b = double(scale) * q[v] + double(min_lp);
        if (q[v] > q[top_base]) top_base = v;
        if (b > -16.0) kl += std::exp(b) * (b - lp[size_t(v)]);
        // Below min_log_prob the file holds no value: compare there only
        // where hetero's log-probability is above it.
        const double d = std::fabs(std::max(lp[size_t(v)], double(min_lp)) - b);
        dmax = std::max(dmax, d);
    }
    s.nll_llama -= double(scale) * q[target] + double(min_lp);
    s.kl_llama += kl;
    if (dmax > s.max_dlogprob) {
        s.max_dlogprob = dmax;
        s.max_dlogprob_at = at;
    }
    s.top1_llama += std::max_element(logits, logits + n_vocab) - logits == top_base;
}

// llama-perplexity's method (see the top of this file): whole chunks of
// `chunk` tokens, BOS first, the second half scored.
Score score_chunks(Session& run, const std::vector<int32_t>& tokens, int32_t chunk, int32_t n_chunks, int32_t bos, int32_t n_vocab,
                   const LlamaLogits* llama) {
    Score s;
    std::vector<double> lp;
    const size_t V = size_t(n_vocab);
    const int32_t first = chunk / 2;
    for (int32_t c = 0; c < n_chunks; ++c) {
        std::vector<int32_t> w(tokens.begin() + long(c) * chunk, tokens.begin() + long(c + 1) * chunk);
        if (bos >= 0) w[0] = bos;
        const std::vector<float>& out = run.forward(w, 0);
        for (int32_t j = first; j < chunk - 1; ++j) {
            const float* row = out.data() + size_t(j) * V;
            log_softmax(row, V, lp);
            s.nll -= lp[size_t(w[size_t(j) + 1])];
            if (llama)
                compare_llama_row(lp, row, llama->row(size_t(c), size_t(j - first)), n_vocab, w[size_t(j) + 1], int64_t(c) * chunk + j, s);
            s.scored += 1;
        }
    }
    return s;
}

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

    // llama-perplexity's chunks: from --chunk, or from the --llama-logits file.
    LlamaLogits llama;
    int32_t chunk = o.chunk, n_chunks = 0;
    if (!o.llama_logits.empty()) {
        if (!o.reference.empty()) throw Error("--llama-logits and --reference cannot be combined");
        llama = read_llama_logits(o.llama_logits);
        if (chunk > 0 && chunk != llama.n_ctx)
            throw Error(fmt::format("--chunk {} differs from the chunk of {} tokens in {}", chunk, llama.n_ctx, o.llama_logits));
        chunk = llama.n_ctx;
        if (llama.n_vocab != m.file.hparams.n_vocab)
            throw Error(fmt::format("--llama-logits {}: vocabulary of {} tokens, the model has {}", o.llama_logits, llama.n_vocab,
                                    m.file.hparams.n_vocab));
        if (tokens.size() < llama.tokens.size())
            throw Error(fmt::format("--llama-logits {}: it scored {} tokens, the text {} tokenizes to only {}: a different text?", o.llama_logits,
                                    llama.tokens.size(), o.text_file, tokens.size()));
        for (size_t i = 0; i < llama.tokens.size(); ++i)
            if (tokens[i] != llama.tokens[i])
                throw Error(fmt::format("--llama-logits {}: token {} is {} there and {} in hetero's tokenization of {} "
                                        "(the tokenizations differ, so the logits cannot be compared)",
                                        o.llama_logits, i, llama.tokens[i], tokens[i], o.text_file));
        n_chunks = llama.n_chunk;
        if (o.n_chunks > 0) n_chunks = std::min(n_chunks, o.n_chunks);
    } else if (chunk > 0) {
        if (chunk < 4) throw Error(fmt::format("--chunk {}: at least 4 tokens", chunk));
        n_chunks = int32_t(tokens.size() / size_t(chunk));
        if (o.n_chunks > 0) n_chunks = std::min(n_chunks, o.n_chunks);
        if (n_chunks < 1)
            throw Error(fmt::format("text {}: {} tokens, fewer than one chunk of {}", o.text_file, tokens.size(), chunk));
    }
    const int32_t span = chunk > 0 ? chunk : o.window;
    SessionOptions so;
    so.n_ctx = context_length(m.file.hparams, span);
    if (span > so.n_ctx) throw Error(fmt::format("{} {} exceeds the context of {}", chunk > 0 ? "--chunk" : "--window", span, so.n_ctx));
    so.max_batch = o.batch > 0 ? o.batch : span;
    so.cache_type = cache_type_from_name(o.cache_type);
    so.sync = sync_mode_from_env();
    so.all_logits = true;
    const PlanRequest req = plan_request(so, so.n_ctx, span, 0);
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
    if (chunk > 0 && reference) throw Error("--chunk and --reference cannot be combined");
    const int32_t bos = m.tokenizer->adds_bos() ? m.tokenizer->bos() : -1;
    const Score s = chunk > 0 ? score_chunks(run, tokens, chunk, n_chunks, bos, m.file.hparams.n_vocab, llama.n_ctx > 0 ? &llama : nullptr)
                              : score(run, reference.get(), tokens, o.window, m.file.hparams.n_vocab);
    const bool vs_llama = llama.n_ctx > 0;
    if (o.json) {
        fmt::print("{{\"tokens\": {}, \"scored\": {}, ", tokens.size(), s.scored);
        if (chunk > 0)
            fmt::print("\"chunk\": {}, \"chunks\": {}", chunk, n_chunks);
        else
            fmt::print("\"window\": {}", o.window);
        fmt::print(", \"perplexity\": {:.6f}", s.perplexity());
        if (vs_llama)
            fmt::print(", \"llama_perplexity\": {:.6f}, \"llama_top1_agreement\": {:.6f}, \"llama_mean_kl\": {:.8f}, "
                       "\"llama_max_abs_dlogprob\": {:.6f}, \"llama_max_abs_dlogprob_at\": {}",
                       s.perplexity_llama(), double(s.top1_llama) / double(s.scored), s.kl_llama / double(s.scored), s.max_dlogprob,
                       s.max_dlogprob_at);
        if (reference)
            fmt::print(", \"reference\": \"{}\", \"reference_perplexity\": {:.6f}, \"top1_agreement\": {:.6f}, \"mean_kl\": {:.8f}", o.reference,
                       s.perplexity_reference(), double(s.top1_agree) / double(s.scored), s.kl / double(s.scored));
        fmt::print("}}\n");
        return;
    }
    fmt::print("plan:\n{}\n", planned.plan.describe());
    if (chunk > 0)
        fmt::print("{} tokens, {} scored in {} chunks of {} (second halves): perplexity {:.4f}\n", tokens.size(), s.scored, n_chunks, chunk,
                   s.perplexity());
    else
        fmt::print("{} tokens, {} scored in windows of {}: perplexity {:.4f}\n", tokens.size(), s.scored, o.window, s.perplexity());
    if (vs_llama)
        fmt::print("llama.cpp ({}): perplexity {:.4f}; top-1 agreement {:.2f} %; mean KL(llama.cpp || hetero) {:.6f} nats; "
                   "max |d log-prob| {:.5f} (row of token {})\n",
                   o.llama_logits, s.perplexity_llama(), 100.0 * double(s.top1_llama) / double(s.scored), s.kl_llama / double(s.scored),
                   s.max_dlogprob, s.max_dlogprob_at);
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
    CLI::App* cmd = add_model_command(app, "perplexity", "score a text: perplexity, and top-1 agreement with a reference run", *o);
    cmd->add_option("-f,--file", o->text_file, "the text to score")->required();
    cmd->add_option("--window", o->window, "tokens per scored window (each starts at position 0)")->check(CLI::Range(2, 1 << 20));
    cmd->add_option("--batch", o->batch, "tokens per forward pass (default: the window)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--chunk", o->chunk,
                    "score as llama-perplexity -c N does: whole chunks of N tokens from position 0, BOS first, only each chunk's second half "
                    "scored")
        ->check(CLI::Range(4, 1 << 20));
    cmd->add_option("--chunks", o->n_chunks, "with --chunk: score at most this many chunks (llama-perplexity --chunks)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--llama-logits", o->llama_logits,
                    "compare with the log-probabilities llama-perplexity --kl-divergence-base FILE wrote for the same model and text "
                    "(its -c sets the chunk): top-1 agreement, max |d log-prob|, mean KL, both perplexities");
    cmd->add_option("--reference", o->reference, "providers of a reference run to compare with, e.g. cpu (must be loaded too)");
    add_cache_type_option(*cmd, o->cache_type);
    cmd->add_flag("--json", o->json, "print the result as one JSON object");
    o->providers.add_to(*cmd);
    cmd->callback([o] { perplexity(*o); });
}

}  // namespace hetero::cli
