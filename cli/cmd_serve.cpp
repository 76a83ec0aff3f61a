// hetero serve: the OpenAI HTTP API (chat completions, completions, models)
// for one model. Requests queue for one worker that owns the session and
// runs up to --parallel of them at once in its slots, decoded together in
// batched steps; a slot's KV cache is reused where a request repeats the
// tokens it holds (a growing conversation). Past --max-queue waiting
// requests the server answers 503.
//
// No client can stall it (serve/guarded_server.hpp): headers and bodies have
// deadlines, connections are capped per client and in total, /health is
// answered throughout. A reply cut by SIGINT/SIGTERM is not passed off as
// whole: a non-streamed request gets 503 with an OpenAI error object
// (code "server_shutting_down"), a stream ends with that error object as its
// last event before [DONE] (OpenAI's SDKs raise it as an APIError).
#include "commands.hpp"
#include "model_session.hpp"
#include "serve/api_key.hpp"
#include "serve/cors.hpp"
#include "serve/guarded_server.hpp"
#include "serve/http_routes.hpp"
#include "serve/memory_relief.hpp"
#include "serve/socket_address.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <optional>
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
    serve::ServerLimits limits;
    double header_timeout_s = 10, body_timeout_s = 30;
    bool quiet = false;
    std::string api_key, api_key_file;  // --api-key (or HETERO_API_KEY), --api-key-file
    std::vector<std::string> cors_origins;
    std::vector<std::string> aliases;
    serve::QueueOptions queue;
    bool no_embeddings = false;
    std::string pooling;  // "" = the model's own (model_pooling)
};

// The key from --api-key / HETERO_API_KEY or --api-key-file; nullopt = none.
std::optional<serve::ApiKey> api_key(const ServeOptions& o) {
    if (!o.api_key.empty() && !o.api_key_file.empty()) throw Error("give --api-key (or HETERO_API_KEY) or --api-key-file, not both");
    if (!o.api_key_file.empty()) return serve::ApiKey(serve::read_api_key_file(o.api_key_file));
    if (!o.api_key.empty()) return serve::ApiKey(o.api_key);
    return std::nullopt;
}

std::chrono::milliseconds seconds_to_ms(double s) { return std::chrono::milliseconds(int64_t(s * 1000)); }

void serve_model(const ServeOptions& o) {
    serve::limit_malloc_arenas();  // before any thread: each would get an arena of its own
    serve::ServerLimits limits = o.limits;
    limits.header_timeout = seconds_to_ms(o.header_timeout_s);
    limits.body_timeout = seconds_to_ms(o.body_timeout_s);

    // SIGINT / SIGTERM are taken by a watcher thread (sigwait), blocked in
    // every other thread, so shutdown runs in ordinary code.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    const std::optional<serve::ApiKey> key = api_key(o);
    const serve::CorsPolicy cors = serve::cors_policy(o.cors_origins);
    // One KV sequence per slot, and one more for embeddings unless they are off.
    ChatModelOptions model_options = o.model;
    serve::QueueOptions queue_options = o.queue;
    queue_options.embeddings = !o.no_embeddings;
    if (queue_options.embeddings) model_options.n_seq += 1;
    auto cm = open_chat_model(model_options, 256, o.quiet);
    serve::ServedModel served;
    LoadedModel& model = *cm->model;
    served.name = model.name();
    served.stem = model.stem();
    served.aliases = o.aliases;
    served.n_vocab = model.n_vocab();
    served.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    served.tokenizer = &model.tokenizer();
    served.prompt = &model.chat();
    served.n_ctx = model.n_ctx();
    served.n_embd = model.file().hparams.n_embd;
    served.embeddings = queue_options.embeddings;
    try {
        served.pooling = o.pooling.empty() ? model_pooling(model.file().hparams) : pooling_from_name(o.pooling);
    } catch (const Error& e) {  // a reranker: completions are still served
        fmt::print(stderr, "notice: no /v1/embeddings: {} (--pooling mean|last|cls pools it anyway)\n", e.what());
        served.embeddings = false;
    }
    served.default_seed = std::random_device{}();
    std::atomic<bool> stopping{false};
    served.stopping = &stopping;

    serve::ServerMetrics metrics;
    serve::GenerationQueue queue(model.session(), model.tokenizer(), queue_options, [&metrics](const serve::JobReport& r) {
        metrics.count_generation(r.n_prompt, r.n_generated, r.first_token_seconds, r.decode_seconds);
    });
    serve::GuardedServer server(limits);
    serve::install_routes(server, served, queue, limits, metrics, key ? &*key : nullptr);
    serve::install_cors(server, cors);

    const int port = o.port == 0 ? server.bind_to_any_port(o.host) : (server.bind_to_port(o.host, o.port) ? o.port : -1);
    if (port < 0) throw Error(fmt::format("cannot listen on {}:{} (in use, or not an address of this machine?)", o.host, o.port));
    fmt::print(stderr, "serving {} on http://{}:{} (OpenAI API: /v1/chat/completions, /v1/completions, {}/v1/models; /health, /metrics)\n",
               served.name, serve::url_host(o.host), port,
               queue_options.embeddings ? "/v1/embeddings, " : "");
    if (!o.quiet) {
        fmt::print(stderr, "{} slot{} of {} tokens of context, decoded together; up to {} requests wait for a slot\n", o.model.n_seq,
                   o.model.n_seq == 1 ? "" : "s", model.n_ctx(), o.queue.max_waiting);
        fmt::print(stderr, "{}; CORS: {}\n", key ? "an API key is required on /v1/* and /metrics" : "no API key required",
                   !cors.enabled ? "off" : cors.origins.empty() ? "any origin" : fmt::format("{}", fmt::join(cors.origins, ", ")));
    }

    std::atomic<bool> finished{false};
    std::atomic<int> caught{0};
    std::thread watcher([&] {
        const timespec tick{0, 200'000'000};
        while (!finished.load()) {
            const int sig = sigtimedwait(&signals, nullptr, &tick);
            if (sig == SIGINT || sig == SIGTERM) {
                caught.store(sig);
                stopping.store(true);  // templates being rendered give up
                queue.shutdown();      // running and queued generations end first, so their handlers return
                server.stop_serving();
                return;
            }
        }
    });
    const bool ok = server.serve();
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
    CLI::App* cmd = app.add_subcommand("serve", "serve a model over the OpenAI HTTP API (up to --parallel requests at once, decoded together)");
    add_chat_model_options(*cmd, o->model);
    o->model.n_seq = 4;
    cmd->add_option("--parallel", o->model.n_seq,
                    "requests generated at once, each in a slot with its own KV cache of the full context (memory grows with it); "
                    "their tokens are decoded together, one batch through the weights per step")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    cmd->add_option("--max-queue", o->queue.max_waiting, "requests that may wait for a free slot; more are answered 503 at once")
        ->check(CLI::Range(0, 1 << 20))
        ->capture_default_str();
    cmd->add_option("--prefill-chunk", o->queue.prefill_chunk,
                    "prompt tokens evaluated between two decode steps of the running requests (a long prompt does not stall them)")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    cmd->add_flag("--no-embeddings", o->no_embeddings,
                  "no /v1/embeddings: the KV sequence kept for embeddings (one context's worth of cache) is not allocated");
    cmd->add_option("--pooling", o->pooling, "how /v1/embeddings pools a text's token states: mean, last or cls (default: the model's "
                                             "<arch>.pooling_type, else mean)")
        ->check(CLI::IsMember({"mean", "last", "cls", "first"}));
    cmd->add_option("--host", o->host, "address to listen on");
    cmd->add_option("--port", o->port, "port (0 = any free one; the chosen port is printed)")->check(CLI::Range(0, 65535));
    cmd->add_option("--max-connections,--http-threads", o->limits.max_connections,
                    "open connections at most, each served by a thread of its own (more get 503; /health is still answered)")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    cmd->add_option("--max-client-connections", o->limits.max_connections_per_client,
                    "open connections at most from one client address (more get 503; /health is still answered)")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    cmd->add_option("--header-timeout", o->header_timeout_s, "seconds a request's headers may take to arrive (then 408, connection closed)")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    cmd->add_option("--body-timeout", o->body_timeout_s, "seconds a request's body may take to arrive after its headers (then 408, connection closed)")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    cmd->add_option("--api-key", o->api_key, "require 'Authorization: Bearer KEY' on /v1/* and /metrics (or set HETERO_API_KEY)")
        ->envname("HETERO_API_KEY");
    cmd->add_option("--api-key-file", o->api_key_file, "the same, the key read from the first line of FILE")->check(CLI::ExistingFile);
    cmd->add_option("--cors-origin", o->cors_origins,
                    "origin whose web pages may call the server (repeatable); default * (any, as llama.cpp's server); none = no CORS headers")
        ->type_name("ORIGIN");
    cmd->add_option("--alias", o->aliases, "another name /v1/models lists the model under (repeatable)")
        ->type_name("NAME")
        ->check([](const std::string& v) { return v.empty() ? std::string("an alias cannot be empty") : std::string(); });
    cmd->add_flag("-q,--quiet", o->quiet, "do not print the plan");
    cmd->callback([o] { serve_model(*o); });
}

}  // namespace hetero::cli
