// hetero serve: the OpenAI HTTP API (chat completions, completions, models)
// for one model. Requests queue for one worker that owns the session, so
// clients are answered one after another; the KV cache is reused where a
// request repeats the previous one's tokens (a growing conversation).
#include "commands.hpp"
#include "model_session.hpp"
#include "serve/http_routes.hpp"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <pthread.h>
#include <random>
#include <thread>

namespace hetero::cli {

namespace {

struct ServeOptions {
    ChatModelOptions model;
    std::string host = "127.0.0.1";
    int port = 8080;
    int threads = 16;
    bool quiet = false;
};

void serve_model(const ServeOptions& o) {
    // SIGINT / SIGTERM are taken by a watcher thread (sigwait), blocked in
    // every other thread, so shutdown runs in ordinary code.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    auto cm = open_chat_model(o.model, 256, o.quiet);
    serve::ServedModel served;
    LoadedModel& model = *cm->model;
    served.name = model.name();
    served.stem = model.stem();
    served.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    served.tokenizer = &model.tokenizer();
    served.prompt = &model.chat();
    served.n_ctx = model.n_ctx();
    served.default_seed = std::random_device{}();

    serve::GenerationQueue queue(model.cache(), model.tokenizer());
    httplib::Server server;
    const int threads = o.threads;
    server.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
    server.set_payload_max_length(16u << 20);
    server.set_keep_alive_timeout(2);
    serve::install_routes(server, served, queue);

    const int port = o.port == 0 ? server.bind_to_any_port(o.host) : (server.bind_to_port(o.host, o.port) ? o.port : -1);
    if (port < 0) throw Error(fmt::format("cannot listen on {}:{} (in use, or not an address of this machine?)", o.host, o.port));
    fmt::print(stderr, "serving {} on http://{}:{} (OpenAI API: /v1/chat/completions, /v1/completions, /v1/models; /health)\n",
               served.name, o.host, port);

    std::atomic<bool> finished{false};
    std::atomic<int> caught{0};
    std::thread watcher([&] {
        const timespec tick{0, 200'000'000};
        while (!finished.load()) {
            const int sig = sigtimedwait(&signals, nullptr, &tick);
            if (sig == SIGINT || sig == SIGTERM) {
                caught.store(sig);
                queue.shutdown();  // running and queued generations end first, so their handlers return
                server.stop();
                return;
            }
        }
    });
    const bool ok = server.listen_after_bind();
    finished.store(true);
    watcher.join();
    queue.shutdown();
    if (caught.load()) {
        fmt::print(stderr, "stopped by {}\n", caught.load() == SIGINT ? "SIGINT" : "SIGTERM");
        return;
    }
    if (!ok) throw Error(fmt::format("the server on {}:{} stopped unexpectedly", o.host, port));
}

}  // namespace

void add_serve_command(CLI::App& app) {
    auto o = std::make_shared<ServeOptions>();
    CLI::App* cmd = app.add_subcommand("serve", "serve a model over the OpenAI HTTP API (requests are queued and answered one at a time)");
    add_chat_model_options(*cmd, o->model);
    cmd->add_option("--host", o->host, "address to listen on");
    cmd->add_option("--port", o->port, "port (0 = any free one; the chosen port is printed)")->check(CLI::Range(0, 65535));
    cmd->add_option("--http-threads", o->threads, "threads taking connections")->check(CLI::Range(1, 256));
    cmd->add_flag("-q,--quiet", o->quiet, "do not print the plan");
    cmd->callback([o] { serve_model(*o); });
}

}  // namespace hetero::cli
