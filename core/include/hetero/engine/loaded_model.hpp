// A model opened on a runtime, ready to generate: the file and its tokenizer,
// the plan, a session that survives a device failing (re-planned on the
// devices left), the KV cache's prefix bookkeeping, and the model's chat
// template. The one object `hetero run`, `chat`, `serve` and the embedding
// API's hetero_model hold.
#pragma once

#include <hetero/chat/chat_prompt.hpp>
#include <hetero/chat/completion.hpp>
#include <hetero/chat/prefix_cache.hpp>
#include <hetero/engine/planning.hpp>
#include <hetero/engine/runtime.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/resilient_session.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace hetero {

class TraceRecorder;

struct ModelLoadOptions {
    std::string path;       // GGUF or llama2.c checkpoint; "" = the shipped default model
    std::string tokenizer;  // tokenizer.bin for a llama2.c checkpoint ("" = found beside it)
    int32_t n_ctx = 0;      // 0 = the model's training context, clamped to [512, 4096]
    CacheType cache_type = CacheType::automatic;
    // Sequences the KV cache holds, each with n_ctx rows (a server's slots,
    // decoded together); the plan is made for decode steps of this many.
    int32_t n_seq = 1;

    // What the plan is optimised for: the prompt's token count (taken from
    // `plan_prompt` when set, else `expected_prompt`, else a quarter of the
    // context) and the reply's.
    std::optional<std::string> plan_prompt;
    int32_t expected_prompt = 0;
    int32_t expected_reply = 256;

    // Chat: the template source to use instead of the model's
    // tokenizer.chat_template (`template_origin` names it in errors). Without
    // either, a model that has no template chats through ChatML, with a notice.
    std::optional<std::string> chat_template;
    std::string template_origin;
    bool load_chat_template = true;

    // Every task, transfer and wait recorded, with the cost model's predictions beside.
    TraceRecorder* trace = nullptr;

    // > 0: every verify_every-th decode step is checked against the cpu
    // provider (spot_check.hpp); a provider that disagrees is dropped and the
    // model re-planned without it. Needs the cpu provider among the runtime's.
    int32_t verify_every = 0;
};

class LoadedModel {
public:
    // Opens the file, plans it on `runtime`'s devices and builds the session.
    // `runtime` must outlive the model. Throws hetero::Error naming what failed
    // (ChatTemplateError for a broken template, before any device is used).
    LoadedModel(const Runtime& runtime, const ModelLoadOptions& options);
    ~LoadedModel();
    LoadedModel(const LoadedModel&) = delete;
    LoadedModel& operator=(const LoadedModel&) = delete;

    const OpenedModel& opened() const { return model_; }
    const ModelFile& file() const { return model_.file; }
    const Tokenizer& tokenizer() const { return *model_.tokenizer; }
    const std::string& name() const { return name_; }  // general.name, else the file's stem
    const std::string& stem() const { return stem_; }  // the file's stem
    int32_t n_ctx() const { return session_->n_ctx(); }
    int64_t n_vocab() const { return model_.file.hparams.n_vocab; }  // the logits' width

    // The plan the model started on, and the one it runs on now (they differ
    // after a device failed).
    const Plan& initial_plan() const { return planned_.plan; }
    const Plan& plan() const { return session_->plan(); }
    const CostModel& cost_model() const { return *planned_.cost; }
    // Providers the config or --providers named that the plan leaves out, and why.
    const std::vector<UnusedProvider>& unused_providers() const { return planned_.unused; }
    const std::vector<std::string>& planning_notes() const { return planned_.notes; }
    // Each device alone against the plan, for the same request (`run -v`).
    std::string describe_candidates() const;
    // Lines for the end of a run: each disagreement ("step 37: logits of
    // ... differ ..."), "12 spot checks against cpu:0, all agreed" (or how
    // many devices were dropped), and what the checks cost; or why none ran;
    // none without --verify.
    std::vector<std::string> describe_spot_checks() const;
    ResilientSession& session() { return *session_; }
    const ResilientSession& session() const { return *session_; }
    PrefixCache& cache() { return *cache_; }

    // Raw text generation from position 0, as `hetero run` does it: BOS, the
    // prompt, then sampled tokens until EOS/BOS or `n_predict`. on_text gets
    // the prompt's text first, then each token's. Forgets what the cache held.
    GenerationResult generate(const std::string& prompt, int32_t n_predict, Sampler& sampler,
                              const std::function<void(const std::string&)>& on_text = {}, const std::atomic<bool>* stop = nullptr,
                              const OnSample& on_sample = {});
    // A completion of `prompt` tokens through the prefix cache (what the
    // cache already holds is not evaluated again).
    CompletionResult complete(const std::vector<int32_t>& prompt, const CompletionOptions& options,
                              const std::function<bool(std::string_view)>& on_text = {});

    // The chat template and its stop tokens; throws hetero::Error when the
    // model was loaded without one (load_chat_template = false).
    const ChatPrompt& chat() const;
    bool has_chat() const { return prompt_ != nullptr; }
    // Set when the model has no template of its own and ChatML is used.
    bool chat_template_is_fallback() const { return template_fallback_; }

private:
    void add_spot_check(const Runtime& runtime, const SessionOptions& so, int32_t every);

    OpenedModel model_;
    std::string name_, stem_;
    std::unique_ptr<ChatTemplate> template_;
    std::unique_ptr<ChatPrompt> prompt_;
    bool template_fallback_ = false;
    PlannedRun planned_;
    PlanRequest request_;  // what planned_ was planned for
    std::string spot_note_;  // why no spot check runs, when one was asked for
    std::unique_ptr<ResilientSession> session_;
    std::unique_ptr<PrefixCache> cache_;
};

}  // namespace hetero
