// llama2.c -> GGUF conversion and GGUF re-quantization.
#include <hetero/model/convert.hpp>

#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/llama2c.hpp>
#include <hetero/model/model.hpp>
#include <hetero/progress.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace hetero {

namespace {

// llama.cpp's token types.
enum TokenType : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kByte = 6 };

// llama.cpp's general.file_type values for the types we write.
uint32_t file_type_of(uint32_t dtype) {
    switch (dtype) {
        case HETERO_DTYPE_F16: return 1;
        case HETERO_DTYPE_Q4_0: return 2;
        case HETERO_DTYPE_Q8_0: return 7;
        case HETERO_DTYPE_BF16: return 32;
        default: return 0;
    }
}

// The output must not be one of the inputs (they are read while it is written).
void refuse_overwriting(const std::string& out, std::initializer_list<std::string> inputs) {
    for (const std::string& in : inputs) {
        std::error_code ec;
        if (std::filesystem::equivalent(out, in, ec))
            throw Error(fmt::format("output {} is the input {}: choose another output name", out, in));
    }
}

void check_out_dtype(uint32_t dtype) {
    if (dtype != HETERO_DTYPE_F32 && dtype != HETERO_DTYPE_F16 && dtype != HETERO_DTYPE_Q8_0 && dtype != HETERO_DTYPE_Q4_0)
        throw Error(fmt::format("cannot write weights as {} (choose f32, f16, q8_0 or q4_0)", sdk::dtype_name(dtype)));
}

bool is_byte_token(const std::string& t) {
    auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
    return t.size() == 6 && t.compare(0, 3, "<0x") == 0 && hex(t[3]) && hex(t[4]) && t[5] == '>';
}

// The dtype a matrix of `cols` columns is stored as when `requested`.
uint32_t matrix_dtype(const std::string& name, int64_t cols, uint32_t requested) {
    uint32_t d = requested;
    if (d == HETERO_DTYPE_Q4_0 && name == "token_embd.weight") d = HETERO_DTYPE_Q8_0;  // also the tied classifier
    if (sdk::is_block_dtype(d) && cols % sdk::kQBlock != 0) d = HETERO_DTYPE_F16;    // rows cannot hold whole blocks
    return d;
}

bool is_matrix_weight(const std::string& name, size_t rank) {
    return rank == 2 && name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0;
}

// Encodes a weight (any dtype hetero reads) as `dtype`, row by row.
std::vector<uint8_t> encode(const WeightView& w, uint32_t dtype) {
    const int64_t cols = w.shape.back();
    const int64_t rows = int64_t(w.bytes / sdk::row_bytes(w.dtype, cols));
    const uint64_t out_row = sdk::row_bytes(dtype, cols), in_row = sdk::row_bytes(w.dtype, cols);
    std::vector<uint8_t> out(out_row * uint64_t(rows));
    std::vector<float> row(size_t(cols), 0.f);
    for (int64_t r = 0; r < rows; ++r) {
        sdk::row_to_f32(w.dtype, w.data + in_row * uint64_t(r), row.data(), cols);
        sdk::row_from_f32(dtype, row.data(), out.data() + out_row * uint64_t(r), cols);
    }
    return out;
}

void add_weight(GgufWriter& out, const WeightView& w, uint32_t dtype) {
    const std::vector<int64_t> ne(w.shape.rbegin(), w.shape.rend());
    const uint32_t ggml = *ggml_type_from_hetero(dtype);
    if (dtype == w.dtype) {
        out.add_tensor(w.name, ggml, ne, w.data, w.bytes);
    } else {
        const std::vector<uint8_t> data = encode(w, dtype);
        out.add_tensor(w.name, ggml, ne, data.data(), data.size());
    }
}

}  // namespace

void add_llama_hparams(GgufWriter& w, const LlamaHParams& hp) {
    w.add_uint32("llama.vocab_size", uint32_t(hp.n_vocab));
    w.add_uint32("llama.context_length", uint32_t(hp.n_ctx_train));
    w.add_uint32("llama.embedding_length", uint32_t(hp.n_embd));
    w.add_uint32("llama.block_count", uint32_t(hp.n_layer));
    w.add_uint32("llama.feed_forward_length", uint32_t(hp.n_ff));
    w.add_uint32("llama.attention.head_count", uint32_t(hp.n_head));
    w.add_uint32("llama.attention.head_count_kv", uint32_t(hp.n_head_kv));
    w.add_uint32("llama.rope.dimension_count", uint32_t(hp.rope_dims));
    w.add_float32("llama.rope.freq_base", hp.rope_freq_base);
    w.add_float32("llama.attention.layer_norm_rms_epsilon", hp.norm_eps);
}

void convert_llama2c_to_gguf(const std::string& bin, const std::string& tokenizer_bin, const std::string& out_gguf,
                             uint32_t out_dtype) {
    check_out_dtype(out_dtype);
    refuse_overwriting(out_gguf, {bin, tokenizer_bin});
    const ModelFile m = load_llama2c_model(bin);
    const LlamaHParams& hp = m.hparams;
    const Llama2cVocab vocab = read_llama2c_tokenizer(tokenizer_bin, int32_t(hp.n_vocab));

    GgufWriter w;
    w.add_string("general.architecture", "llama");
    w.add_string("general.name", std::filesystem::path(bin).stem().string());
    w.add_uint32("general.file_type", file_type_of(out_dtype));
    add_llama_hparams(w, hp);

    // llama2.c writes SentencePiece's word marker as a plain space and wraps
    // BOS/EOS in newlines for printing; GGUF keeps SentencePiece's own pieces.
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (size_t i = 0; i < vocab.tokens.size(); ++i) {
        std::string t = vocab.tokens[i];
        int32_t type = kNormal;
        if (i == 0) {
            t = "<unk>", type = kUnknown;
        } else if (i == 1) {
            t = "<s>", type = kControl;
        } else if (i == 2) {
            t = "</s>", type = kControl;
        } else if (is_byte_token(t)) {
            type = kByte;
        } else {
            std::string marked;
            for (char c : t) marked += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
            t = std::move(marked);
        }
        tokens.push_back(std::move(t));
        types.push_back(type);
    }
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_float32_array("tokenizer.ggml.scores", vocab.scores);
    w.add_int32_array("tokenizer.ggml.token_type", types);
    w.add_uint32("tokenizer.ggml.bos_token_id", 1);
    w.add_uint32("tokenizer.ggml.eos_token_id", 2);
    w.add_uint32("tokenizer.ggml.unknown_token_id", 0);
    w.add_bool("tokenizer.ggml.add_bos_token", true);
    w.add_bool("tokenizer.ggml.add_eos_token", false);

    auto put = [&](const std::string& name) {
        const WeightView& v = m.weight(name);
        add_weight(w, v, v.shape.size() == 2 ? matrix_dtype(name, v.shape[1], out_dtype) : uint32_t(HETERO_DTYPE_F32));
    };
    {
        ProgressTask progress("converting " + bin, uint64_t(m.weights.size()), "tensors");
        auto put_counted = [&](const std::string& name) {
            put(name);
            progress.advance(1);
        };
        put_counted("token_embd.weight");
        put_counted("output_norm.weight");
        if (!hp.tied_output) put_counted("output.weight");
        for (int64_t l = 0; l < hp.n_layer; ++l)
            for (const char* s : {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up",
                                  "ffn_down"})
                put_counted(fmt::format("blk.{}.{}.weight", l, s));
    }
    w.write(out_gguf);
}

void quantize_gguf(const std::string& in_gguf, const std::string& out_gguf, uint32_t out_dtype) {
    refuse_overwriting(out_gguf, {in_gguf});
    check_out_dtype(out_dtype);
    const ModelFile m = load_model(in_gguf);  // validates architecture, shapes and dtypes
    if (!m.gguf) throw Error(fmt::format("{}: not a GGUF file", in_gguf));
    const GgufFile& in = *m.gguf;

    GgufWriter w;
    if (in.alignment() != 32) w.set_alignment(uint32_t(in.alignment()));
    for (const std::string& key : in.keys()) {
        if (key == "general.alignment" || key == "general.file_type") continue;
        w.add_raw(key, in.raw_value(key));
    }
    w.add_uint32("general.file_type", file_type_of(out_dtype));
    ProgressTask progress("converting " + in_gguf, uint64_t(in.tensors().size()), "tensors");
    for (const GgufTensorInfo& t : in.tensors()) {
        progress.advance(1);
        auto it = m.weights.find(t.name);
        if (it != m.weights.end() && is_matrix_weight(t.name, t.ne.size())) {
            add_weight(w, it->second, matrix_dtype(t.name, t.ne[0], out_dtype));
        } else {
            w.add_tensor(t.name, t.ggml_type, t.ne, t.data, t.bytes);  // norms, biases, extra tensors: unchanged
        }
    }
    w.write(out_gguf);
}

}  // namespace hetero
