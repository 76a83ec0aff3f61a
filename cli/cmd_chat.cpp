// hetero chat: an interactive conversation on stdin/stdout. Replies stream as
// they are generated; the KV cache is kept between turns. At a terminal, lines
// are edited and kept in a history (chat/line_reader.hpp); a message may run
// over several lines; /help, /reset, /save, /load (chat/chat_commands.hpp);
// /exit or end of input quits; Ctrl-C stops the reply being written, or the
// chat template being rendered (at the prompt it quits). A turn that fails
// (its template refused or ran past its budget, the message did not fit)
// prints an error line and the chat goes on; the exit status is then 1, so a
// script learns that some of its turns got no reply.
#include "chat/chat_commands.hpp"
#include "chat/line_reader.hpp"
#include "commands.hpp"
#include "model_session.hpp"
#include "sampling_flags.hpp"

#include <hetero/chat/conversation.hpp>
#include <hetero/chat/grammar_matcher.hpp>
#include <hetero/chat/token_constraint.hpp>

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <fcntl.h>
#include <unistd.h>

namespace hetero::cli {

namespace {

struct ChatOptions {
    ChatModelOptions model;
    SamplingFlags sampling;
    int32_t n_predict = 512;
    std::string system;
    bool quiet = false, stats = false;
    std::string history;  // "" = the default file, "none" = no history
    std::string grammar_file, grammar_text;  // every reply held to this GBNF grammar
};

// The grammar of --grammar FILE or --grammar-text TEXT, or nullptr; a bad one throws GrammarError (line, column).
std::shared_ptr<const Grammar> reply_grammar(const ChatOptions& o) {
    if (!o.grammar_text.empty()) return Grammar::parse(o.grammar_text);
    if (o.grammar_file.empty()) return nullptr;
    std::ifstream in(o.grammar_file, std::ios::binary);
    if (!in) throw Error("cannot read the grammar file " + o.grammar_file);
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return Grammar::parse(text.str());
    } catch (const GrammarError& e) {
        throw Error(o.grammar_file + ": " + e.what());
    }
}

std::atomic<bool> g_interrupt{false};
int g_wake_pipe[2] = {-1, -1};  // written by the handler: wakes a prompt's read (LineReader)
void on_sigint(int) {
    g_interrupt.store(true);
    if (g_wake_pipe[1] >= 0) {
        const char b = 1;
        [[maybe_unused]] const ssize_t w = ::write(g_wake_pipe[1], &b, 1);  // full pipe: a wake is pending anyway
    }
}

void chat(const ChatOptions& o) {
    const std::shared_ptr<const Grammar> grammar = reply_grammar(o);  // before the model loads: a bad grammar fails fast
    if (grammar) GrammarMatcher check(grammar);
    auto cm = open_chat_model(o.model, o.n_predict, o.quiet);
    LoadedModel& model = *cm->model;
    Conversation conv(model.cache(), model.tokenizer(), model.chat());
    if (!o.system.empty()) conv.set_system(o.system);

    // Ctrl-C at the prompt quits: the handler wakes the read through the pipe,
    // wherever the read is when the signal comes. No SA_RESTART either.
    if (g_wake_pipe[0] < 0 && ::pipe2(g_wake_pipe, O_NONBLOCK | O_CLOEXEC) != 0) g_wake_pipe[0] = g_wake_pipe[1] = -1;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);

    const bool interactive = isatty(STDIN_FILENO);
    if (interactive && !o.quiet) fmt::print(stderr, "chatting with {} ({} tokens of context); {}\n", model.name(), model.n_ctx(), chat_commands_hint());
    CompletionOptions co;
    co.max_tokens = o.n_predict;
    co.sampling = sampler_options(o.sampling, model.n_vocab());
    const uint64_t first_seed = co.sampling.seed;
    if (!o.quiet && co.sampling.temperature > 0) fmt::print(stderr, "seed: {} (--seed {} repeats this chat)\n", first_seed, first_seed);
    co.interrupt = &g_interrupt;
    const auto trie = grammar ? std::make_shared<const TokenTrie>(model.tokenizer()) : nullptr;
    LineReader reader(interactive, o.history == "none" ? "" : o.history.empty() ? default_chat_history_file() : o.history, &g_interrupt,
                      g_wake_pipe[0]);
    int failed_turns = 0;
    int64_t turn = 0;
    for (bool quit = false; !quit;) {
        g_interrupt.store(false);
        const std::optional<std::string> message = reader.read_message();
        if (!message) break;
        const std::string& line = *message;
        switch (run_chat_command(line, conv, model.name(), o.quiet)) {
            case ChatCommandResult::quit: quit = true; continue;
            case ChatCommandResult::failed: ++failed_turns; continue;
            case ChatCommandResult::done: continue;
            case ChatCommandResult::not_a_command: break;
        }
        if (line.empty()) continue;
        co.sampling.seed = first_seed + uint64_t(turn++);  // each turn draws afresh, the whole chat from the one seed
        if (grammar) co.constraint = std::make_shared<TokenConstraint>(std::make_unique<GrammarMatcher>(grammar), trie);
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
    if (!o.quiet)
        for (const std::string& v : model.describe_spot_checks()) fmt::print(stderr, "verify: {}\n", v);
    if (failed_turns > 0) {
        fmt::print(stderr, "{} turn{} failed\n", failed_turns, failed_turns == 1 ? "" : "s");
        exit_code() = 1;
    }
}

}  // namespace

void add_chat_command(CLI::App& app) {
    auto o = std::make_shared<ChatOptions>();
    CLI::App* cmd = app.add_subcommand("chat", "talk with a model through its chat template (stdin/stdout; /help lists commands)");
    add_chat_model_options(*cmd, o->model);
    add_sampling_flags(*cmd, o->sampling);
    cmd->add_option("-n,--n-predict", o->n_predict, "most tokens per reply (0 = until the context is full)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--system", o->system, "a system message that opens the conversation");
    cmd->add_flag("-q,--quiet", o->quiet, "print only the replies");
    cmd->add_option("--history", o->history,
                    LineReader::has_line_editing()
                        ? "at a terminal: libedit line editing, with the history kept in this file (default: " + default_chat_history_file() + "; none: no history)"
                        : std::string("the history file (this build has no line editing: it was built without libedit)"));
    cmd->add_flag("--stats", o->stats, "after each reply, print its token counts and times to stderr");
    auto* file = cmd->add_option("--grammar", o->grammar_file, "hold every reply to the GBNF grammar in FILE (docs/chat-and-serve.md)");
    cmd->add_option("--grammar-text", o->grammar_text, "hold every reply to this GBNF grammar")->excludes(file);
    cmd->callback([o] { chat(*o); });
}

}  // namespace hetero::cli
