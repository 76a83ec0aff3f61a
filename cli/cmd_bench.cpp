// hetero bench: prefill and decode speed of a model on the selected devices,
// in the manner of llama-bench (pp = prompt of N tokens, in forward passes of
// up to -b tokens; tg = N single-token steps), repeated -r times; mean and
// standard deviation. With -d D both tests run after D tokens already in the
// KV cache (llama-bench's -d), where attention reads a long context. With
// -s S the decode test is S sequences decoding together (a server's slots:
// batched steps), reported as the tokens of all of them per second.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/model/model.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/runtime/trace.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>

namespace hetero::cli {

namespace {

struct BenchOptions {
    ProviderFlags providers;
    std::string model;
    int32_t n_prompt = 512, n_gen = 128, reps = 3;
    int32_t depth = 0;    // tokens in the KV cache before each test
    int32_t batch = 512;  // prompt tokens a forward pass takes (llama-bench's n_ubatch)
    int32_t seqs = 1;     // sequences of the decode test, one batched step for all
    std::string cache_type = "auto";
    std::string trace;
    bool json = false;
};

// Peak resident set of this process so far (Linux reports KiB).
uint64_t peak_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return uint64_t(u.ru_maxrss) * 1024;
}

std::pair<double, double> mean_sd(const std::vector<double>& v) {
    double m = 0, s = 0;
    for (double x : v) m += x;
    m /= double(v.size());
    for (double x : v) s += (x - m) * (x - m);
    return {m, v.size() > 1 ? std::sqrt(s / double(v.size() - 1)) : 0.0};
}

void bench(const BenchOptions& o) {
    Runtime rt = open_runtime(o.providers);
    const std::string path = o.model.empty() ? default_model_path() : o.model;
    ModelFile model = load_model(path);
    if (o.n_prompt == 0 && o.n_gen == 0) throw Error("bench: nothing to measure (-p and -n are both 0)");
    // The model's trained context, or the 4,096 tokens a run gets by default
    // (context_length) where that is more: a typo such as -p 100000 fails at
    // once instead of running for an hour.
    const int64_t limit = std::max<int64_t>(model.hparams.n_ctx_train, 4096);
    if (o.depth + std::max<int64_t>(o.n_prompt, o.n_gen) > limit)
        throw Error(fmt::format("bench: -d {} + -p {} / -n {} do not fit a context of {} tokens (the model's trained context, at least 4096)",
                                o.depth, o.n_prompt, o.n_gen, limit));
    SessionOptions so;
    so.n_ctx = o.depth + std::max<int32_t>(o.n_prompt, o.n_gen) + 1;
    so.max_batch = std::max<int32_t>(1, o.batch > 0 ? std::min(o.batch, o.n_prompt) : o.n_prompt);
    so.cache_type = cache_type_from_name(o.cache_type);
    so.sync = sync_mode_from_env();
    so.n_seq = o.seqs;
    PlanRequest req = plan_request(so, so.n_ctx, std::max<int32_t>(1, o.n_prompt), std::max<int32_t>(1, o.n_gen));
    req.count_compile = false;  // after the warm-up run
    const PlannedRun planned = plan_model(rt, model, req);
    const Plan& plan = planned.plan;
    TraceRecorder trace;
    if (!o.trace.empty()) {
        so.trace = &trace;
        so.cost = planned.cost.get();
    }
    Session session(model, plan, so);
    uint64_t weight_bytes = 0;
    for (const auto& [name, w] : model.weights) weight_bytes += w.bytes;
    fmt::print(stderr, "plan:\n{}\n", plan.describe());
    std::mt19937 rng(1);
    std::uniform_int_distribution<int32_t> tok(0, int32_t(model.hparams.n_vocab) - 1);
    std::string devices;
    for (size_t d : plan.used_devices()) devices += (devices.empty() ? "" : "+") + plan.devices[d].label();
    nlohmann::json results = nlohmann::json::array();
    if (!o.json) fmt::print("| model | size | devices | test | tok/s |\n|---|---|---|---|---|\n");
    auto report = [&](const std::string& test, const std::vector<double>& tps) {
        const auto [m, sd] = mean_sd(tps);
        if (o.json) {
            results.push_back({{"test", test}, {"tokens_per_second", m}, {"stddev", sd}, {"samples", tps}});
            return;
        }
        fmt::print("| {} | {:.1f} MiB | {} | {} | {:.2f} ± {:.2f} |\n", std::filesystem::path(path).filename().string(),
                   double(weight_bytes) / (1 << 20), devices, test, m, sd);
        std::fflush(stdout);
    };
    // The context the tests start from: written once, since each repetition
    // only rewrites the cache rows after it. Named as llama-bench names it.
    const int32_t d = o.depth;
    if (d > 0) {
        std::vector<int32_t> context(static_cast<size_t>(d));
        for (auto& t : context) t = tok(rng);
        session.forward(context, 0);
    }
    const std::string at_depth = d > 0 ? fmt::format(" @ d{}", d) : "";
    if (o.n_prompt > 0) {
        std::vector<int32_t> prompt(size_t(o.n_prompt));
        for (auto& t : prompt) t = tok(rng);
        session.forward(prompt, d);  // warm-up: compiles, uploads, first-touch
        std::vector<double> tps;
        for (int r = 0; r < o.reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            session.forward(prompt, d);
            tps.push_back(o.n_prompt / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        report(fmt::format("pp{}{}", o.n_prompt, at_depth), tps);
    }
    if (o.n_gen > 0 && o.seqs == 1) {
        session.forward({tok(rng)}, d);  // warm-up
        std::vector<double> tps;
        for (int r = 0; r < o.reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int32_t i = 0; i < o.n_gen; ++i) session.forward({tok(rng)}, d + i);
            tps.push_back(o.n_gen / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        report(fmt::format("tg{}{}", o.n_gen, at_depth), tps);
    } else if (o.n_gen > 0) {
        // Every sequence at the same depth (sequence 0's context is the
        // others' too: their cache rows before d are not read differently).
        auto step = [&](int32_t pos) {
            std::vector<SeqToken> steps;
            for (int32_t s = 0; s < o.seqs; ++s) steps.push_back({s, tok(rng), pos});
            session.decode_batch(steps);
        };
        step(d);  // warm-up
        std::vector<double> tps;
        for (int r = 0; r < o.reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int32_t i = 0; i < o.n_gen; ++i) step(d + i);
            tps.push_back(double(o.n_gen) * o.seqs / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        report(fmt::format("tg{} x{} seqs{}", o.n_gen, o.seqs, at_depth), tps);
    }
    if (!o.trace.empty()) write_trace(trace, o.trace);
    nlohmann::json device_bytes = nlohmann::json::object();
    for (const SegmentStats& s : session.stats()) device_bytes[s.label] = s.allocated_bytes;
    if (o.json) {
        const nlohmann::json out = {{"model", path},
                                    {"depth", o.depth},
                                    {"weight_bytes", weight_bytes},
                                    {"devices", devices},
                                    {"repetitions", o.reps},
                                    {"results", results},
                                    {"peak_rss_bytes", peak_rss_bytes()},
                                    {"allocated_bytes", device_bytes}};
        fmt::print("{}\n", out.dump(2));
        return;
    }
    std::string alloc;
    for (const auto& [label, bytes] : device_bytes.items())
        alloc += fmt::format("{}{} {:.1f} MiB", alloc.empty() ? "" : ", ", label, double(bytes.get<uint64_t>()) / (1 << 20));
    fmt::print(stderr, "memory: peak host RSS {:.1f} MiB; allocated on devices: {}\n", double(peak_rss_bytes()) / (1 << 20), alloc);
}

// The preset with every shape option given on the command line in place.
RandomModelShape apply_shape_options(const CLI::App& gen, RandomModelShape s, const RandomModelShape& given) {
    auto take = [&](const char* name, int64_t& field, int64_t value) {
        if (gen.get_option(name)->count() > 0) field = value;
    };
    take("--dim", s.n_embd, given.n_embd);
    take("--ffn", s.n_ff, given.n_ff);
    take("--heads", s.n_head, given.n_head);
    take("--kv-heads", s.n_head_kv, given.n_head_kv);
    take("--head-size", s.head_dim, given.head_dim);
    take("--layers", s.n_layer, given.n_layer);
    take("--vocab", s.n_vocab, given.n_vocab);
    take("--ctx", s.n_ctx, given.n_ctx);
    return s;
}

// --dim, --ffn, ... : each one given replaces that field of the preset.
void add_shape_options(CLI::App& gen, RandomModelShape& s) {
    const RandomModelShape& m = kRandomModelLimits;
    auto field = [&](const char* name, int64_t& v, int64_t lo, int64_t hi, const std::string& what) {
        gen.add_option(name, v, what + " (default: the shape's)")->check(CLI::Range(lo, hi));
    };
    field("--dim", s.n_embd, 1, m.n_embd, "embedding width");
    field("--ffn", s.n_ff, 1, m.n_ff, "feed-forward width");
    field("--heads", s.n_head, 1, m.n_head, "attention heads; without --head-size they must divide --dim");
    field("--kv-heads", s.n_head_kv, 1, m.n_head_kv, "KV heads (grouped-query attention); must divide --heads");
    field("--head-size", s.head_dim, 2, m.head_dim,
          "values per head, even (RoPE); where it is not --dim / --heads the file carries attention.key_length and "
          "Q and attn_output are heads x head-size wide");
    field("--layers", s.n_layer, 1, m.n_layer, "decoder layers");
    field("--vocab", s.n_vocab, 1, m.n_vocab, "vocabulary size, at least the synthetic tokenizer's control and byte tokens");
    field("--ctx", s.n_ctx, 1, m.n_ctx, "trained context length written to the file");
}

void add_gen_model_command(CLI::App& app) {
    struct GenOpts {
        std::string out, shape = "tinyllama-1.1b", type = "q4_0", arch = "llama";
        uint64_t seed = 1;
        RandomModelShape given;  // the fields of the shape options, where given
    };
    auto g = std::make_shared<GenOpts>();
    CLI::App* gen = app.add_subcommand("gen-model", "write a GGUF with random weights at a real model's shape or any other (for benchmarks)");
    gen->add_option("output", g->out, "GGUF file to write")->required();
    gen->add_option("--shape", g->shape,
                    "preset the other shape options change: tinyllama-1.1b (default), llama-7b, mistral-7b, stories15m, tiny or tiny-k");
    gen->add_option("--type", g->type,
                    "matrix type: f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_k, q3_k, q4_k, q5_k, q6_k or e0m4 (hetero's FP4, "
                    "docs/models.md). The 32-value block types "
                    "need every row width a multiple of 32 (else an error). K-quant rows that are not a multiple of 256 fall back per "
                    "matrix, as llama-quantize does: q2_k, q3_k to iq4_nl, q4_k to q5_0, q5_k to q5_1, q6_k to q8_0, or f16 where the "
                    "row is not a multiple of 32 either; a note on stderr names them")
        ->check(CLI::IsMember(kGenWeightTypeNames));
    gen->add_option("--arch", g->arch, std::string("architecture: ") + random_model_archs());
    add_shape_options(*gen, g->given);
    add_seed_option(*gen, "--seed", g->seed, "random seed (0 .. 2^64-1)");
    gen->callback([g, gen] {
        const RandomModelShape shape = apply_shape_options(*gen, random_model_preset(g->shape), g->given);
        const uint32_t dtype = weight_type_from_name(g->type);
        check_random_model_shape(shape, dtype);
        for (const std::string& line : random_model_fallbacks(shape, dtype)) fmt::print(stderr, "note: {}\n", line);
        write_random_model(g->out, shape, dtype, g->seed, g->arch);
        fmt::print(stderr, "wrote {}: layers {}, embedding {}, feed-forward {}, heads {} / kv heads {} of size {}, vocab {}, context {}\n", g->out,
                   shape.n_layer, shape.n_embd, shape.n_ff, shape.n_head, shape.n_head_kv, shape.head_size(), shape.n_vocab, shape.n_ctx);
    });
}

}  // namespace

void add_bench_command(CLI::App& app) {
    auto o = std::make_shared<BenchOptions>();
    CLI::App* cmd = app.add_subcommand("bench", "measure prefill (pp) and decode (tg) speed");
    cmd->add_option("-m,--model", o->model, "GGUF file or llama2.c checkpoint");
    cmd->add_option("-p,--n-prompt", o->n_prompt, "prompt tokens for the prefill test (0 = skip)")->check(CLI::NonNegativeNumber);
    cmd->add_option("-n,--n-gen", o->n_gen, "tokens for the decode test (0 = skip)")->check(CLI::NonNegativeNumber);
    cmd->add_option("-r,--repetitions", o->reps, "repetitions")->check(CLI::PositiveNumber);
    cmd->add_option("-d,--depth", o->depth, "tokens already in the KV cache when each test starts, as llama-bench's -d (default 0)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("-b,--batch", o->batch,
                    "prompt tokens per forward pass: a longer prompt runs in chunks of this size, as llama-bench's -ub "
                    "(default 512; 0 = the whole prompt at once)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("-s,--seqs", o->seqs,
                    "sequences decoding together in the decode test, one batched step for all of them (a server's --parallel "
                    "slots); tok/s counts every sequence's tokens (default 1)")
        ->check(CLI::Range(1, 256));
    add_cache_type_option(*cmd, o->cache_type);
    cmd->add_option("--trace", o->trace, "write a Chrome trace of every device's work to FILE and print predicted vs measured time per device");
    cmd->add_flag("--json", o->json, "print the results as one JSON object (tokens/s per test, peak host RSS, bytes allocated per device)");
    o->providers.add_to(*cmd);
    cmd->callback([o] { bench(*o); });

    add_gen_model_command(app);
}

}  // namespace hetero::cli
