// hetero profile: what each op family of a model costs on every selected
// device, measured once and cached (the partition solver's cost model);
// --show prints the cached profiles.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/engine/planning.hpp>
#include <hetero/profile/profile.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <set>

#include <unistd.h>

namespace hetero::cli {

namespace {

struct ProfileCmdOptions {
    ProviderFlags providers;
    std::string model, tokenizer;
    int32_t max_tokens = 0;
    int32_t ctx = 0;  // 0 = the context a session would pick
    bool force = false, show = false, all = false;
};

// On a terminal one status line rewritten with '\r'; otherwise (a log file)
// one line per stage, so the log stays readable.
class ProgressLine {
public:
    ProgressLine() : tty_(isatty(fileno(stderr)) != 0), t0_(std::chrono::steady_clock::now()) {}
    void operator()(const ProfileProgress& p) {
        if (tty_) {
            std::string line = fmt::format("{}  {}", p.device, p.stage);
            if (!p.axis.empty()) line += fmt::format("  {}={}", p.axis, p.x);
            line += fmt::format("  {:3.0f}%", p.fraction * 100);
            // The points are not equal in cost, so the ETA is a rough one.
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
            if (p.fraction > 0.05 && elapsed > 2) line += fmt::format("  about {:.0f} s left", elapsed * (1 - p.fraction) / p.fraction);
            const size_t shown = line.size();
            if (line.size() < width_) line.append(width_ - line.size(), ' ');
            width_ = shown;
            std::fprintf(stderr, "\r%s", line.c_str());
            std::fflush(stderr);
        } else if (p.stage != last_) {
            fmt::print(stderr, "{}: {} ({:.0f}% done)\n", p.device, p.stage, p.fraction * 100);
            last_ = p.stage;
        }
    }
    // Clears the status line.
    void finish() {
        if (tty_ && width_) std::fprintf(stderr, "\r%*s\r", int(width_), "");
        width_ = 0;
    }

private:
    bool tty_;
    std::chrono::steady_clock::time_point t0_;
    size_t width_ = 0;
    std::string last_;
};

std::string held_out_line(const DeviceProfile& p) { return "held-out error: " + describe_held_out(p); }

void profile(const ProfileCmdOptions& o) {
    Runtime rt = open_runtime(o.providers);
    OpenedModel m = open_model(o.model.empty() ? default_model_path() : o.model, o.tokenizer);
    const auto& hp = m.file.hparams;
    ProfileOptions po;
    po.max_tokens = o.max_tokens;
    po.n_ctx = o.ctx;
    const std::vector<DeviceRef> devices = devices_for_model(m.file, rt.devices, context_length(hp, po.n_ctx));
    fmt::print("model: {} ({}, {} layers, embedding {}, {} heads / {} kv heads, vocab {})\n", m.path, hp.arch, hp.n_layer, hp.n_embd,
               hp.n_head, hp.n_head_kv, hp.n_vocab);
    const int32_t cap = profile_token_cap(m.file, po);
    // Only devices a plan could use, unless named or --all.
    std::vector<std::string> skipped_lines;
    std::set<std::string> skip;
    if (!o.all && !o.show && o.providers.providers.empty()) {
        PlanRequest req;
        req.n_ctx = context_length(hp, po.n_ctx);
        req.prompt_len = std::min(512, req.n_ctx);
        req.count_compile = false;
        const PlannedRun planned = plan_model(rt, m.file, req);
        const std::vector<bool> worth = worth_profiling(planned, m.file, req, &skipped_lines);
        for (size_t d = 0; d < worth.size(); ++d)
            if (!worth[d]) skip.insert(planned.plan.devices[d].label());
    }
    for (const std::string& line : skipped_lines) fmt::print("{}; --all profiles it anyway\n", line);
    for (const DeviceRef& d : devices) {
        if (skip.count(d.label())) continue;
        if (d.props.flags & HETERO_DEVICE_FLAG_SIMULATED_TIME) {
            // Its wall time is an emulation's; its provider's estimates are the model.
            fmt::print("{} ({}): simulated device, its times come from its own model; nothing to measure\n", d.label(), d.props.name);
            continue;
        }
        std::optional<DeviceProfile> cached = o.force && !o.show ? std::nullopt : load_profile(d, m.file);
        if (o.show) {
            if (cached) fmt::print("{}: {}", d.label(), describe_profile(*cached));
            else fmt::print("{} ({}): no profile; `hetero profile` measures one\n", d.label(), d.props.name);
            continue;
        }
        if (cached && cached->max_tokens >= cap) {
            fmt::print("{} ({}): cached {} (measured {}); {}; --force measures again\n", d.label(), d.props.name, cached->file,
                       cached->date, held_out_line(*cached));
            continue;
        }
        if (cached)
            fmt::print(stderr, "{}: the cached profile reaches n = {} only; extending it to {}\n", d.label(), cached->max_tokens, cap);
        ProgressLine bar;
        DeviceProfile p;
        try {
            p = profile_device(d, m.file, po, [&](const ProfileProgress& pr) { bar(pr); }, cached ? &*cached : nullptr);
        } catch (...) {
            bar.finish();
            throw;
        }
        bar.finish();
        p.file = save_profile(p);
        fmt::print("{} ({}): measured {} op families up to n = {} in {:.1f} s; saved {}\n  {}\n", d.label(), d.props.name,
                   p.families.size(), p.max_tokens, p.profile_seconds, p.file, held_out_line(p));
    }
}

}  // namespace

void add_profile_command(CLI::App& app) {
    auto o = std::make_shared<ProfileCmdOptions>();
    CLI::App* cmd = add_model_command(app, "profile", "measure what the model's ops cost on each device (cached for the planner)", *o);
    cmd->add_option("--max-tokens", o->max_tokens, "measure token counts up to this (default: the context, at most 4096)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("-c,--ctx-size", o->ctx,
                    "context to measure for: the caches' rows and the top of the token grid (default: the model's, at most 4096; "
                    "longer lets the grid reach prompts beyond the model's own context)")
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--force", o->force, "measure again even when a cached profile fits");
    cmd->add_flag("--show", o->show, "print the cached profiles; measure nothing");
    cmd->add_flag("--all", o->all,
                  "also profile devices no plan would use (by default a device predicted over 4x slower than the best at both prefill "
                  "and decode is left out, unless --providers names it)");
    o->providers.add_to(*cmd);
    cmd->callback([o] { profile(*o); });
}

}  // namespace hetero::cli
