// hetero-generate: a small app on hetero's embedding API. It opens the
// runtime (every provider found, or --providers), loads a model (the one
// that ships with hetero by default) and streams a greedy continuation of a
// prompt, or with --chat the model's reply to it as a user message.
//
//   hetero-generate [-m MODEL] [-p PROMPT] [-n TOKENS] [--providers cpu,opencl] [--chat] [--plan]
#include <hetero/hetero.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

struct Args {
    std::string model, prompt = "Once upon a time", providers;
    int n = 64;
    bool chat = false, plan = false;
};

bool parse(int argc, char** argv, Args& a) {
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        const bool has_value = i + 1 < argc;
        if (k == "-m" && has_value) a.model = argv[++i];
        else if (k == "-p" && has_value) a.prompt = argv[++i];
        else if (k == "-n" && has_value) a.n = std::atoi(argv[++i]);
        else if (k == "--providers" && has_value) a.providers = argv[++i];
        else if (k == "--chat") a.chat = true;
        else if (k == "--plan") a.plan = true;
        else return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    if (!parse(argc, argv, a)) {
        std::fprintf(stderr, "usage: %s [-m MODEL] [-p PROMPT] [-n TOKENS] [--providers LIST] [--chat] [--plan]\n", argv[0]);
        return 2;
    }
    try {
        hetero::embed::RuntimeOptions ro;
        ro.providers = a.providers;
        hetero::embed::Runtime runtime(ro);

        hetero::embed::ModelOptions mo;
        mo.path = a.model;
        mo.expected_reply_tokens = a.n;
        hetero::embed::Model model(runtime, mo);
        if (a.plan) std::cerr << "plan:\n" << model.plan() << "\n";

        hetero::embed::GenerateOptions go;
        go.max_tokens = a.n;
        go.temperature = 0;  // greedy: the same text on every run
        const auto print = [](std::string_view piece) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
            return true;
        };
        const hetero::embed::Reply r = a.chat ? model.chat({{"user", a.prompt}}, go, print) : model.generate(a.prompt, go, print);
        std::fputc('\n', stdout);
        std::fprintf(stderr, "%s: %d prompt tokens, %d generated in %.1f ms\n", model.name().c_str(), r.stats.n_prompt,
                     r.stats.n_generated, (r.stats.prefill_seconds + r.stats.decode_seconds) * 1e3);
        return 0;
    } catch (const hetero::embed::Error& e) {
        std::fprintf(stderr, "hetero-generate: %s (%s)\n", e.what(), hetero_result_name(e.code()));
        return 1;
    }
}
