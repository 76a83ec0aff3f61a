#include <hetero/model/ggml_types.hpp>
#include <hetero/model/quant_mix.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <numeric>

namespace hetero {

namespace {

// llama_ftype values (llama.h).
enum FileType : uint32_t {
    kAllF32 = 0,
    kF16 = 1,
    kQ4_0 = 2,
    kQ4_1 = 3,
    kQ8_0 = 7,
    kQ5_0 = 8,
    kQ5_1 = 9,
    kQ2_K = 10,
    kQ3_K_S = 11,
    kQ3_K_M = 12,
    kQ3_K_L = 13,
    kQ4_K_S = 14,
    kQ4_K_M = 15,
    kQ5_K_S = 16,
    kQ5_K_M = 17,
    kQ6_K = 18,
    kIQ4_NL = 25,
    kBF16 = 32,
    kE0M4 = 1000,  // hetero's own: every matrix E0M4 but the classifier, as Q4_0 mixes
};

bool is_block_type(uint32_t ggml_type) {
    const auto t = ggml_type_traits(ggml_type);
    return t && t->block_elems > 1;
}

uint32_t block_elems(uint32_t ggml_type) {
    const auto t = ggml_type_traits(ggml_type);
    return t ? t->block_elems : 1;
}

int n_dims(const std::vector<int64_t>& ne) {
    int n = 1;
    for (size_t i = 1; i < ne.size(); ++i)
        if (ne[i] > 1) n = int(i) + 1;
    return n;
}

bool ends_with(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// llama-quantize's broad tensor categories (tensor_get_category).
enum class Category { Output, TokenEmbd, AttnQkv, AttnKvB, AttnV, AttnK, AttnQ, AttnOutput, FfnUp, FfnGate, FfnDown, Other };

Category category_of(const std::string& name) {
    if (name == "output.weight") return Category::Output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Category::TokenEmbd;
    if (contains(name, "attn_qkv.weight")) return Category::AttnQkv;
    if (contains(name, "attn_kv_b.weight")) return Category::AttnKvB;
    if (contains(name, "attn_v.weight")) return Category::AttnV;
    if (contains(name, "attn_k.weight")) return Category::AttnK;
    if (contains(name, "attn_q.weight")) return Category::AttnQ;
    if (contains(name, "attn_output.weight")) return Category::AttnOutput;
    if (contains(name, "ffn_up")) return Category::FfnUp;
    if (contains(name, "ffn_gate")) return Category::FfnGate;
    if (contains(name, "ffn_down")) return Category::FfnDown;
    return Category::Other;
}

// attn_v and the tensors that hold it: quantization hurts them most.
bool is_attn_v_like(Category c) { return c == Category::AttnV || c == Category::AttnQkv || c == Category::AttnKvB; }

// The layers that get more bits in the _M mixes: the first and last eighth,
// and every third layer between.
bool use_more_bits(int i_layer, int n_layer) {
    return i_layer < n_layer / 8 || i_layer >= 7 * n_layer / 8 || (i_layer - n_layer / 8) % 3 == 2;
}

// "blk.N." -> N, else -1 (llama.cpp's tensor order sorts by it first).
int layer_of(const std::string& name) {
    int layer = -1;
    if (std::sscanf(name.c_str(), "blk.%d.", &layer) != 1) return -1;
    return layer;
}

// The counters llama-quantize keeps while it walks the tensors.
struct MixState {
    int n_attention_wv = 0, i_attention_wv = 0;
    int n_ffn_down = 0, i_ffn_down = 0;
    bool tied_embeddings = true;  // until output.weight is seen
    bool is_70b = false;          // llama.cpp's LLM_TYPE_70B, which widens attn_v
    int64_t n_gqa = 1;
};

// llama_tensor_get_type_impl for the file types of quant_file_types(), with
// no importance matrix and no experts.
uint32_t mixed_type(const QuantFileType& ft, MixState& s, const QuantTensorDesc& t, Category cat) {
    uint32_t type = ft.base_type;
    const uint32_t f = ft.ftype;
    if (cat == Category::Output || (s.tied_embeddings && cat == Category::TokenEmbd)) {
        // The classifier (or the embedding it is tied to) in 6 bits.
        if (t.ne[0] % int64_t(block_elems(type)) != 0) return GGML_TYPE_ID_Q8_0;
        return type == GGML_TYPE_ID_Q8_0 ? type : uint32_t(GGML_TYPE_ID_Q6_K);
    }
    if (cat == Category::TokenEmbd) return type;
    if (is_attn_v_like(cat)) {
        const int i = s.i_attention_wv++;
        if (f == kQ2_K) type = s.n_gqa >= 4 ? GGML_TYPE_ID_Q4_K : GGML_TYPE_ID_Q3_K;
        else if (f == kQ3_K_M) type = i < 2 ? GGML_TYPE_ID_Q5_K : GGML_TYPE_ID_Q4_K;
        else if (f == kQ3_K_L) type = GGML_TYPE_ID_Q5_K;
        else if (f == kIQ4_NL && s.n_gqa >= 4) type = GGML_TYPE_ID_Q5_K;
        else if ((f == kQ4_K_M || f == kQ5_K_M) && use_more_bits(i, s.n_attention_wv)) type = GGML_TYPE_ID_Q6_K;
        else if (f == kQ4_K_S && i < 4) type = GGML_TYPE_ID_Q5_K;
        if (s.is_70b && (type == GGML_TYPE_ID_Q3_K || type == GGML_TYPE_ID_Q4_K)) type = GGML_TYPE_ID_Q5_K;
        return type;
    }
    if (cat == Category::FfnDown) {
        const int i = s.i_ffn_down++, n = s.n_ffn_down;
        if (f == kQ2_K) type = GGML_TYPE_ID_Q3_K;
        else if (f == kQ3_K_M) type = i < n / 16 ? GGML_TYPE_ID_Q5_K : GGML_TYPE_ID_Q4_K;
        else if (f == kQ3_K_L) type = GGML_TYPE_ID_Q5_K;
        else if (f == kQ4_K_M) type = use_more_bits(i, n) ? uint32_t(GGML_TYPE_ID_Q6_K) : type;
        else if (i < n / 8 && f == kIQ4_NL) type = GGML_TYPE_ID_Q5_K;
        else if (f == kQ5_K_M && use_more_bits(i, n)) type = GGML_TYPE_ID_Q6_K;
        else if (f == kQ4_K_S && i < n / 8) type = GGML_TYPE_ID_Q5_K;
        return type;
    }
    if (cat == Category::AttnOutput) {
        if (f == kQ2_K) type = GGML_TYPE_ID_Q3_K;
        else if (f == kQ3_K_M) type = GGML_TYPE_ID_Q4_K;
        else if (f == kQ3_K_L) type = GGML_TYPE_ID_Q5_K;
    }
    return type;
}

// A type whose blocks the rows cannot hold falls back to one with smaller
// blocks, and to F16 when even those do not fit (tensor_type_fallback).
uint32_t fallback_type(uint32_t type, int64_t cols) {
    if (cols % int64_t(block_elems(type)) == 0) return type;
    uint32_t out = type;
    switch (type) {
        case GGML_TYPE_ID_Q2_K:
        case GGML_TYPE_ID_Q3_K: out = GGML_TYPE_ID_Q4_0; break;
        case GGML_TYPE_ID_Q4_K: out = GGML_TYPE_ID_Q5_0; break;
        case GGML_TYPE_ID_Q5_K: out = GGML_TYPE_ID_Q5_1; break;
        case GGML_TYPE_ID_Q6_K: out = GGML_TYPE_ID_Q8_0; break;
        default: break;  // a 32-value block type has nothing smaller
    }
    return cols % int64_t(block_elems(out)) == 0 ? out : uint32_t(GGML_TYPE_ID_F16);
}

}  // namespace

const std::vector<QuantFileType>& quant_file_types() {
    static const std::vector<QuantFileType> types = {
        {"Q4_0", kQ4_0, GGML_TYPE_ID_Q4_0},       {"Q4_1", kQ4_1, GGML_TYPE_ID_Q4_1},
        {"Q5_0", kQ5_0, GGML_TYPE_ID_Q5_0},       {"Q5_1", kQ5_1, GGML_TYPE_ID_Q5_1},
        {"IQ4_NL", kIQ4_NL, GGML_TYPE_ID_IQ4_NL}, {"Q2_K", kQ2_K, GGML_TYPE_ID_Q2_K},
        {"Q3_K", kQ3_K_M, GGML_TYPE_ID_Q3_K},     {"Q3_K_S", kQ3_K_S, GGML_TYPE_ID_Q3_K},
        {"Q3_K_M", kQ3_K_M, GGML_TYPE_ID_Q3_K},   {"Q3_K_L", kQ3_K_L, GGML_TYPE_ID_Q3_K},
        {"Q4_K", kQ4_K_M, GGML_TYPE_ID_Q4_K},     {"Q4_K_S", kQ4_K_S, GGML_TYPE_ID_Q4_K},
        {"Q4_K_M", kQ4_K_M, GGML_TYPE_ID_Q4_K},   {"Q5_K", kQ5_K_M, GGML_TYPE_ID_Q5_K},
        {"Q5_K_S", kQ5_K_S, GGML_TYPE_ID_Q5_K},   {"Q5_K_M", kQ5_K_M, GGML_TYPE_ID_Q5_K},
        {"Q6_K", kQ6_K, GGML_TYPE_ID_Q6_K},       {"Q8_0", kQ8_0, GGML_TYPE_ID_Q8_0},
        {"F16", kF16, GGML_TYPE_ID_F16},          {"BF16", kBF16, GGML_TYPE_ID_BF16},
        {"F32", kAllF32, GGML_TYPE_ID_F32},       {"E0M4", kE0M4, GGML_TYPE_ID_E0M4},
    };
    return types;
}

const QuantFileType* find_quant_file_type(std::string_view name) {
    for (const QuantFileType& t : quant_file_types()) {
        const std::string_view n = t.name;
        if (n.size() == name.size() &&
            std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
            return &t;
    }
    return nullptr;
}

bool quant_may_change(const QuantTensorDesc& t) {
    const std::string& n = t.name;
    if (n_dims(t.ne) < 2 || !ends_with(n, "weight")) return false;
    for (std::string_view keep : {"_norm.weight", "ffn_gate_inp.weight", "altup", "laurel", "per_layer_model_proj", "ssm_conv1d",
                                  "attn_rel_b.weight", "position_embd", "token_types.weight"})
        if (contains(n, keep)) return false;
    return true;
}

std::vector<uint32_t> plan_quant_types(const QuantFileType& ft, const QuantModelInfo& model, const std::vector<QuantTensorDesc>& tensors) {
    MixState s;
    s.n_ffn_down = int(model.n_layer);
    s.n_gqa = model.n_head_kv > 0 ? model.n_head / model.n_head_kv : 1;
    // llama.cpp's LLM_TYPE_70B among the architectures hetero runs.
    s.is_70b = model.n_layer == 80 && ((model.arch == "llama" && model.n_head != model.n_head_kv) || model.arch == "qwen2");
    for (const QuantTensorDesc& t : tensors) {
        const Category c = category_of(t.name);
        if (is_attn_v_like(c)) ++s.n_attention_wv;
        if (c == Category::Output) s.tied_embeddings = false;
    }
    // The counters advance in llama.cpp's tensor order: by layer, then name.
    std::vector<size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const int la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
        return la != lb ? la < lb : tensors[a].name < tensors[b].name;
    });
    std::vector<uint32_t> out(tensors.size());
    for (size_t i : order) {
        const QuantTensorDesc& t = tensors[i];
        if (!quant_may_change(t)) {
            out[i] = t.ggml_type;
        } else if (!is_block_type(ft.base_type)) {
            out[i] = ft.base_type;  // F32, F16, BF16: every matrix, no mix
        } else {
            out[i] = fallback_type(mixed_type(ft, s, t, category_of(t.name)), t.ne[0]);
        }
    }
    return out;
}

}  // namespace hetero
