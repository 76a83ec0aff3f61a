// hetero chat: an interactive conversation on stdin/stdout. Replies stream as
// they are generated; the KV cache is kept between turns. /reset starts over,
// /exit or end of input quits; Ctrl-C stops the reply being written, or the
// chat template being rendered (at the prompt it quits). A turn that fails
// (its template refused or ran past its budget, the message did not fit)
// prints an error line and the chat goes on; the exit status is then 1, so a
// script learns that some of its turns got no reply.
#include "commands.hpp"
#include "model_session.hpp"
#include "sampling_flags.hpp"

#include <hetero/chat/conversation.hpp>

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace hetero::cli {

namespace {

struct ChatOptions {
    ChatModelOptions model;
    SamplingFlags sampling;
    int32_t n_predict = 512;
    std::string system;
    bool quiet = false, stats = false;
};

std::atomic<bool> g_interrupt{false};
void on_sigint(int) { g_interrupt.store(true); }

void chat(const ChatOptions& o) {
    auto cm = open_chat_model(o.model, o.n_predict, o.quiet);
    LoadedModel& model = *cm->model;
    Conversation conv(model.cache(), model.tokenizer(), model.chat());
    if (!o.system.empty()) conv.set_system(o.system);

    // No SA_RESTART: Ctrl-C at the prompt interrupts the read and quits.
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);

    const bool interactive = isatty(STDIN_FILENO);
    if (interactive && !o.quiet) fmt::print(stderr, "chatting with {} ({} tokens of context); /reset starts over, /exit quits\n", model.name(), model.n_ctx());
    CompletionOptions co;
    co.max_tokens = o.n_predict;
    co.sampling = sampler_options(o.sampling, model.n_vocab());
    const uint64_t first_seed = co.sampling.seed;
    if (!o.quiet && co.sampling.temperature > 0) fmt::print(stderr, "seed: {} (--seed {} repeats this chat)\n", first_seed, first_seed);
    co.interrupt = &g_interrupt;
    std::string line;
    int failed_turns = 0;
    int64_t turn = 0;
    for (;;) {
        if (interactive) {
            std::fputs("> ", stdout);
            std::fflush(stdout);
        }
        g_interrupt.store(false);
        if (!std::getline(std::cin, line) || g_interrupt.load()) break;
        if (line == "/exit" || line == "/quit") break;
        if (line == "/reset") {
            conv.reset();
            if (!o.quiet) fmt::print(stderr, "(conversation cleared)\n");
            continue;
        }
        if (line.empty()) continue;
        co.sampling.seed = first_seed + uint64_t(turn++);  // each turn draws afresh, the whole chat from the one seed
        CompletionResult r;
        try {
            r = conv.say(line, co, [](std::string_view piece) {
                std::fwrite(piece.data(), 1, piece.size(), stdout);
                std::fflush(stdout);
                return true;
            });
        } catch (const ChatTemplateError& e) {
            if (g_interrupt.load()) {  // Ctrl-C while the template rendered: stopped, not failed
                fmt::print(stderr, "(stopped)\n");
                continue;
            }
            fmt::print(stderr, "error: the chat template failed: {}\n", e.what());
            ++failed_turns;
            continue;
        } catch (const DeviceFault&) {
            throw;
        } catch (const Error& e) {
            // A message that does not fit the context: the conversation is kept as it was.
            fmt::print(stderr, "error: {}; /reset starts a new conversation\n", e.what());
            ++failed_turns;
            continue;
        }
        std::fputc('\n', stdout);
        std::fflush(stdout);
        if (r.finish == FinishReason::interrupted) fmt::print(stderr, "(reply stopped)\n");
        if (r.finish == FinishReason::context_full)
            fmt::print(stderr, "(the context of {} tokens is full: the reply was cut; /reset starts a new conversation)\n", model.n_ctx());
        if (o.stats)
            fmt::print(stderr, "[prompt {} tokens: {} reused, {} evaluated in {:.1f} ms; reply {} tokens in {:.1f} ms; {}]\n", r.n_prompt,
                       r.n_reused, r.n_prompt - r.n_reused, r.prefill_seconds * 1e3, r.n_generated, r.decode_seconds * 1e3,
                       finish_reason_name(r.finish));
    }
    if (interactive) std::fputc('\n', stdout);
    if (failed_turns > 0) {
        fmt::print(stderr, "{} turn{} failed\n", failed_turns, failed_turns == 1 ? "" : "s");
        exit_code() = 1;
    }
}

}  // namespace

void add_chat_command(CLI::App& app) {
    auto o = std::make_shared<ChatOptions>();
    CLI::App* cmd = app.add_subcommand("chat", "talk with a model through its chat template (stdin/stdout; /reset, /exit)");
    add_chat_model_options(*cmd, o->model);
    add_sampling_flags(*cmd, o->sampling);
    cmd->add_option("-n,--n-predict", o->n_predict, "most tokens per reply (0 = until the context is full)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--system", o->system, "a system message that opens the conversation");
    cmd->add_flag("-q,--quiet", o->quiet, "print only the replies");
    cmd->add_flag("--stats", o->stats, "after each reply, print its token counts and times to stderr");
    cmd->callback([o] { chat(*o); });
}

}  // namespace hetero::cli
