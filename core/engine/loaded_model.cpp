#include <hetero/engine/loaded_model.hpp>

#include "template_engine.hpp"

#include <hetero/engine/errors.hpp>

#include <hetero/engine/shipped_files.hpp>
#include <hetero/runtime/trace.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace hetero {

namespace {

// The template source and where it came from, for its errors.
struct TemplateSource {
    std::string text, origin;
    bool fallback = false;
};

TemplateSource template_source(const ModelLoadOptions& o, const OpenedModel& model) {
    if (o.chat_template) return {*o.chat_template, o.template_origin.empty() ? "the given chat template" : o.template_origin};
    if (auto source = chat_template_source(model.file)) return {*source, model.path + " (tokenizer.chat_template)"};
    return {kChatMLTemplate, "the ChatML fallback", true};
}

}  // namespace

LoadedModel::LoadedModel(const Runtime& runtime, const ModelLoadOptions& o) {
    const std::string path = o.path.empty() ? default_model_path() : o.path;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw NotFoundError(fmt::format("model {}: no such file", path));
    try {
        model_ = open_model(path, o.tokenizer);
    } catch (const Error& e) {
        throw ModelFileError(e.what());
    }
    stem_ = std::filesystem::path(path).stem().string();
    name_ = stem_;
    const GgufFile* gguf = model_.file.gguf ? &*model_.file.gguf : nullptr;
    if (gguf)
        if (auto name = gguf->get_string("general.name"); name && !name->empty()) name_ = *name;

    // The template before the devices: a broken one fails before any work.
    if (o.load_chat_template) {
        TemplateSource src = template_source(o, model_);
        try {
            template_ = compile_chat_template(src.text);
        } catch (const ChatTemplateError& e) {
            throw ChatTemplateError(fmt::format("{}: {}", src.origin, e.what()));
        }
        template_fallback_ = src.fallback;
        prompt_ = std::make_unique<ChatPrompt>(*template_, *model_.tokenizer, gguf, detect_tool_call_style(src.text));
    }

    SessionOptions so;
    so.n_ctx = o.n_ctx;
    so.cache_type = o.cache_type;
    so.n_seq = o.n_seq;
    so.sync = sync_mode_from_env();
    const int32_t n_ctx = context_length(model_.file.hparams, o.n_ctx);
    int32_t prompt_len = o.expected_prompt > 0 ? o.expected_prompt : std::max(1, n_ctx / 4);
    if (o.plan_prompt) prompt_len = int32_t(model_.tokenizer->encode(*o.plan_prompt, true).size());
    const PlanRequest req = plan_request(so, n_ctx, prompt_len, o.expected_reply);
    request_ = req;
    try {
        planned_ = plan_model(runtime, model_.file, req);
    } catch (const ProviderError&) {
        throw;
    } catch (const Error& e) {
        throw NoDeviceError(e.what());  // no device can run or hold the model
    }
    if (o.trace) {
        so.trace = o.trace;
        so.cost = planned_.cost.get();
    }
    session_ = std::make_unique<ResilientSession>(model_.file, planned_.plan, so, replanner_for(runtime, model_.file, req));
    // Weights uploaded and decode kernels built while loading: a server's or
    // chat's first request pays only its prompt (0.3-0.4 s of a 7B's upload
    // and builds on an H100 otherwise).
    session_->prepare(1);
    // Likewise a server's batched decode steps, one program per bucket.
    session_->prepare_decode_steps();
    if (o.verify_every > 0) add_spot_check(runtime, so, o.verify_every);
    cache_ = std::make_unique<PrefixCache>(*session_);
}

LoadedModel::~LoadedModel() = default;

GenerationResult LoadedModel::generate(const std::string& prompt, int32_t n_predict, Sampler& sampler,
                                       const std::function<void(const std::string&)>& on_text, const std::atomic<bool>* stop,
                                       const OnSample& on_sample) {
    cache_->clear();  // generate() evaluates from position 0: the cache's old tokens are overwritten
    return hetero::generate(*session_, *model_.tokenizer, prompt, n_predict, sampler, on_text, stop, on_sample);
}

CompletionResult LoadedModel::complete(const std::vector<int32_t>& prompt, const CompletionOptions& options,
                                       const std::function<bool(std::string_view)>& on_text) {
    return hetero::complete(*cache_, *model_.tokenizer, prompt, options, on_text);
}

const ChatPrompt& LoadedModel::chat() const {
    if (!prompt_) throw Error(fmt::format("{} was loaded without its chat template", name_));
    return *prompt_;
}

std::string LoadedModel::describe_candidates() const {
    return hetero::describe_candidates(single_device_candidates(planned_, model_.file, request_), planned_, request_);
}

void LoadedModel::add_spot_check(const Runtime& runtime, const SessionOptions& so, int32_t every) {
    const DeviceRef* reference = nullptr;
    for (const DeviceRef& d : runtime.devices)
        if (d.provider && d.provider->name() == "cpu") {
            reference = &d;
            break;
        }
    if (!reference) throw Error("--verify checks against the cpu provider, which is not among the providers (add cpu to --providers)");
    bool only_reference = true;
    for (size_t d : planned_.plan.used_devices())
        only_reference = only_reference && planned_.plan.devices[d].label() == reference->label();
    if (only_reference) {
        spot_note_ = fmt::format("no spot checks: the plan runs on {}, the reference itself", reference->label());
        return;
    }
    session_->set_spot_check(std::make_unique<SpotCheck>(model_.file, *reference, every, so));
}

std::vector<std::string> LoadedModel::describe_spot_checks() const {
    if (!spot_note_.empty()) return {spot_note_};
    const SpotCheck* c = session_->spot_check();
    if (!c) return {};
    std::vector<std::string> lines = c->failures();
    const size_t failed = c->failures().size();
    lines.push_back(fmt::format("{} spot checks against {}{}", c->checks(), c->reference().label(),
                                failed ? fmt::format("; {} device(s) dropped for wrong results", failed) : std::string(", all agreed")));
    lines.push_back(fmt::format("cost: {} of {} decode steps checked, {} tokens evaluated again on {} in {:.1f} ms", c->checks(), c->steps(),
                                c->tokens_replayed(), c->reference().label(), c->seconds() * 1e3));
    return lines;
}

}  // namespace hetero
