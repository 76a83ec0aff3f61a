#include "http_routes.hpp"

#include "response_format.hpp"
#include "tool_response.hpp"

#include "connection_stream.hpp"
#include "embeddings_route.hpp"
#include "error_response.hpp"
#include "openai_request.hpp"
#include "openai_response.hpp"

#include <hetero/chat/grammar_matcher.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>

namespace hetero::serve {

using nlohmann::json;

namespace {

// The prompt tokens of a request, refused when the context cannot hold them
// and one token of reply.
std::vector<int32_t> prompt_tokens(const ServedModel& m, const GenerationRequest& r) {
    std::vector<int32_t> tokens;
    try {
        if (!r.chat)
            tokens = m.tokenizer->encode(r.prompt, m.tokenizer->adds_bos(), true);
        else if (r.renders_as_json())
            tokens = m.prompt->tokens_json(r.template_messages, r.tools.tools_json, m.stopping);
        else
            tokens = m.prompt->tokens(r.messages, m.stopping);
    } catch (const ChatTemplateError& e) {
        if (m.stopping && m.stopping->load()) throw ShuttingDown();
        throw invalid_request(fmt::format("the chat template failed: {}", e.what()), "messages", "chat_template_error");
    }
    if (tokens.empty()) throw invalid_request("the prompt encodes to no tokens", r.chat ? "messages" : "prompt");
    if (int64_t(tokens.size()) >= m.n_ctx)
        throw invalid_request(fmt::format("This model's maximum context length is {} tokens, but the prompt has {} tokens "
                                          "(and the reply needs at least one more).", m.n_ctx, tokens.size()),
                              r.chat ? "messages" : "prompt", "context_length_exceeded");
    return tokens;
}

CompletionOptions completion_options(const ServedModel& m, const GenerationRequest& r) {
    CompletionOptions o;
    // /v1/completions defaults to 16 tokens as OpenAI's does; chat replies run to their end.
    o.max_tokens = r.max_tokens.value_or(r.chat ? 0 : 16);
    o.sampling = r.sampling;
    static std::atomic<uint64_t> requests{0};
    o.sampling.seed = r.seed.value_or(m.default_seed + requests.fetch_add(1));
    try {
        check_logit_bias(o.sampling, m.n_vocab);
    } catch (const Error& e) {
        throw invalid_request(e.what(), "logit_bias");
    }
    o.stop = r.stop;
    if (r.chat) {
        o.stop_tokens = m.prompt->stop_tokens();
    } else {
        for (int32_t t : {m.tokenizer->eos(), m.tokenizer->bos()})
            if (t >= 0) o.stop_tokens.push_back(t);
    }
    return o;
}

// How the reply of a request with tools is generated and read: held to a
// call when one is required, parsed for calls when the model may choose.
// Tools for a template that writes no calls are refused, never ignored.
ToolReading tool_reading(const ServedModel& m, const GenerationRequest& r, CompletionOptions& options) {
    const ToolCallStyle style = m.prompt->tool_style();
    if (r.renders_as_json() && style == ToolCallStyle::none)
        throw invalid_request("this model's chat template takes no tools (it writes tool calls in no format hetero knows: Hermes/Qwen "
                              "<tool_call>, Llama 3.1 JSON, Mistral [TOOL_CALLS]); serve it with --chat-template FILE of one that does",
                              r.tools.tools.empty() ? "messages" : "tools", "tools_not_supported");
    ToolReading how;
    if (!r.tools.reads_calls() || r.response_schema || r.grammar) return how;
    how.style = style;
    if (!r.tools.call_required()) return how;
    ToolCallGrammar grammar;
    try {
        grammar = tool_call_grammar(style, r.tools.callable(), r.tools.parallel);
    } catch (const JsonSchemaError& e) {
        throw invalid_request(std::string("a required tool call cannot be held to these parameters: ") + e.what(), "tools");
    }
    options.constraint = std::make_shared<TokenConstraint>(grammar.schema, served_token_trie(*m.tokenizer), grammar.framing);
    how.constrained = true;
    how.implied_prefix = grammar.implied_prefix;
    return how;
}

// The sampled tokens of one job with their log-probabilities: the worker
// adds each before its text is released, the HTTP thread reads them.
class SampledTokens {
public:
    explicit SampledTokens(int32_t top_k) : top_k_(top_k) {}
    void add(const std::vector<float>& logits, int32_t token) {
        cli::TokenLogprobs t = cli::token_logprobs(logits, token, top_k_);
        std::lock_guard lock(mutex_);
        tokens_.push_back(std::move(t));
    }
    std::vector<cli::TokenLogprobs> from(size_t first) const {
        std::lock_guard lock(mutex_);
        return {tokens_.begin() + ptrdiff_t(std::min(first, tokens_.size())), tokens_.end()};
    }

private:
    int32_t top_k_;
    mutable std::mutex mutex_;
    std::vector<cli::TokenLogprobs> tokens_;
};

// Hands each streamed chunk the log-probabilities of the tokens whose text
// it completes (text is released behind the tokens, held back at a possible
// stop string); null when they were not asked for.
class StreamedLogprobs {
public:
    StreamedLogprobs(std::shared_ptr<const SampledTokens> sampled, const Tokenizer& tokenizer, bool chat)
        : sampled_(std::move(sampled)), tokenizer_(tokenizer), chat_(chat) {}
    json next(const std::string& released_text) {
        if (!sampled_) return nullptr;
        released_ += released_text.size();
        std::vector<cli::TokenLogprobs> ready = sampled_->from(emitted_);
        const TokenSpan span = tokens_within(ready, tokenizer_, released_ - emitted_bytes_);
        ready.resize(span.count);
        json j = logprobs_json(chat_, ready, tokenizer_, emitted_bytes_);
        emitted_ += span.count;
        emitted_bytes_ += span.bytes;
        return j;
    }

private:
    std::shared_ptr<const SampledTokens> sampled_;
    const Tokenizer& tokenizer_;
    bool chat_;
    size_t released_ = 0, emitted_ = 0, emitted_bytes_ = 0;
};

// How often a handler waiting for its job looks whether the client is still there.
constexpr auto kClientCheckInterval = std::chrono::milliseconds(100);

// Whether the client of the calling thread's connection has closed it.
bool client_left() {
    const ConnectionStream* connection = ConnectionStream::current();
    return connection && connection->peer_closed();
}

// Waits for a non-streamed job's end; cancels it when the client leaves
// (nothing is written until the end, so no failing write would tell).
const CompletionResult& wait_while_client_stays(Job& job) {
    while (!job.wait_for_end(kClientCheckInterval))
        if (client_left()) job.cancel();
    return job.wait();
}

std::string api_finish_reason(FinishReason f) {
    return f == FinishReason::length || f == FinishReason::context_full ? "length" : "stop";
}

// `in_flight` is held until the stream is released.
// `tools`: the reply is read for tool calls (null: all of it is content).
void stream_response(httplib::Response& res, std::shared_ptr<Job> job, ResponseHead head, Usage usage, bool include_usage,
                     StreamedLogprobs logprobs, std::shared_ptr<ToolCallStream> tools, std::shared_ptr<void> in_flight) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [job, head, usage, include_usage, logprobs, tools, in_flight](size_t, httplib::DataSink& sink) mutable {
            const auto send = [&](const std::string& s) {
                if (!sink.is_writable() || !sink.write(s.data(), s.size())) {
                    job->cancel();  // the client went away: stop its generation
                    return false;
                }
                return true;
            };
            if (head.chat && !send(sse_event(chunk(head, "", "", true)))) return false;
            for (;;) {
                if (!job->wait_for_progress(kClientCheckInterval)) {
                    if (client_left()) {  // while its job waits its turn, or between two tokens
                        job->cancel();
                        return false;
                    }
                    continue;
                }
                const auto piece = job->next_piece();
                if (!piece) break;
                const std::string text = tools ? tools->push(*piece) : *piece;
                if (tools && text.empty()) continue;  // held: it may be a tool call
                if (!send(sse_event(chunk(head, text, "", false, logprobs.next(text))))) return false;
            }
            try {
                const CompletionResult& r = job->wait();
                std::string finish = api_finish_reason(r.finish);
                if (tools) {
                    const ParsedReply end = tools->finish();
                    if (!end.content.empty() && !send(sse_event(chunk(head, end.content, "", false, logprobs.next(end.content))))) return false;
                    for (const json& c : tool_call_chunks(head, end.calls))
                        if (!send(sse_event(c))) return false;
                    if (!end.calls.empty() && finish != "length") finish = "tool_calls";
                }
                json last = chunk(head, "", finish);
                if (include_usage) {
                    usage.completion_tokens = r.n_generated;
                    last["usage"] = usage_json(usage);
                }
                if (!send(sse_event(last))) return false;
            } catch (const ShuttingDown& e) {
                // Headers went out with 200: the cut is told in the stream, as OpenAI tells errors mid-stream.
                if (!send(sse_event(error_body(ApiError(503, "server_error", e.what(), "", "server_shutting_down"))))) return false;
            } catch (const std::exception& e) {
                if (!send(sse_event(error_body(ApiError(500, "server_error", e.what()))))) return false;
            }
            if (!send(kSseDone)) return false;
            sink.done();
            return true;
        },
        [job](bool) { job->cancel(); });  // released: finished, or the connection closed
}

void handle_generation(const ServedModel& m, GenerationQueue& queue, const ServerLimits& limits, ServerMetrics& metrics,
                       const httplib::Request& req, httplib::Response& res, bool chat) {
    std::shared_ptr<void> in_flight = metrics.track_in_flight();
    try {
        // A body in chunks (or to the connection's end) has no Content-Length to refuse it by beforehand.
        if (req.body.size() > limits.max_body_bytes)
            throw ApiError(413, "invalid_request_error",
                           fmt::format("the request body is too large ({} bytes; at most {})", req.body.size(), limits.max_body_bytes));
        const GenerationRequest r = chat ? parse_chat_request(req.body) : parse_completion_request(req.body);
        CompletionOptions options = completion_options(m, r);
        if (r.response_schema) options.constraint = std::make_shared<TokenConstraint>(r.response_schema, served_token_trie(*m.tokenizer));
        if (r.grammar)
            options.constraint = std::make_shared<TokenConstraint>(std::make_unique<GrammarMatcher>(r.grammar), served_token_trie(*m.tokenizer));
        const ToolReading reading = r.chat ? tool_reading(m, r, options) : ToolReading{};
        const bool reads_tools = reading.style != ToolCallStyle::none;
        std::vector<int32_t> tokens = prompt_tokens(m, r);
        const Usage usage{int32_t(tokens.size()), 0};
        // Any name gets the one model served; the reply names it as asked when that is one of its names.
        const ResponseHead head = new_response_head(chat, names_model(m, r.model) ? r.model : m.name);
        std::shared_ptr<SampledTokens> sampled;
        if (r.top_logprobs >= 0) {
            sampled = std::make_shared<SampledTokens>(r.top_logprobs);
            options.on_sample = [sampled](const std::vector<float>& logits, int32_t token) { sampled->add(logits, token); };
        }
        auto job = queue.submit(head.id, std::move(tokens), std::move(options));
        if (r.stream) {
            auto tools = reads_tools ? std::make_shared<ToolCallStream>(reading, r.tools) : nullptr;
            stream_response(res, job, head, usage, r.include_usage, StreamedLogprobs(sampled, *m.tokenizer, chat), std::move(tools),
                            std::move(in_flight));
            return;
        }
        const CompletionResult& result = wait_while_client_stays(*job);
        json logprobs = nullptr;
        if (sampled) {
            std::vector<cli::TokenLogprobs> all = sampled->from(0);
            all.resize(tokens_within(all, *m.tokenizer, result.text.size()).count);
            logprobs = logprobs_json(chat, all, *m.tokenizer);
        }
        ParsedReply reply{result.text, {}};
        if (reads_tools) reply = read_tool_calls(reading, r.tools, result.text);
        const bool called = !reply.calls.empty();
        const std::string finish = api_finish_reason(result.finish);  // a reply cut short says so, calls or not
        res.set_content(to_text(full_response(head, reply.content, called && finish != "length" ? "tool_calls" : finish,
                                              {usage.prompt_tokens, result.n_generated}, logprobs,
                                              called ? tool_calls_json(reply.calls) : json(nullptr))),
                        "application/json");
    } catch (const std::exception&) {
        send_current_exception(res);
    }
}

// /v1/models' entry for the model under `id`.
json model_entry(const ServedModel& model, const std::string& id) {
    return {{"id", id}, {"object", "model"}, {"created", model.created}, {"owned_by", "hetero"}};
}

}  // namespace

bool names_model(const ServedModel& model, const std::string& id) {
    return id == model.name || id == model.stem || std::find(model.aliases.begin(), model.aliases.end(), id) != model.aliases.end();
}

void install_routes(httplib::Server& server, const ServedModel& model, GenerationQueue& queue, const ServerLimits& limits,
                    ServerMetrics& metrics, const ApiKey* api_key) {
    // Every route but /health goes through here: without the key (when one is set), 401.
    const auto keyed = [api_key](httplib::Server::Handler handler) {
        return [api_key, handler](const httplib::Request& req, httplib::Response& res) {
            if (api_key && !api_key->admits(req)) {
                res.set_header("WWW-Authenticate", "Bearer");
                send_error(res, ApiError(401, "invalid_request_error",
                                         req.has_header("Authorization")
                                             ? "Incorrect API key provided."
                                             : "No API key provided: send it as 'Authorization: Bearer KEY' (the key hetero serve was started with).",
                                         "", "invalid_api_key"));
                return;
            }
            handler(req, res);
        };
    };
    server.Post("/v1/chat/completions", keyed([&](const httplib::Request& req, httplib::Response& res) {
        handle_generation(model, queue, limits, metrics, req, res, true);
    }));
    server.Post("/v1/completions", keyed([&](const httplib::Request& req, httplib::Response& res) {
        handle_generation(model, queue, limits, metrics, req, res, false);
    }));
    server.Post("/v1/embeddings", keyed([&](const httplib::Request& req, httplib::Response& res) {
        handle_embeddings(model, queue, limits, req, res);
    }));
    server.Get("/v1/models", keyed([&](const httplib::Request&, httplib::Response& res) {
        json data = json::array({model_entry(model, model.name)});
        for (const std::string& alias : model.aliases)
            if (alias != model.name) data.push_back(model_entry(model, alias));
        res.set_content(to_text({{"object", "list"}, {"data", data}}), "application/json");
    }));
    server.Get(R"(/v1/models/(.+))", keyed([&](const httplib::Request& req, httplib::Response& res) {
        const std::string id = req.matches[1];
        if (!names_model(model, id)) {
            send_error(res, ApiError(404, "invalid_request_error", fmt::format("The model '{}' does not exist; this server has '{}'.", id, model.name),
                                     "model", "model_not_found"));
            return;
        }
        res.set_content(to_text(model_entry(model, id == model.stem ? model.name : id)), "application/json");
    }));
    server.Get("/health", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"status":"ok"})", "application/json");
    });
    server.Get("/metrics", keyed([&](const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics.render(queue.waiting()), "text/plain; version=0.0.4; charset=utf-8");
    }));
    server.set_logger([&metrics](const httplib::Request& req, const httplib::Response& res) { metrics.count_response(req.path, res.status); });
    // A known path with the wrong method: 405 and the method it takes.
    const auto wrong_method = [](const char* allowed) {
        return [allowed](const httplib::Request& req, httplib::Response& res) {
            res.set_header("Allow", allowed);
            send_error(res, ApiError(405, "invalid_request_error", fmt::format("{} {} is not allowed; use {}", req.method, req.path, allowed)));
        };
    };
    for (const char* path : {"/v1/chat/completions", "/v1/completions", "/v1/embeddings"}) {
        server.Get(path, wrong_method("POST"));
        server.Put(path, wrong_method("POST"));
        server.Delete(path, wrong_method("POST"));
        server.Patch(path, wrong_method("POST"));
    }
    for (const char* path : {"/v1/models", "/health", "/metrics"}) {
        server.Post(path, wrong_method("GET"));
        server.Put(path, wrong_method("GET"));
        server.Delete(path, wrong_method("GET"));
        server.Patch(path, wrong_method("GET"));
    }
    // Whatever else failed without a body of its own (unknown path: 404;
    // a body over the size limit: 413) gets one in OpenAI's shape.
    server.set_error_handler([&limits](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        // A body or headers the connection refused to read on fail as a plain 400: say why.
        ConnectionStream* connection = ConnectionStream::current();
        if (connection && connection->body_too_large()) res.status = 413;
        else if (connection && connection->timed_out()) res.status = 408;
        // What follows a request that could not be read whole is no request: end the connection.
        if (res.status == 400 || res.status == 408 || res.status == 413 || res.status == 414) {
            res.set_header("Connection", "close");
            if (connection) connection->close_after_response();
        }
        std::string message = fmt::format("request failed with HTTP status {}", res.status);
        if (res.status == 404) message = fmt::format("no route for {} {}", req.method, req.path);
        if (res.status == 408)
            message = fmt::format("the request did not arrive in time (headers within {} ms, the body within {} ms)",
                                  limits.header_timeout.count(), limits.body_timeout.count());
        if (res.status == 413)
            message = fmt::format("the request body is too large (at most {} bytes; form-encoded bodies at most 8 KiB: send Content-Type: application/json)",
                                  limits.max_body_bytes);
        send_error(res, ApiError(res.status, "invalid_request_error", message));
    });
    server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        send_error(res, ApiError(500, "server_error", what));
    });
}

}  // namespace hetero::serve
