// Greedy generation through llama.cpp's library, for tests/arch/peer_tokens.sh.
//
// Prints the generated token ids, one per line, the end-of-generation token
// included when the model produces one. llama-completion's text cannot be
// trusted for this under a loaded machine: its output goes through an
// asynchronous log queue, and CI runs have seen it print nothing, a prefix of
// its text, or one piece twice. This program writes ids from the thread that
// computed them, and its exit status says whether the run finished.
//
// Usage: peer-greedy MODEL PROMPT N_PREDICT [--kv f32|f16] [--flash-attn on|off] [--threads N] [--ctx N]
// Build: tests/arch/build_peer.sh, against the peer's libllama.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "llama.h"
#include "peer_common.hpp"

namespace {

int fail(const char* what) { return peer::fail("peer-greedy", what); }

struct Options {
    const char* model = nullptr;
    std::string prompt;
    int n_predict = 0;
    ggml_type kv_type = GGML_TYPE_F32;
    bool flash_attn = false;
    int threads = 2;
    int ctx = 256;
};

bool parse(int argc, char** argv, Options& o) {
    if (argc < 4) return false;
    o.model = argv[1];
    o.prompt = argv[2];
    o.n_predict = std::atoi(argv[3]);
    for (int i = 4; i < argc; i += 2) {
        if (i + 1 == argc) return false;  // a flag without its value
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--kv" && (value == "f32" || value == "f16"))
            o.kv_type = value == "f32" ? GGML_TYPE_F32 : GGML_TYPE_F16;
        else if (flag == "--flash-attn" && (value == "on" || value == "off"))
            o.flash_attn = value == "on";
        else if (flag == "--threads")
            o.threads = std::atoi(value.c_str());
        else if (flag == "--ctx")
            o.ctx = std::atoi(value.c_str());
        else
            return false;
    }
    return o.n_predict > 0 && o.threads > 0 && o.ctx > 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o))
        return fail("usage: peer-greedy MODEL PROMPT N_PREDICT [--kv f32|f16] [--flash-attn on|off] [--threads N] [--ctx N]");

    llama_log_set(peer::quiet_log, nullptr);
    ggml_backend_load_all();  // the CPU backend variants beside this program
    llama_backend_init();

    llama_model_params mp = llama_model_default_params();
    llama_model* model = llama_model_load_from_file(o.model, mp);
    if (!model) return fail("cannot load the model");
    const llama_vocab* vocab = llama_model_get_vocab(model);

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = static_cast<uint32_t>(o.ctx);
    cp.n_batch = cp.n_ctx;
    cp.n_threads = cp.n_threads_batch = o.threads;
    cp.type_k = cp.type_v = o.kv_type;
    cp.flash_attn_type = o.flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) return fail("cannot create a context");

    // As llama-completion tokenizes a plain prompt: special tokens added where
    // the vocabulary asks for them, and parsed in the text.
    const auto tokenize = [&](std::vector<llama_token>& out) {
        return llama_tokenize(vocab, o.prompt.data(), static_cast<int32_t>(o.prompt.size()), out.data(),
                              static_cast<int32_t>(out.size()), true, true);
    };
    std::vector<llama_token> tokens(o.prompt.size() + 2);
    int n = tokenize(tokens);
    if (n < 0) {  // the buffer was short by this much
        tokens.resize(static_cast<size_t>(-n));
        n = tokenize(tokens);
    }
    if (n <= 0) return fail("the prompt gave no tokens");
    tokens.resize(static_cast<size_t>(n));
    if (static_cast<int>(tokens.size()) + o.n_predict > o.ctx) return fail("prompt and generation exceed --ctx");

    const int n_vocab = llama_vocab_n_tokens(vocab);
    llama_batch batch = llama_batch_get_one(tokens.data(), static_cast<int32_t>(tokens.size()));
    llama_token next = 0;
    for (int step = 0; step < o.n_predict; ++step) {
        if (llama_decode(ctx, batch) != 0) return fail("llama_decode failed");
        const float* logits = llama_get_logits_ith(ctx, -1);
        if (!logits) return fail("no logits");
        // Greedy: the first of the largest logits, as llama.cpp's greedy sampler picks.
        next = 0;
        for (int t = 1; t < n_vocab; ++t)
            if (logits[t] > logits[next]) next = t;
        std::printf("%d\n", next);
        if (llama_vocab_is_eog(vocab, next)) break;
        batch = llama_batch_get_one(&next, 1);
    }
    if (std::fflush(stdout) != 0) return fail("writing the token ids failed");

    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
