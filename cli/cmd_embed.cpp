// hetero embed: the embedding of each text (or of each line of stdin with
// --stdin) as one JSON object on stdout: the model's final hidden states
// after its output norm, pooled (mean unless the model or --pooling says
// otherwise) and L2-normalised unless --no-normalize. The time per text goes
// to stderr.
#include "commands.hpp"
#include "model_session.hpp"

#include <hetero/chat/embedding.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>

namespace hetero::cli {

namespace {

struct EmbedOptions {
    ChatModelOptions model;
    std::vector<std::string> texts;
    bool from_stdin = false;
    std::string pooling;  // "" = the model's own
    bool no_normalize = false;
    bool quiet = false;
};

void embed(EmbedOptions o) {
    if (o.from_stdin)
        for (std::string line; std::getline(std::cin, line);)
            if (!line.empty()) o.texts.push_back(line);
    if (o.texts.empty()) throw Error("no text to embed: give texts as arguments, or --stdin");
    o.model.renders_chat = false;  // texts are embedded as they are, no template
    auto cm = open_chat_model(o.model, 1, o.quiet);
    LoadedModel& model = *cm->model;
    EmbeddingOptions eo;
    eo.pooling = o.pooling.empty() ? model_pooling(model.file().hparams) : pooling_from_name(o.pooling);
    eo.normalize = !o.no_normalize;
    nlohmann::json data = nlohmann::json::array();
    for (size_t i = 0; i < o.texts.size(); ++i) {
        const std::vector<int32_t> tokens = model.tokenizer().encode(o.texts[i], model.tokenizer().adds_bos(), true);
        if (tokens.empty()) throw Error(fmt::format("text {} encodes to no tokens", i));
        if (int64_t(tokens.size()) > model.n_ctx())
            throw Error(fmt::format("text {} has {} tokens, more than the context of {} (-c)", i, tokens.size(), model.n_ctx()));
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<float> v = embed_tokens(model.session(), 0, tokens, eo);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!o.quiet) fmt::print(stderr, "text {}: {} tokens embedded in {:.2f} ms\n", i, tokens.size(), ms);
        data.push_back({{"index", i}, {"tokens", tokens.size()}, {"embedding", std::move(v)}});
    }
    const nlohmann::json out = {{"model", model.name()},
                                {"pooling", pooling_name(eo.pooling)},
                                {"normalized", eo.normalize},
                                {"dimensions", model.file().hparams.n_embd},
                                {"data", std::move(data)}};
    fmt::print("{}\n", out.dump());
}

}  // namespace

void add_embed_command(CLI::App& app) {
    auto o = std::make_shared<EmbedOptions>();
    CLI::App* cmd = app.add_subcommand("embed", "print the embedding of each text as JSON (pooled final hidden states, unit length)");
    add_chat_model_options(*cmd, o->model);
    cmd->add_option("texts", o->texts, "texts to embed, one vector each");
    cmd->add_flag("--stdin", o->from_stdin, "also embed each non-empty line of standard input");
    cmd->add_option("--pooling", o->pooling, "mean, last or cls (default: the model's <arch>.pooling_type, else mean)")
        ->check(CLI::IsMember({"mean", "last", "cls", "first"}));
    cmd->add_flag("--no-normalize", o->no_normalize, "keep the pooled vector's length (default: scaled to unit L2 norm)");
    cmd->add_flag("-q,--quiet", o->quiet, "do not print the plan or the times");
    cmd->callback([o] { embed(*o); });
}

}  // namespace hetero::cli
