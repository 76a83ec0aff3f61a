#include "model_session.hpp"
#include "restart_output.hpp"

#include <fmt/format.h>

namespace hetero::cli {

void add_chat_model_options(CLI::App& cmd, ChatModelOptions& o) {
    add_model_options(cmd, o.model, o.tokenizer);
    cmd.add_option("-c,--ctx-size", o.ctx, "context size (default: the model's, at most 4096)")->check(CLI::NonNegativeNumber);
    add_cache_type_option(cmd, o.cache_type);
    cmd.add_option("--chat-template", o.chat_template_file, "a Jinja chat template FILE to use instead of the model's");
    cmd.add_option("--verify", o.verify,
                   "every N decode steps of sequence 0 (batched steps are not checked), check the step's logits against the cpu "
                   "provider (tolerance: " + spot_check_tolerance() + "); a provider that disagrees is named, dropped and the model "
                   "re-planned without it")
        ->check(CLI::PositiveNumber);
    o.providers.add_to(cmd);
}

std::unique_ptr<ChatModel> open_chat_model(const ChatModelOptions& o, int32_t expected_reply, bool quiet) {
    // A plugin crash starts chat or serve again without that plugin (the
    // conversation or the requests in flight are lost; the process is not).
    restart_on_plugin_crash();
    auto cm = std::make_unique<ChatModel>();
    ModelLoadOptions lo;
    lo.path = o.model;
    lo.tokenizer = o.tokenizer;
    lo.n_ctx = o.ctx;
    lo.cache_type = cache_type_from_name(o.cache_type);
    lo.expected_reply = expected_reply;
    lo.n_seq = o.n_seq;
    lo.verify_every = o.verify;
    if (!o.chat_template_file.empty()) {
        lo.chat_template = read_text_file(o.chat_template_file);
        lo.template_origin = o.chat_template_file;
    }
    cm->runtime = open_runtime(o.providers);
    cm->model = std::make_unique<LoadedModel>(cm->runtime, lo);
    if (o.renders_chat && cm->model->chat_template_is_fallback())
        fmt::print(stderr, "notice: {} has no chat template (tokenizer.chat_template); using ChatML\n", cm->model->opened().path);
    if (!quiet) fmt::print(stderr, "plan:\n{}\n", cm->model->initial_plan().describe());
    return cm;
}

}  // namespace hetero::cli
