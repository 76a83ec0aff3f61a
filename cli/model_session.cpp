#include "model_session.hpp"

#include <hetero/chat/jinja_chat_template.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace hetero::cli {

void add_chat_model_options(CLI::App& cmd, ChatModelOptions& o) {
    add_model_options(cmd, o.model, o.tokenizer);
    cmd.add_option("-c,--ctx-size", o.ctx, "context size (default: the model's, at most 4096)")->check(CLI::NonNegativeNumber);
    add_cache_type_option(cmd, o.cache_type);
    cmd.add_option("--chat-template", o.chat_template_file, "a Jinja chat template FILE to use instead of the model's");
    o.providers.add_to(cmd);
}

void add_sampling_options(CLI::App& cmd, SamplerOptions& s) {
    cmd.add_option("--temp", s.temperature, "temperature; 0 = greedy")->check(CLI::NonNegativeNumber);
    cmd.add_option("--top-k", s.top_k, "top-k; 0 = off")->check(CLI::NonNegativeNumber);
    cmd.add_option("--top-p", s.top_p, "top-p; 1 = off")->check(CLI::Range(0.0, 1.0));
    add_seed_option(cmd, "-s,--seed", s.seed, "random seed (0 .. 2^64-1)");
}

std::unique_ptr<ChatModel> open_chat_model(const ChatModelOptions& o, int32_t expected_reply, bool quiet) {
    auto cm = std::make_unique<ChatModel>();
    const std::string path = o.model.empty() ? default_model_path() : o.model;
    // The template first: a broken one should fail before devices start.
    cm->model = open_model(path, o.tokenizer);
    std::optional<std::string> source;
    std::string origin;  // where the template came from, for its errors
    if (!o.chat_template_file.empty()) {
        source = read_text_file(o.chat_template_file);
        origin = o.chat_template_file;
    } else {
        source = chat_template_source(cm->model.file);
        origin = path + " (tokenizer.chat_template)";
        if (!source) {
            fmt::print(stderr, "notice: {} has no chat template (tokenizer.chat_template); using ChatML\n", path);
            source = kChatMLTemplate;
            origin = "the ChatML fallback";
        }
    }
    try {
        cm->chat_template = std::make_unique<JinjaChatTemplate>(*source);
    } catch (const ChatTemplateError& e) {
        throw ChatTemplateError(fmt::format("{}: {}", origin, e.what()));
    }
    const GgufFile* gguf = cm->model.file.gguf ? &*cm->model.file.gguf : nullptr;
    cm->prompt = std::make_unique<ChatPrompt>(*cm->chat_template, *cm->model.tokenizer, gguf);
    cm->stem = std::filesystem::path(path).stem().string();
    cm->name = cm->stem;
    if (gguf)
        if (auto name = gguf->get_string("general.name"); name && !name->empty()) cm->name = *name;

    cm->runtime = open_runtime(o.providers);
    SessionOptions so;
    so.n_ctx = o.ctx;
    so.cache_type = cache_type_from_name(o.cache_type);
    so.sync = sync_mode_from_env();
    const int32_t n_ctx = context_length(cm->model.file.hparams, o.ctx);
    const PlanRequest req = plan_request(so, n_ctx, std::max(1, n_ctx / 4), expected_reply);
    const PlannedRun planned = plan_model(cm->runtime, cm->model.file, req);
    if (!quiet) fmt::print(stderr, "plan:\n{}\n", planned.plan.describe());
    ChatModel* raw = cm.get();
    cm->session = std::make_unique<ResilientSession>(cm->model.file, planned.plan, so, [raw, req](const std::vector<DeviceRef>& left) {
        PlannedRun p = plan_on_devices(left, constraints_on(raw->runtime.config.plan, left), raw->model.file, req);
        return Replanned{std::move(p.plan), std::move(p.cost)};
    });
    cm->cache = std::make_unique<PrefixCache>(*cm->session);
    return cm;
}

}  // namespace hetero::cli
