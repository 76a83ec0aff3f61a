// Embeddings through llama.cpp's library, for tests/arch/peer_embeddings.sh.
//
// For each text: tokenized as llama.cpp's server tokenizes an embeddings
// input (special tokens added where the vocabulary asks for them, and parsed
// in the text), evaluated in a fresh context state with embeddings on and
// mean pooling, then scaled to unit L2 norm. Prints one line per text: the
// vector's values separated by spaces.
//
// Usage: peer-embed MODEL TEXT... [--pooling mean|last|cls]
// Build: tests/arch/build_peer.sh, against the peer's libllama.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "llama.h"
#include "peer_common.hpp"

namespace {

int fail(const char* what) { return peer::fail("peer-embed", what); }

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) return fail("usage: peer-embed MODEL TEXT... [--pooling mean|last|cls]");
    std::vector<std::string> texts;
    enum llama_pooling_type pooling = LLAMA_POOLING_TYPE_MEAN;
    for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "--pooling") == 0 && i + 1 < argc) {
            const std::string p = argv[++i];
            pooling = p == "last" ? LLAMA_POOLING_TYPE_LAST : p == "cls" ? LLAMA_POOLING_TYPE_CLS : LLAMA_POOLING_TYPE_MEAN;
            continue;
        }
        texts.push_back(argv[i]);
    }
    llama_log_set(peer::quiet_log, nullptr);
    ggml_backend_load_all();
    llama_backend_init();
    llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) return fail("cannot load the model");
    const llama_vocab* vocab = llama_model_get_vocab(model);

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = cp.n_ubatch = cp.n_ctx;  // a text is evaluated in one batch
    cp.n_threads = cp.n_threads_batch = 2;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.embeddings = true;
    cp.pooling_type = pooling;
    cp.no_perf = true;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) return fail("cannot create a context");
    const int n_embd = llama_model_n_embd(model);

    for (const std::string& text : texts) {
        std::vector<llama_token> tokens(text.size() + 4);
        int n = llama_tokenize(vocab, text.data(), int32_t(text.size()), tokens.data(), int32_t(tokens.size()), true, true);
        if (n < 0) {  // the buffer was short by this much
            tokens.resize(size_t(-n));
            n = llama_tokenize(vocab, text.data(), int32_t(text.size()), tokens.data(), int32_t(tokens.size()), true, true);
        }
        if (n <= 0 || n > int(cp.n_ctx)) return fail("a text gave no tokens, or more than the context");
        tokens.resize(size_t(n));
        llama_memory_clear(llama_get_memory(ctx), true);
        llama_batch batch = llama_batch_init(n, 0, 1);
        for (int i = 0; i < n; ++i) {
            batch.token[i] = tokens[size_t(i)];
            batch.pos[i] = i;
            batch.n_seq_id[i] = 1;
            batch.seq_id[i][0] = 0;
            batch.logits[i] = 1;  // every token's state goes into the pool
        }
        batch.n_tokens = n;
        if (llama_decode(ctx, batch) != 0) return fail("llama_decode failed");
        const float* v = llama_get_embeddings_seq(ctx, 0);
        if (!v) return fail("no pooled embedding");
        double sq = 0;
        for (int i = 0; i < n_embd; ++i) sq += double(v[i]) * v[i];
        const double inv = sq > 0 ? 1.0 / std::sqrt(sq) : 0.0;
        for (int i = 0; i < n_embd; ++i) std::printf(i ? " %.9g" : "%.9g", v[i] * inv);
        std::printf("\n");
        llama_batch_free(batch);
    }
    if (std::fflush(stdout) != 0) return fail("writing the vectors failed");
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
