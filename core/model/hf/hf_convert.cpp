// hetero convert hf: config.json, the safetensors shards and the tokenizer
// files in, one GGUF out (metadata first, then each tensor converted while
// the file is written, so one tensor at a time is in memory).
#include <hetero/model/hf_convert.hpp>

#include "../quant_search.hpp"
#include "../reencode.hpp"
#include "hf_config.hpp"
#include "hf_hparams.hpp"
#include "hf_tensor_names.hpp"
#include "hf_vocab.hpp"
#include "hf_weights.hpp"

#include <hetero/ep_api.h>
#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/quant_mix.hpp>
#include <hetero/model/quantize.hpp>
#include <hetero/model/rope_scaling.hpp>
#include <hetero/progress.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>

namespace hetero {

namespace {

namespace fs = std::filesystem;
using namespace model_detail;

// The output type: one ggml type for every matrix (llama.cpp's converter's
// --outtype), or a quantize mix whose rules pick per matrix.
struct OutputType {
    uint32_t file_type = 1;
    uint32_t matrix_type = GGML_TYPE_ID_F16;
    const QuantFileType* mix = nullptr;
};

OutputType output_type(const std::string& name) {
    std::string lower = name;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "f32") return {0, GGML_TYPE_ID_F32, nullptr};
    if (lower == "f16") return {1, GGML_TYPE_ID_F16, nullptr};
    if (lower == "bf16") return {32, GGML_TYPE_ID_BF16, nullptr};
    if (lower == "q8_0") return {7, GGML_TYPE_ID_Q8_0, nullptr};
    if (const QuantFileType* mix = find_quant_file_type(name)) return {mix->ftype, mix->base_type, mix};
    throw Error(fmt::format("unknown output type '{}' (f32, f16, bf16, q8_0 or a quantize type: {})", name,
                            fmt::join(quantize_type_names(), ", ")));
}

uint32_t source_dtype(const SafetensorsTensor& t, const std::string& file) {
    if (t.dtype == "F32") return HETERO_DTYPE_F32;
    if (t.dtype == "F16") return HETERO_DTYPE_F16;
    if (t.dtype == "BF16") return HETERO_DTYPE_BF16;
    throw Error(fmt::format("{}: tensor '{}' is {}; hetero converts F32, F16 and BF16 weights", file, t.name, t.dtype));
}

std::string shape_str(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// One GGUF tensor: where its values come from and what is done to them.
struct PlannedTensor {
    std::string name;
    const SafetensorsTensor* src = nullptr;  // null: `generated` holds the values
    std::string file;                        // the shard, for messages
    std::vector<int64_t> shape;              // outermost first, as written
    int64_t permute_heads = 0;               // Llama's Q/K: rows regrouped per head for GGUF's RoPE
    float add = 0.f;                         // Gemma's norms store weight - 1
    std::vector<float> generated;
    uint32_t ggml_type = GGML_TYPE_ID_F32;
};

// The source row of output row `r` when Q/K rows are regrouped: HF keeps
// each head's rotated pairs as two halves, GGUF interleaves them.
int64_t source_row(int64_t r, int64_t rows, int64_t heads) {
    if (heads == 0) return r;
    const int64_t hd = rows / heads, h = r / hd, j = r % hd;
    return h * hd + (j % 2) * (hd / 2) + j / 2;
}

// Reads source row `r` (possibly unaligned) as f32.
void read_row(const SafetensorsTensor& t, uint32_t dtype, int64_t r, int64_t cols, std::vector<uint8_t>& raw, float* out) {
    const uint64_t bytes = uint64_t(cols) * t.elem_bytes;
    raw.resize(size_t(bytes));
    std::memcpy(raw.data(), t.data + uint64_t(r) * bytes, size_t(bytes));
    sdk::row_to_f32(dtype, raw.data(), out, cols);
}

// A source value a GGUF of `dst` cannot hold: not finite, or beyond F16's
// range when the matrix is written as F16 (it would become infinity).
void check_values(const PlannedTensor& p, uint32_t dst, const float* v, int64_t n, int64_t row) {
    const float limit = dst == HETERO_DTYPE_F16 ? 65504.f : std::numeric_limits<float>::max();
    for (int64_t i = 0; i < n; ++i) {
        if (std::isfinite(v[i]) && std::fabs(v[i]) <= limit) continue;
        if (!std::isfinite(v[i]))
            throw Error(fmt::format("{}: tensor '{}' holds {} (row {}, column {}): the checkpoint is damaged", p.file, p.src->name, v[i], row, i));
        throw Error(fmt::format("{}: tensor '{}' holds {} (row {}, column {}), beyond F16's range: convert with --type bf16 or f32", p.file,
                                p.src->name, v[i], row, i));
    }
}

void fill(const PlannedTensor& p, uint8_t* out, int threads) {
    if (!p.src) {
        std::memcpy(out, p.generated.data(), p.generated.size() * 4);
        return;
    }
    const uint32_t src = source_dtype(*p.src, p.file);
    if (p.shape.size() == 1) {  // norms and biases: f32, whole
        const int64_t n = p.shape[0];
        std::vector<float> v(static_cast<size_t>(n));
        std::vector<uint8_t> raw;
        read_row(*p.src, src, 0, n, raw, v.data());
        check_values(p, HETERO_DTYPE_F32, v.data(), n, 0);
        std::vector<float> o(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) o[size_t(i)] = v[size_t(source_row(i, n, p.permute_heads))] + p.add;
        std::memcpy(out, o.data(), o.size() * 4);
        return;
    }
    const int64_t rows = p.shape[0], cols = p.shape[1];
    const uint32_t dst = *hetero_dtype_from_ggml(p.ggml_type);
    const uint64_t out_row = sdk::row_bytes(dst, cols);
    parallel_rows(rows, cols, threads, [&](int64_t first, int64_t last) {
        std::vector<uint8_t> raw;
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = first; r < last; ++r) {
            const int64_t from = source_row(r, rows, p.permute_heads);
            read_row(*p.src, src, from, cols, raw, row.data());
            if (p.add != 0.f)
                for (float& x : row) x += p.add;
            check_values(p, dst, row.data(), cols, from);
            encode_row_best(dst, row.data(), out + out_row * uint64_t(r), cols);
        }
    });
}

std::string model_name(const std::string& dir) {
    fs::path p = fs::path(dir).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();
    const std::string n = p.filename().string();
    return n.empty() || n == "." ? fs::absolute(dir).lexically_normal().filename().string() : n;
}

// The tensors to write, in GGUF order, each checked against config.json.
std::vector<PlannedTensor> plan_tensors(const HfConfig& c, const HfWeights& weights, size_t n_tokens) {
    std::map<std::string, PlannedTensor> found;
    for (const auto& [hf_name, t] : weights.tensors) {
        const std::string& file = weights.file_of.at(hf_name)->path();
        const HfTensorName n = gguf_name_of(c, hf_name, file);
        if (n.kind == HfTensorName::Kind::Skip) continue;
        if (found.count(n.gguf))
            throw Error(fmt::format("{}: tensor '{}' is a second source of {}", file, hf_name, n.gguf));
        source_dtype(*t, file);  // refuse other dtypes before anything is written
        PlannedTensor p;
        p.name = n.gguf;
        p.src = t;
        p.file = file;
        p.shape = t->shape;
        found[n.gguf] = std::move(p);
    }
    std::vector<PlannedTensor> out;
    const bool gemma = c.arch.starts_with("gemma");
    for (const ExpectedTensor& e : expected_tensors(c)) {
        auto it = found.find(e.name);
        if (it == found.end()) {
            if (e.optional) continue;
            throw Error(fmt::format("{}: no safetensors file holds tensor '{}' (shape {}, written as {})", fs::path(c.path).parent_path().string(),
                                    hf_name_for(c, e.name), shape_str(e.shape), e.name));
        }
        PlannedTensor p = std::move(it->second);
        found.erase(it);
        if (p.shape != e.shape)
            throw Error(fmt::format("{}: tensor '{}' has shape {}, but config.json makes {} {}", p.file, p.src->name, shape_str(p.shape),
                                    e.name, shape_str(e.shape)));
        if (c.arch == "llama" && (e.name.ends_with("attn_q.weight") || e.name.ends_with("attn_q.bias"))) p.permute_heads = c.n_head;
        if (c.arch == "llama" && (e.name.ends_with("attn_k.weight") || e.name.ends_with("attn_k.bias"))) p.permute_heads = c.n_head_kv;
        if (gemma && p.src->name.ends_with("norm.weight")) p.add = 1.f;
        // Gemma 3: embedding rows beyond the vocabulary are dropped.
        if (c.arch == "gemma3" && e.name == "token_embd.weight" && p.shape[0] > int64_t(n_tokens)) p.shape[0] = int64_t(n_tokens);
        out.push_back(std::move(p));
        if (e.name == "token_embd.weight" && c.arch == "llama" && c.rope_type == "llama3") {
            // Llama 3.1's frequency factors, as a tensor (llama.cpp's converter does the same).
            const nlohmann::json& r = c.rope.contains("full_attention") ? c.rope["full_attention"] : c.rope;
            auto num = [&](const char* key, double fallback) { return r.contains(key) && r[key].is_number() ? r[key].get<double>() : fallback; };
            const Llama3RopeScaling s{num("factor", 8.0), num("low_freq_factor", 1.0), num("high_freq_factor", 4.0),
                                      num("original_max_position_embeddings", 8192.0)};
            if (!(s.factor > 0) || !(s.low_freq_factor > 0) || !(s.high_freq_factor > s.low_freq_factor) || !(s.original_context > 0))
                throw Error(fmt::format("{}: llama3 rope_scaling needs factor > 0 and high_freq_factor > low_freq_factor > 0", c.path));
            PlannedTensor f;
            f.name = "rope_freqs.weight";
            f.generated = llama3_rope_factors(s, c.rope_theta.value_or(10000.0), c.head_dim);
            f.shape = {int64_t(f.generated.size())};
            out.push_back(std::move(f));
        }
    }
    if (!found.empty()) {
        const PlannedTensor& extra = found.begin()->second;
        throw Error(fmt::format("{}: tensor '{}' ({}) is not one hetero's {} uses (a model variant it does not run?)", extra.file,
                                extra.src->name, extra.name, c.arch));
    }
    // GGUF order: embedding and factors, the layers, then the output end.
    std::stable_partition(out.begin(), out.end(), [](const PlannedTensor& p) { return !p.name.starts_with("output"); });
    return out;
}

// The ggml type of each tensor: norms, biases and 1-D tensors f32; matrices
// the output type, or the mix's pick.
void choose_types(std::vector<PlannedTensor>& tensors, const OutputType& type, const HfConfig& c) {
    std::vector<QuantTensorDesc> descs;
    for (const PlannedTensor& p : tensors) {
        const bool matrix = p.shape.size() == 2 && p.name.ends_with(".weight") && !p.name.ends_with("_norm.weight");
        descs.push_back({p.name, std::vector<int64_t>(p.shape.rbegin(), p.shape.rend()), matrix ? uint32_t(GGML_TYPE_ID_F16) : uint32_t(GGML_TYPE_ID_F32)});
    }
    std::vector<uint32_t> types;
    if (type.mix) {
        types = plan_quant_types(*type.mix, {c.arch, c.n_layer, c.n_head, c.n_head_kv}, descs);
    } else {
        for (const QuantTensorDesc& d : descs) {
            uint32_t t = d.ggml_type == GGML_TYPE_ID_F16 ? type.matrix_type : uint32_t(GGML_TYPE_ID_F32);
            if (t == GGML_TYPE_ID_Q8_0 && d.ne[0] % sdk::kQBlock != 0) t = GGML_TYPE_ID_F16;  // as the converter falls back
            types.push_back(t);
        }
    }
    for (size_t i = 0; i < tensors.size(); ++i) tensors[i].ggml_type = types[i];
}

}  // namespace

const std::vector<std::string>& hf_convert_type_names() {
    static const std::vector<std::string> names = {"f32", "f16", "bf16", "q8_0"};
    return names;
}

HfConvertResult convert_hf_to_gguf(const std::string& dir, const std::string& out_gguf, const HfConvertOptions& options) {
    const OutputType type = output_type(options.type);
    if (!fs::is_directory(dir)) throw Error(fmt::format("{}: not a directory (a Hugging Face model folder is expected)", dir));
    const HfConfig config = read_hf_config(dir);
    const GgufVocabulary vocab = read_hf_vocabulary(dir, config);
    // Shared with the deferred tensors, which read the mappings while the file is written.
    const auto weights = std::make_shared<HfWeights>(open_hf_weights(dir));
    for (const auto& f : weights->files) {
        std::error_code ec;
        if (fs::equivalent(out_gguf, f->path(), ec)) throw Error(fmt::format("output {} is the input {}: choose another output name", out_gguf, f->path()));
    }
    auto tensors = std::make_shared<std::vector<PlannedTensor>>(plan_tensors(config, *weights, vocab.tokens.size()));
    choose_types(*tensors, type, config);

    GgufWriter w;
    add_hf_hparams(w, config, model_name(dir), type.file_type);
    add_generation_defaults(w, dir);
    add_vocabulary(w, vocab);
    uint64_t total = 0;
    for (const PlannedTensor& p : *tensors) total += p.src ? p.src->bytes : p.generated.size() * 4;
    auto progress = std::make_shared<std::unique_ptr<ProgressTask>>();
    for (size_t i = 0; i < tensors->size(); ++i) {
        const PlannedTensor& p = (*tensors)[i];
        const std::vector<int64_t> ne(p.shape.rbegin(), p.shape.rend());
        uint64_t rows = 1;
        for (size_t d = 1; d < ne.size(); ++d) rows *= uint64_t(ne[d]);
        const uint64_t bytes = rows * sdk::row_bytes(*hetero_dtype_from_ggml(p.ggml_type), ne[0]);
        w.add_tensor_deferred(p.name, p.ggml_type, ne, bytes,
                              [weights, tensors, i, total, progress, threads = options.threads, dir](uint8_t* out) {
                                  const PlannedTensor& t = (*tensors)[i];
                                  if (i == 0) *progress = std::make_unique<ProgressTask>("converting " + dir, total);
                                  fill(t, out, threads);
                                  if (*progress) (*progress)->advance(t.src ? t.src->bytes : t.generated.size() * 4);
                              });
    }
    w.write(out_gguf);
    progress->reset();
    HfConvertResult result{config.arch, {}, vocab.tokens.size()};
    for (const PlannedTensor& p : *tensors) result.tensors.push_back({p.name, p.ggml_type});
    return result;
}

}  // namespace hetero
