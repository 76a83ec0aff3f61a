#include <hetero/error.hpp>
#include <hetero/model/convert.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/random_model.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <thread>
#include <vector>

namespace hetero {

RandomModelShape random_model_preset(const std::string& name) {
    if (name == "tinyllama-1.1b") return {};
    if (name == "llama-7b") return {4096, 11008, 32, 32, 32, 32000, 4096};
    if (name == "stories15m") return {288, 768, 6, 6, 6, 32000, 256};
    if (name == "tiny") return {64, 192, 2, 4, 2, 512, 128};
    if (name == "tiny-k") return {256, 512, 2, 4, 2, 512, 128};  // widths fit K-quant super-blocks
    throw Error(fmt::format("unknown model shape '{}' (known: tinyllama-1.1b, llama-7b, stories15m, tiny, tiny-k)", name));
}

namespace {

// rows x cols uniform(-a, a) values encoded as `dtype`, generated in parallel
// from per-row seeds so the result does not depend on the thread count.
std::vector<uint8_t> random_matrix(int64_t rows, int64_t cols, uint32_t dtype, float a, uint64_t seed) {
    const uint64_t row_bytes = sdk::row_bytes(dtype, cols);
    std::vector<uint8_t> out(row_bytes * uint64_t(rows));
    const unsigned n_threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n_threads; ++t) {
        pool.emplace_back([&, t] {
            std::vector<float> row(static_cast<size_t>(cols));
            for (int64_t r = t; r < rows; r += n_threads) {
                std::mt19937 rng(uint32_t(seed * 1000003u + uint64_t(r)));
                std::uniform_real_distribution<float> dist(-a, a);
                for (auto& v : row) v = dist(rng);
                sdk::row_from_f32(dtype, row.data(), out.data() + row_bytes * uint64_t(r), cols);
            }
        });
    }
    for (auto& th : pool) th.join();
    return out;
}

}  // namespace

void write_random_model(const std::string& path, const RandomModelShape& s, uint32_t dtype, uint64_t seed) {
    if (dtype != HETERO_DTYPE_F32 && dtype != HETERO_DTYPE_F16 && !sdk::is_quant_dtype(dtype))
        throw Error("random model: matrices must be f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q2_K, q3_K, q4_K, q5_K or q6_K");
    if (s.n_embd % s.n_head || s.n_head % s.n_head_kv || s.n_vocab < 259)
        throw Error("random model: inconsistent shape (heads must divide the embedding, kv heads the heads, vocab >= 259)");
    if (sdk::is_block32_dtype(dtype) && (s.n_embd % 32 || s.n_ff % 32)) throw Error("random model: block types need widths divisible by 32");
    if (sdk::is_kquant_dtype(dtype) && (s.n_embd % sdk::kKBlock || s.n_ff % sdk::kKBlock))
        throw Error("random model: K-quant types need widths divisible by 256");
    const int64_t hd = s.n_embd / s.n_head, kv = hd * s.n_head_kv;
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    w.add_string("general.name", "random");
    LlamaHParams hp;
    hp.n_vocab = s.n_vocab;
    hp.n_ctx_train = s.n_ctx;
    hp.n_embd = s.n_embd;
    hp.n_layer = s.n_layer;
    hp.n_ff = s.n_ff;
    hp.n_head = s.n_head;
    hp.n_head_kv = s.n_head_kv;
    hp.rope_dims = hd;
    add_llama_hparams(w, hp);
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(fmt::format("<0x{:02X}>", b));
        types.push_back(6);
    }
    while (int64_t(tokens.size()) < s.n_vocab) {
        tokens.push_back(fmt::format("\xe2\x96\x81tok{}", tokens.size()));
        types.push_back(1);
    }
    std::vector<float> scores(tokens.size(), 0.f);
    for (size_t i = 0; i < scores.size(); ++i) scores[i] = -float(i);
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_float32_array("tokenizer.ggml.scores", scores);
    w.add_int32_array("tokenizer.ggml.token_type", types);
    w.add_uint32("tokenizer.ggml.bos_token_id", 1);
    w.add_uint32("tokenizer.ggml.eos_token_id", 2);
    w.add_uint32("tokenizer.ggml.unknown_token_id", 0);

    const uint32_t gtype = *ggml_type_from_hetero(dtype);
    uint64_t salt = seed;
    auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
        const auto data = random_matrix(rows, cols, dtype, 1.f / std::sqrt(float(cols)), ++salt);
        w.add_tensor(name, gtype, {cols, rows}, data.data(), data.size());
    };
    auto norm = [&](const std::string& name, int64_t n) {
        std::vector<float> ones(size_t(n), 1.f);
        w.add_tensor(name, GGML_TYPE_ID_F32, {n}, ones.data(), ones.size() * 4);
    };
    {
        const auto emb = random_matrix(s.n_vocab, s.n_embd, dtype, 1.f, ++salt);
        w.add_tensor("token_embd.weight", gtype, {s.n_embd, s.n_vocab}, emb.data(), emb.size());
    }
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string b = fmt::format("blk.{}.", l);
        norm(b + "attn_norm.weight", s.n_embd);
        matrix(b + "attn_q.weight", s.n_embd, s.n_embd);
        matrix(b + "attn_k.weight", kv, s.n_embd);
        matrix(b + "attn_v.weight", kv, s.n_embd);
        matrix(b + "attn_output.weight", s.n_embd, s.n_embd);
        norm(b + "ffn_norm.weight", s.n_embd);
        matrix(b + "ffn_gate.weight", s.n_ff, s.n_embd);
        matrix(b + "ffn_up.weight", s.n_ff, s.n_embd);
        matrix(b + "ffn_down.weight", s.n_embd, s.n_ff);
    }
    norm("output_norm.weight", s.n_embd);
    matrix("output.weight", s.n_vocab, s.n_embd);
    w.write(path);
}

}  // namespace hetero
