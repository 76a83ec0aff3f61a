// hetero quantize: GGUF in, GGUF out, each tensor in the type of
// quant_mix's plan; metadata copied, general.file_type set.
#include <hetero/model/quantize.hpp>

#include "reencode.hpp"

#include <hetero/error.hpp>
#include <hetero/model/ggml_types.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/gguf_writer.hpp>
#include <hetero/model/quant_mix.hpp>
#include <hetero/progress.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <memory>

namespace hetero {

namespace {

constexpr uint32_t kQuantizationVersion = 2;  // ggml's GGML_QNT_VERSION

std::string known_types() {
    std::string s;
    for (const QuantFileType& t : quant_file_types()) s += (s.empty() ? "" : ", ") + std::string(t.name);
    return s;
}

QuantModelInfo model_info(const GgufFile& f) {
    QuantModelInfo m;
    const auto arch = f.get_string("general.architecture");
    if (!arch) throw Error(fmt::format("{}: metadata key 'general.architecture' is missing", f.path()));
    m.arch = *arch;
    const std::string a = m.arch + ".";
    const auto layers = f.get_uint(a + "block_count");
    if (!layers || *layers == 0 || *layers > 100000)
        throw Error(fmt::format("{}: metadata key '{}block_count' is missing or out of range (1..100000)", f.path(), a));
    m.n_layer = int64_t(*layers);
    // Per-layer head counts (arrays) give no single ratio: such a file gets none.
    auto scalar = [&](const std::string& key) -> int64_t {
        if (!f.has(key) || f.type_of(key) == GgufType::ARRAY) return 0;
        return int64_t(f.get_uint(key).value_or(0));
    };
    m.n_head = scalar(a + "attention.head_count");
    m.n_head_kv = f.has(a + "attention.head_count_kv") ? scalar(a + "attention.head_count_kv") : m.n_head;
    return m;
}

// Refuses what cannot be written before anything is: a type hetero cannot
// decode, or one already quantized without permission.
void check_reencodable(const GgufFile& in, const GgufTensorInfo& t, uint32_t to, bool allow_requantize) {
    const auto from = hetero_dtype_from_ggml(t.ggml_type);
    if (!from || !hetero_dtype_from_ggml(to))
        throw Error(fmt::format("{}: tensor '{}' is {}, which hetero cannot re-encode as {}", in.path(), t.name, ggml_type_name(t.ggml_type),
                                ggml_type_name(to)));
    if (sdk::is_quant_dtype(*from) && !allow_requantize)
        throw Error(fmt::format("{}: tensor '{}' is already quantized ({}); re-encoding it as {} adds a second rounding error "
                                "(pass --allow-requantize to do it anyway, or start from the F16/F32 file)",
                                in.path(), t.name, ggml_type_name(t.ggml_type), ggml_type_name(to)));
}

uint64_t rows_of(const std::vector<int64_t>& ne) {
    uint64_t r = 1;
    for (size_t i = 1; i < ne.size(); ++i) r *= uint64_t(ne[i]);
    return r;
}

}  // namespace

const std::vector<std::string>& quantize_type_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const QuantFileType& t : quant_file_types()) v.emplace_back(t.name);
        return v;
    }();
    return names;
}

std::vector<QuantizedTensor> quantize_gguf_file(const std::string& in_gguf, const std::string& out_gguf, const QuantizeOptions& options) {
    const QuantFileType* ft = find_quant_file_type(options.type);
    if (!ft) throw Error(fmt::format("unknown quantization type '{}' (known: {})", options.type, known_types()));
    {
        std::error_code ec;
        if (std::filesystem::equivalent(out_gguf, in_gguf, ec))
            throw Error(fmt::format("output {} is the input {}: choose another output name", out_gguf, in_gguf));
    }
    // Shared: the deferred tensors below read the mapping while the file is written.
    const auto in = std::make_shared<GgufFile>(GgufFile::open(in_gguf));
    if (in->get_uint("split.count").value_or(1) > 1)
        throw Error(fmt::format("{}: one part of a split GGUF (split.count {}): merge the parts first", in_gguf, *in->get_uint("split.count")));
    const QuantModelInfo info = model_info(*in);

    std::vector<QuantTensorDesc> descs;
    for (const GgufTensorInfo& t : in->tensors()) descs.push_back({t.name, t.ne, t.ggml_type});
    const std::vector<uint32_t> types = plan_quant_types(*ft, info, descs);
    for (size_t i = 0; i < descs.size(); ++i)
        if (types[i] != descs[i].ggml_type) check_reencodable(*in, in->tensors()[i], types[i], options.allow_requantize);

    GgufWriter w;
    if (in->alignment() != 32) w.set_alignment(uint32_t(in->alignment()));
    for (const std::string& key : in->keys()) {
        if (key == "general.alignment" || key == "general.file_type" || key == "general.quantization_version" || key.starts_with("split."))
            continue;
        w.add_raw(key, in->raw_value(key));
    }
    w.add_uint32("general.quantization_version", kQuantizationVersion);
    w.add_uint32("general.file_type", ft->ftype);

    uint64_t total = 0;
    for (const GgufTensorInfo& t : in->tensors()) total += t.bytes;
    auto progress = std::make_shared<std::unique_ptr<ProgressTask>>();
    std::vector<QuantizedTensor> written;
    for (size_t i = 0; i < descs.size(); ++i) {
        const GgufTensorInfo& t = in->tensors()[i];
        const uint32_t to = types[i];
        const uint64_t bytes = to == t.ggml_type ? t.bytes : rows_of(t.ne) * sdk::row_bytes(*hetero_dtype_from_ggml(to), t.ne[0]);
        const bool first = i == 0;
        auto fill = [in, &t, to, first, total, progress, threads = options.threads, in_gguf](uint8_t* out) {
            if (first) *progress = std::make_unique<ProgressTask>("quantizing " + in_gguf, total);
            if (to == t.ggml_type) {
                std::memcpy(out, t.data, size_t(t.bytes));
            } else {
                model_detail::reencode_rows(*hetero_dtype_from_ggml(t.ggml_type), t.data, *hetero_dtype_from_ggml(to), out,
                                            int64_t(rows_of(t.ne)), t.ne[0], threads);
            }
            if (*progress) (*progress)->advance(t.bytes);
        };
        w.add_tensor_deferred(t.name, to, t.ne, bytes, fill);
        written.push_back({t.name, to});
    }
    w.write(out_gguf);
    progress->reset();
    return written;
}

}  // namespace hetero
