// The embedding C API (hetero.h) over the engine room: handles own a Runtime
// or a LoadedModel; every entry point turns exceptions into a result code and
// a per-thread message.
#include <hetero/hetero.h>

#include "api_params.hpp"

#include <hetero/chat/chat_template.hpp>
#include <hetero/engine/errors.hpp>
#include <hetero/engine/loaded_model.hpp>
#include <hetero/engine/runtime.hpp>
#include <hetero/runtime/session.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

struct hetero_runtime {
    hetero::Runtime runtime;
    std::vector<std::string> labels, names;
};

struct hetero_model {
    std::unique_ptr<hetero::LoadedModel> model;
    std::string plan_text;
};

namespace {

thread_local std::string t_last_error;

hetero_result fail(hetero_result r, const std::string& message) {
    t_last_error = message;
    return r;
}

// Runs `body`; an exception becomes its result code and message.
template <class F>
hetero_result guarded(F&& body) noexcept {
    try {
        t_last_error.clear();
        return body();
    } catch (const hetero::ArgumentError& e) {
        return fail(HETERO_RESULT_INVALID_ARGUMENT, e.what());
    } catch (const hetero::ConfigError& e) {
        return fail(HETERO_RESULT_CONFIG, e.what());
    } catch (const hetero::NotFoundError& e) {
        return fail(HETERO_RESULT_NOT_FOUND, e.what());
    } catch (const hetero::ModelFileError& e) {
        return fail(HETERO_RESULT_BAD_MODEL, e.what());
    } catch (const hetero::NoDeviceError& e) {
        return fail(HETERO_RESULT_NO_DEVICE, e.what());
    } catch (const hetero::ChatTemplateError& e) {
        return fail(HETERO_RESULT_TEMPLATE, e.what());
    } catch (const hetero::ProviderError& e) {
        return fail(HETERO_RESULT_DEVICE_FAILED, e.what());
    } catch (const hetero::Error& e) {
        return fail(HETERO_RESULT_INTERNAL, e.what());
    } catch (const std::bad_alloc&) {
        return fail(HETERO_RESULT_INTERNAL, "out of host memory");
    } catch (const std::exception& e) {
        return fail(HETERO_RESULT_INTERNAL, e.what());
    } catch (...) {
        return fail(HETERO_RESULT_INTERNAL, "unknown error");
    }
}

hetero_result invalid(const char* what) { return fail(HETERO_RESULT_INVALID_ARGUMENT, what); }

hetero_finish finish_code(hetero::FinishReason f) {
    switch (f) {
        case hetero::FinishReason::stop: return HETERO_FINISH_STOP;
        case hetero::FinishReason::length: return HETERO_FINISH_LENGTH;
        case hetero::FinishReason::context_full: return HETERO_FINISH_CONTEXT_FULL;
        case hetero::FinishReason::interrupted:
        case hetero::FinishReason::cancelled: return HETERO_FINISH_CANCELLED;
    }
    return HETERO_FINISH_STOP;
}

// Writes the fields of `s` that the caller's struct has room for.
void write_stats(hetero_generate_stats* out, const hetero::CompletionResult& r) {
    if (!out) return;
    hetero_generate_stats s{};
    s.struct_size = out->struct_size;
    s.n_prompt = r.n_prompt;
    s.n_reused = r.n_reused;
    s.n_generated = r.n_generated;
    s.prefill_seconds = r.prefill_seconds;
    s.decode_seconds = r.decode_seconds;
    s.finish = finish_code(r.finish);
    std::memcpy(static_cast<void*>(out), &s, std::min(out->struct_size, sizeof s));
}

std::function<bool(std::string_view)> text_sink(hetero_text_callback cb, void* user) {
    if (!cb) return {};
    return [cb, user](std::string_view piece) { return cb(piece.data(), piece.size(), user) != 0; };
}

std::vector<hetero::ChatMessage> chat_messages(const hetero_chat_message* messages, size_t n) {
    std::vector<hetero::ChatMessage> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        if (!messages[i].role || !messages[i].content) throw hetero::ArgumentError(fmt::format("message {} has a NULL role or content", i));
        out.push_back({messages[i].role, messages[i].content});
    }
    return out;
}

}  // namespace

extern "C" {

uint32_t hetero_api_version(void) { return HETERO_API_VERSION; }
const char* hetero_version_string(void) { return HETERO_VERSION; }
const char* hetero_last_error(void) { return t_last_error.c_str(); }

const char* hetero_result_name(hetero_result r) {
    switch (r) {
        case HETERO_RESULT_OK: return "ok";
        case HETERO_RESULT_INVALID_ARGUMENT: return "invalid argument";
        case HETERO_RESULT_NOT_FOUND: return "not found";
        case HETERO_RESULT_BAD_MODEL: return "bad model";
        case HETERO_RESULT_NO_DEVICE: return "no device";
        case HETERO_RESULT_DEVICE_FAILED: return "device failed";
        case HETERO_RESULT_TEMPLATE: return "chat template";
        case HETERO_RESULT_CONTEXT_FULL: return "context full";
        case HETERO_RESULT_CONFIG: return "config";
        case HETERO_RESULT_INTERNAL: return "internal";
    }
    return "unknown result";
}

void hetero_runtime_params_init(hetero_runtime_params* p) {
    if (!p) return;
    *p = hetero_runtime_params{};
    p->struct_size = sizeof *p;
}

hetero_result hetero_runtime_open(const hetero_runtime_params* params, hetero_runtime** out) {
    if (!out) return invalid("hetero_runtime_open: out is NULL");
    *out = nullptr;
    return guarded([&] {
        const hetero_runtime_params p = hetero::api::read_params(params, &hetero_runtime_params_init);
        auto rt = std::make_unique<hetero_runtime>();
        rt->runtime = hetero::open_runtime(hetero::api::runtime_options(p));
        for (const hetero::DeviceRef& d : rt->runtime.devices) {
            rt->labels.push_back(d.label());
            rt->names.push_back(d.props.name);
        }
        *out = rt.release();
        return HETERO_RESULT_OK;
    });
}

void hetero_runtime_close(hetero_runtime* runtime) { delete runtime; }

size_t hetero_runtime_device_count(const hetero_runtime* rt) { return rt ? rt->labels.size() : 0; }

const char* hetero_runtime_device_label(const hetero_runtime* rt, size_t i) {
    return rt && i < rt->labels.size() ? rt->labels[i].c_str() : nullptr;
}

const char* hetero_runtime_device_name(const hetero_runtime* rt, size_t i) {
    return rt && i < rt->names.size() ? rt->names[i].c_str() : nullptr;
}

void hetero_model_params_init(hetero_model_params* p) {
    if (!p) return;
    *p = hetero_model_params{};
    p->struct_size = sizeof *p;
    p->cache_type = HETERO_CACHE_AUTO;
}

hetero_result hetero_model_load(hetero_runtime* runtime, const hetero_model_params* params, hetero_model** out) {
    if (!out) return invalid("hetero_model_load: out is NULL");
    *out = nullptr;
    if (!runtime) return invalid("hetero_model_load: runtime is NULL");
    return guarded([&] {
        const hetero_model_params p = hetero::api::read_params(params, &hetero_model_params_init);
        auto m = std::make_unique<hetero_model>();
        m->model = std::make_unique<hetero::LoadedModel>(runtime->runtime, hetero::api::load_options(p));
        *out = m.release();
        return HETERO_RESULT_OK;
    });
}

void hetero_model_free(hetero_model* model) { delete model; }

const char* hetero_model_name(const hetero_model* m) { return m ? m->model->name().c_str() : nullptr; }
int32_t hetero_model_n_ctx(const hetero_model* m) { return m ? m->model->n_ctx() : 0; }

const char* hetero_model_plan(hetero_model* m) {
    if (!m) return nullptr;
    m->plan_text = m->model->plan().describe();
    return m->plan_text.c_str();
}

void hetero_generate_params_init(hetero_generate_params* p) {
    if (!p) return;
    *p = hetero_generate_params{};
    p->struct_size = sizeof *p;
    const hetero::SamplerOptions defaults;
    p->max_tokens = 256;
    p->temperature = defaults.temperature;
    p->top_k = defaults.top_k;
    p->top_p = defaults.top_p;
    p->seed = defaults.seed;
    p->min_p = defaults.min_p;
    p->repetition_penalty = defaults.repetition_penalty;
    p->repetition_window = defaults.repetition_window;
    p->presence_penalty = defaults.presence_penalty;
    p->frequency_penalty = defaults.frequency_penalty;
}

hetero_result hetero_generate(hetero_model* model, const char* prompt, const hetero_generate_params* params,
                              hetero_text_callback on_text, void* user, hetero_generate_stats* stats) {
    if (!model) return invalid("hetero_generate: model is NULL");
    return guarded([&] {
        const hetero_generate_params p = hetero::api::read_params(params, &hetero_generate_params_init);
        hetero::LoadedModel& m = *model->model;
        hetero::Sampler sampler(hetero::api::sampler_options(p, m.n_vocab()));
        const std::string text = prompt ? prompt : "";
        const size_t n_prompt = m.tokenizer().encode(text, true).size();
        if (int32_t(n_prompt) >= m.n_ctx())
            return fail(HETERO_RESULT_CONTEXT_FULL, fmt::format("the prompt's {} tokens do not fit the context of {} tokens", n_prompt, m.n_ctx()));
        // generate() echoes the prompt piece by piece first; the app asked only for the reply.
        size_t pieces = 0;
        bool cancelled = false;
        std::atomic<bool> stop{false};
        const int32_t n = p.max_tokens > 0 ? p.max_tokens : m.n_ctx();
        const hetero::GenerationResult r = m.generate(text, n, sampler, [&](const std::string& piece) {
            if (pieces++ < n_prompt) return;
            if (on_text && !cancelled && on_text(piece.data(), piece.size(), user) == 0) {
                cancelled = true;
                stop.store(true);
            }
        }, &stop);
        hetero::CompletionResult c;
        c.n_prompt = r.stats.n_prompt;
        c.n_generated = r.stats.n_generated;
        c.prefill_seconds = r.stats.prefill_seconds;
        c.decode_seconds = r.stats.decode_seconds;
        c.finish = cancelled                  ? hetero::FinishReason::cancelled
                   : r.stats.context_full     ? hetero::FinishReason::context_full
                   : r.stats.n_generated >= n ? hetero::FinishReason::length
                                              : hetero::FinishReason::stop;
        write_stats(stats, c);
        return HETERO_RESULT_OK;
    });
}

hetero_result hetero_complete(hetero_model* model, const char* prompt, const hetero_generate_params* params,
                              hetero_text_callback on_text, void* user, hetero_generate_stats* stats) {
    if (!model) return invalid("hetero_complete: model is NULL");
    return guarded([&] {
        const hetero_generate_params p = hetero::api::read_params(params, &hetero_generate_params_init);
        hetero::LoadedModel& m = *model->model;
        const std::vector<int32_t> tokens = m.tokenizer().encode(prompt ? prompt : "", true);
        if (int32_t(tokens.size()) >= m.n_ctx())
            return fail(HETERO_RESULT_CONTEXT_FULL,
                        fmt::format("the prompt's {} tokens do not fit the context of {} tokens", tokens.size(), m.n_ctx()));
        hetero::CompletionOptions co = hetero::api::completion_options(p, m.n_vocab());
        co.stop_tokens = hetero::api::end_tokens(m);
        write_stats(stats, m.complete(tokens, co, text_sink(on_text, user)));
        return HETERO_RESULT_OK;
    });
}

hetero_result hetero_chat(hetero_model* model, const hetero_chat_message* messages, size_t n_messages, const hetero_generate_params* params,
                          hetero_text_callback on_text, void* user, hetero_generate_stats* stats) {
    if (!model) return invalid("hetero_chat: model is NULL");
    if (!messages && n_messages) return invalid("hetero_chat: messages is NULL");
    return guarded([&] {
        const hetero_generate_params p = hetero::api::read_params(params, &hetero_generate_params_init);
        hetero::LoadedModel& m = *model->model;
        const std::vector<int32_t> tokens = m.chat().tokens(chat_messages(messages, n_messages));
        if (int32_t(tokens.size()) >= m.n_ctx())
            return fail(HETERO_RESULT_CONTEXT_FULL,
                        fmt::format("the conversation's {} tokens do not fit the context of {} tokens", tokens.size(), m.n_ctx()));
        hetero::CompletionOptions co = hetero::api::completion_options(p, m.n_vocab());
        co.stop_tokens = m.chat().stop_tokens();
        write_stats(stats, m.complete(tokens, co, text_sink(on_text, user)));
        return HETERO_RESULT_OK;
    });
}

hetero_result hetero_chat_render(hetero_model* model, const hetero_chat_message* messages, size_t n_messages, int add_generation_prompt,
                                 char** out) {
    if (!out) return invalid("hetero_chat_render: out is NULL");
    *out = nullptr;
    if (!model) return invalid("hetero_chat_render: model is NULL");
    if (!messages && n_messages) return invalid("hetero_chat_render: messages is NULL");
    return guarded([&] {
        const std::string text = model->model->chat().render(chat_messages(messages, n_messages), add_generation_prompt != 0);
        char* copy = static_cast<char*>(std::malloc(text.size() + 1));
        if (!copy) throw std::bad_alloc();
        std::memcpy(copy, text.c_str(), text.size() + 1);
        *out = copy;
        return HETERO_RESULT_OK;
    });
}

void hetero_string_free(char* text) { std::free(text); }

}  // extern "C"
