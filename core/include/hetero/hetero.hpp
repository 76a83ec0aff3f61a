// hetero.hpp: a header-only C++ wrapper over the embedding C API (hetero.h).
// RAII handles, std::string in and out, failures as hetero::embed::Error
// (carrying the result code and the library's message), callbacks as
// std::function. It holds no state of its own beyond the C handles.
#pragma once

#include <hetero/hetero.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hetero::embed {

class Error : public std::runtime_error {
public:
    Error(hetero_result code, const std::string& message) : std::runtime_error(message), code_(code) {}
    hetero_result code() const { return code_; }

private:
    hetero_result code_;
};

namespace detail {
inline void check(hetero_result r, const char* what) {
    if (r != HETERO_RESULT_OK) {
        const char* msg = hetero_last_error();
        throw Error(r, std::string(what) + ": " + (msg && *msg ? msg : hetero_result_name(r)));
    }
}
// The library's own defaults, so the wrapper never keeps a second copy.
inline hetero_generate_params default_generate_params() {
    hetero_generate_params p;
    hetero_generate_params_init(&p);
    return p;
}
}  // namespace detail

struct RuntimeOptions {
    std::optional<std::string> config_path, config_json;
    std::string providers;  // "opencl,cpu"; "" = config / all
    int threads = 0;
    std::string plugin_dirs;  // colon-separated
};

class Runtime {
public:
    explicit Runtime(const RuntimeOptions& o = {}) {
        hetero_runtime_params p;
        hetero_runtime_params_init(&p);
        if (o.config_path) p.config_path = o.config_path->c_str();
        if (o.config_json) p.config_json = o.config_json->c_str();
        p.providers = o.providers.c_str();
        p.threads = o.threads;
        p.plugin_dirs = o.plugin_dirs.c_str();
        hetero_runtime* rt = nullptr;
        detail::check(hetero_runtime_open(&p, &rt), "opening the runtime");
        handle_.reset(rt);
    }
    hetero_runtime* get() const { return handle_.get(); }

    // "cpu:0", "opencl:0", ... in priority order.
    std::vector<std::string> devices() const {
        std::vector<std::string> out;
        for (size_t i = 0; i < hetero_runtime_device_count(get()); ++i) out.emplace_back(hetero_runtime_device_label(get(), i));
        return out;
    }

private:
    struct Close {
        void operator()(hetero_runtime* r) const { hetero_runtime_close(r); }
    };
    std::unique_ptr<hetero_runtime, Close> handle_;
};

struct ModelOptions {
    std::string path;  // "" = the shipped default model
    std::string tokenizer;
    int32_t n_ctx = 0;
    hetero_cache_type cache_type = HETERO_CACHE_AUTO;
    std::optional<std::string> chat_template;
    int32_t expected_prompt_tokens = 0, expected_reply_tokens = 0;
};

struct GenerateOptions {
    int32_t max_tokens = detail::default_generate_params().max_tokens;
    float temperature = detail::default_generate_params().temperature;
    int32_t top_k = detail::default_generate_params().top_k;
    float top_p = detail::default_generate_params().top_p;
    uint64_t seed = detail::default_generate_params().seed;
    std::vector<std::string> stop;
    // since 1.1 (hetero_generate_params says what each does and in which order)
    float min_p = detail::default_generate_params().min_p;
    float repetition_penalty = detail::default_generate_params().repetition_penalty;
    int32_t repetition_window = detail::default_generate_params().repetition_window;
    float presence_penalty = detail::default_generate_params().presence_penalty;
    float frequency_penalty = detail::default_generate_params().frequency_penalty;
    std::map<int32_t, float> logit_bias;  // token id -> bias
};

struct Message {
    std::string role, content;
};

// A piece of text as it becomes final; return false to stop.
using OnText = std::function<bool(std::string_view)>;

struct Reply {
    std::string text;
    hetero_generate_stats stats{};
};

class Model {
public:
    // `runtime` must outlive the model.
    Model(Runtime& runtime, const ModelOptions& o = {}) {
        hetero_model_params p;
        hetero_model_params_init(&p);
        if (!o.path.empty()) p.path = o.path.c_str();
        if (!o.tokenizer.empty()) p.tokenizer_path = o.tokenizer.c_str();
        p.n_ctx = o.n_ctx;
        p.cache_type = o.cache_type;
        if (o.chat_template) p.chat_template = o.chat_template->c_str();
        p.expected_prompt_tokens = o.expected_prompt_tokens;
        p.expected_reply_tokens = o.expected_reply_tokens;
        hetero_model* m = nullptr;
        detail::check(hetero_model_load(runtime.get(), &p, &m), "loading the model");
        handle_.reset(m);
    }
    hetero_model* get() const { return handle_.get(); }
    std::string name() const { return hetero_model_name(get()); }
    int32_t n_ctx() const { return hetero_model_n_ctx(get()); }
    std::string plan() const { return hetero_model_plan(get()); }

    // Raw generation from position 0, as `hetero run` does it.
    Reply generate(const std::string& prompt, const GenerateOptions& o = {}, const OnText& on_text = {}) {
        return run(o, on_text, [&](const hetero_generate_params& p, Sink& sink, hetero_generate_stats& s) {
            return hetero_generate(get(), prompt.c_str(), &p, &Sink::call, &sink, &s);
        }, "generating");
    }
    // A completion through the KV cache's shared prefix.
    Reply complete(const std::string& prompt, const GenerateOptions& o = {}, const OnText& on_text = {}) {
        return run(o, on_text, [&](const hetero_generate_params& p, Sink& sink, hetero_generate_stats& s) {
            return hetero_complete(get(), prompt.c_str(), &p, &Sink::call, &sink, &s);
        }, "completing");
    }
    // The assistant's reply to `messages`, through the model's chat template.
    Reply chat(const std::vector<Message>& messages, const GenerateOptions& o = {}, const OnText& on_text = {}) {
        const std::vector<hetero_chat_message> m = c_messages(messages);
        return run(o, on_text, [&](const hetero_generate_params& p, Sink& sink, hetero_generate_stats& s) {
            return hetero_chat(get(), m.data(), m.size(), &p, &Sink::call, &sink, &s);
        }, "chatting");
    }
    std::string render(const std::vector<Message>& messages, bool add_generation_prompt = true) const {
        const std::vector<hetero_chat_message> m = c_messages(messages);
        char* out = nullptr;
        detail::check(hetero_chat_render(get(), m.data(), m.size(), add_generation_prompt, &out), "rendering the chat template");
        std::string text(out);
        hetero_string_free(out);
        return text;
    }

private:
    // Collects the text and forwards it to the caller's callback.
    struct Sink {
        const OnText* on_text;
        std::string text;
        static int call(const char* piece, size_t n, void* self) {
            Sink& s = *static_cast<Sink*>(self);
            s.text.append(piece, n);
            return !*s.on_text || (*s.on_text)(std::string_view(piece, n)) ? 1 : 0;
        }
    };
    template <class Call>
    Reply run(const GenerateOptions& o, const OnText& on_text, Call&& call, const char* what) {
        hetero_generate_params p;
        hetero_generate_params_init(&p);
        p.max_tokens = o.max_tokens;
        p.temperature = o.temperature;
        p.top_k = o.top_k;
        p.top_p = o.top_p;
        p.seed = o.seed;
        std::vector<const char*> stop;
        for (const std::string& s : o.stop) stop.push_back(s.c_str());
        p.stop = stop.data();
        p.n_stop = stop.size();
        p.min_p = o.min_p;
        p.repetition_penalty = o.repetition_penalty;
        p.repetition_window = o.repetition_window;
        p.presence_penalty = o.presence_penalty;
        p.frequency_penalty = o.frequency_penalty;
        std::vector<hetero_logit_bias> bias;
        for (const auto& [token, value] : o.logit_bias) bias.push_back({token, value});
        p.logit_bias = bias.data();
        p.n_logit_bias = bias.size();
        Sink sink{&on_text, {}};
        Reply r;
        r.stats.struct_size = sizeof r.stats;
        detail::check(call(p, sink, r.stats), what);
        r.text = std::move(sink.text);
        return r;
    }
    static std::vector<hetero_chat_message> c_messages(const std::vector<Message>& messages) {
        std::vector<hetero_chat_message> out;
        for (const Message& m : messages) out.push_back({m.role.c_str(), m.content.c_str()});
        return out;
    }
    struct Free {
        void operator()(hetero_model* m) const { hetero_model_free(m); }
    };
    std::unique_ptr<hetero_model, Free> handle_;
};

}  // namespace hetero::embed
