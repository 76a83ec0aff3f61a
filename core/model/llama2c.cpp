// llama2.c checkpoints and tokenizer.bin files.
#include <hetero/model/llama2c.hpp>

#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/model.hpp>

#include "mapped_file.hpp"
#include "value_checks.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>

namespace hetero {

namespace {

using model_detail::MappedFile;

constexpr uint64_t kHeaderBytes = 7 * 4;

// Multiplies with overflow detection; the result stays meaningful only while
// `ok` is true.
struct Checked {
    uint64_t v = 0;
    bool ok = true;
    Checked operator*(uint64_t b) const {
        Checked r{0, ok};
        if (__builtin_mul_overflow(v, b, &r.v)) r.ok = false;
        return r;
    }
    Checked operator+(Checked b) const {
        Checked r{0, ok && b.ok};
        if (__builtin_add_overflow(v, b.v, &r.v)) r.ok = false;
        return r;
    }
};

Checked C(uint64_t v) { return Checked{v, true}; }

// Float counts of every array of the checkpoint, in file order.
struct Layout {
    uint64_t embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final;
    uint64_t freq_cis;  // real and imaginary tables together: seq_len * head_size
    uint64_t wcls;
    uint64_t total_floats;
};

Layout layout_of(const Llama2cConfig& c, const std::string& path) {
    const uint64_t dim = uint64_t(c.dim), hidden = uint64_t(c.hidden_dim), L = uint64_t(c.n_layers);
    const uint64_t vocab = uint64_t(c.vocab_size), seq = uint64_t(c.seq_len);
    const uint64_t head = dim / uint64_t(c.n_heads), kv_dim = dim * uint64_t(c.n_kv_heads) / uint64_t(c.n_heads);
    Checked parts[13] = {C(vocab) * dim, C(L) * dim,      C(L) * dim * dim,    C(L) * kv_dim * dim, C(L) * kv_dim * dim,
                         C(L) * dim * dim, C(L) * dim,    C(L) * hidden * dim, C(L) * dim * hidden, C(L) * hidden * dim,
                         C(dim),           C(seq) * head, C(c.shared_classifier ? 0 : vocab) * dim};
    Checked total = C(0);
    for (const Checked& p : parts) total = total + p;
    total = total * 4;
    if (!total.ok) throw Error(fmt::format("{}: llama2.c header describes an impossibly large model", path));
    return {parts[0].v, parts[1].v, parts[2].v, parts[3].v, parts[4].v, parts[5].v, parts[6].v,
            parts[7].v, parts[8].v, parts[9].v, parts[10].v, parts[11].v, parts[12].v, total.v / 4};
}

Llama2cConfig parse_header(const std::string& path, const uint8_t* data, uint64_t size) {
    if (size < kHeaderBytes)
        throw Error(fmt::format("{}: too short for a llama2.c checkpoint ({} bytes, the header alone is {})", path, size,
                                kHeaderBytes));
    int32_t h[7];
    std::memcpy(h, data, sizeof h);
    const char* names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
    for (int i = 0; i < 7; ++i)
        if (h[i] == 0 || (h[i] < 0 && i != 5) || h[i] == std::numeric_limits<int32_t>::min())
            throw Error(fmt::format("{}: llama2.c header field {} = {} is invalid (at byte {})", path, names[i], h[i], i * 4));
    Llama2cConfig c;
    c.dim = h[0];
    c.hidden_dim = h[1];
    c.n_layers = h[2];
    c.n_heads = h[3];
    c.n_kv_heads = h[4];
    c.shared_classifier = h[5] > 0;
    c.vocab_size = h[5] > 0 ? h[5] : -h[5];
    c.seq_len = h[6];
    if (c.dim % c.n_heads != 0 || (c.dim / c.n_heads) % 2 != 0)
        throw Error(fmt::format("{}: llama2.c header: dim {} is not n_heads {} times an even head size", path, c.dim,
                                c.n_heads));
    if (c.n_kv_heads > c.n_heads || c.n_heads % c.n_kv_heads != 0)
        throw Error(fmt::format("{}: llama2.c header: n_heads {} is not a multiple of n_kv_heads {}", path, c.n_heads,
                                c.n_kv_heads));
    const Layout l = layout_of(c, path);
    const uint64_t expected = kHeaderBytes + l.total_floats * 4;
    if (size != expected)
        throw Error(fmt::format("{}: llama2.c checkpoint has {} bytes but its header (dim {}, hidden {}, {} layers, {} heads, "
                                "{} kv heads, vocab {}, seq_len {}{}) needs exactly {}: {}",
                                path, size, c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, h[5], c.seq_len,
                                c.shared_classifier ? "" : ", separate classifier", expected,
                                size < expected ? "truncated file" : "trailing bytes or wrong header"));
    return c;
}

}  // namespace

Llama2cConfig read_llama2c_config(const std::string& path) {
    MappedFile map(path);
    return parse_header(path, map.data(), map.size());
}

ModelFile load_llama2c_model(const std::string& path) {
    auto map = std::make_shared<MappedFile>(path);
    const Llama2cConfig c = parse_header(path, map->data(), map->size());
    const Layout l = layout_of(c, path);

    ModelFile m;
    m.format = ModelFormat::LLAMA2C;
    m.path = path;
    m.hparams = plain_llama_hparams({c.vocab_size, c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.hidden_dim, c.seq_len});
    LlamaHParams& hp = m.hparams;  // RoPE base 10000 and RMS eps 1e-5, the defaults
    hp.rope_mode = HETERO_ROPE_ADJACENT;  // llama2.c rotates adjacent pairs, like GGUF's llama
    hp.tied_output = c.shared_classifier;

    const int64_t D = c.dim, F = c.hidden_dim, V = c.vocab_size, KV = hp.n_head_kv * hp.head_dim;
    const uint8_t* p = map->data() + kHeaderBytes;
    // Views one array of `floats` per layer (or one array when per_layer is false).
    auto take = [&](const std::string& suffix, uint64_t floats, std::vector<int64_t> shape, bool per_layer) {
        const uint64_t each = per_layer ? floats / uint64_t(c.n_layers) : floats;
        for (int64_t layer = 0; layer < (per_layer ? c.n_layers : 1); ++layer) {
            const std::string name = per_layer ? fmt::format("blk.{}.{}", layer, suffix) : suffix;
            m.weights[name] = WeightView{name, HETERO_DTYPE_F32, shape, p, each * 4};
            p += each * 4;
        }
    };
    take("token_embd.weight", l.embedding, {V, D}, false);
    take("attn_norm.weight", l.rms_att, {D}, true);
    take("attn_q.weight", l.wq, {D, D}, true);
    take("attn_k.weight", l.wk, {KV, D}, true);
    take("attn_v.weight", l.wv, {KV, D}, true);
    take("attn_output.weight", l.wo, {D, D}, true);
    take("ffn_norm.weight", l.rms_ffn, {D}, true);
    take("ffn_gate.weight", l.w1, {F, D}, true);
    take("ffn_down.weight", l.w2, {D, F}, true);
    take("ffn_up.weight", l.w3, {F, D}, true);
    take("output_norm.weight", l.rms_final, {D}, false);
    p += l.freq_cis * 4;  // legacy RoPE tables (real and imaginary halves), recomputed at run time
    if (!c.shared_classifier) take("output.weight", l.wcls, {V, D}, false);
    if (p != map->data() + map->size())  // parse_header checked the size against the same layout
        throw Error(fmt::format("{}: internal error: checkpoint layout does not cover the file", path));
    m.storage = map;
    model_detail::check_weight_values(m);
    return m;
}

Llama2cVocab read_llama2c_tokenizer(const std::string& path, int32_t vocab_size) {
    MappedFile map(path);
    const uint8_t* d = map.data();
    const uint64_t size = map.size();
    if (vocab_size <= 0) throw Error(fmt::format("{}: invalid vocabulary size {}", path, vocab_size));
    uint64_t pos = 0;
    auto read_i32 = [&](const std::string& what) {
        if (size - pos < 4)
            throw Error(fmt::format("{}: truncated tokenizer: {} needs 4 bytes at byte {} but the file has {}", path, what,
                                    pos, size));
        int32_t v;
        std::memcpy(&v, d + pos, 4);
        pos += 4;
        return v;
    };
    Llama2cVocab v;
    v.max_token_length = read_i32("max_token_length");
    if (v.max_token_length <= 0)
        throw Error(fmt::format("{}: max_token_length {} is invalid (at byte 0)", path, v.max_token_length));
    // Each token needs at least 8 bytes (score and length).
    if (uint64_t(vocab_size) > (size - pos) / 8)
        throw Error(fmt::format("{}: a tokenizer of {} bytes cannot hold {} tokens", path, size, vocab_size));
    v.tokens.reserve(size_t(vocab_size));
    v.scores.reserve(size_t(vocab_size));
    for (int32_t i = 0; i < vocab_size; ++i) {
        const int32_t score_bits = read_i32(fmt::format("token {} score", i));
        float score;
        std::memcpy(&score, &score_bits, 4);
        const uint64_t len_at = pos;
        const int32_t len = read_i32(fmt::format("token {} length", i));
        if (len < 0 || uint64_t(len) > size - pos)
            throw Error(fmt::format("{}: token {} has length {} but {} bytes are left (at byte {})", path, i, len, size - pos,
                                    len_at));
        v.tokens.emplace_back(reinterpret_cast<const char*>(d + pos), size_t(len));
        v.scores.push_back(score);
        pos += uint64_t(len);
    }
    if (pos != size)
        throw Error(fmt::format("{}: {} bytes remain after {} tokens (at byte {}): the tokenizer has a different vocabulary "
                                "size",
                                path, size - pos, vocab_size, pos));
    return v;
}

}  // namespace hetero
