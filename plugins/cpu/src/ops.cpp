// Dispatch of one node plus the row-wise ops (everything except matmul and
// attention, which have their own files).
#include "ops.hpp"

#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace hetero::cpu {

void* Scratch::get(uint64_t bytes) {
    const uint64_t words = (bytes + 64 + 7) / 8;
    if (storage_.size() < words) storage_.assign(words, 0);
    const auto addr = reinterpret_cast<uintptr_t>(storage_.data());
    return reinterpret_cast<void*>((addr + 63) & ~uintptr_t(63));
}

namespace {

using sdk::fail;

float* f32(uint8_t* p) { return reinterpret_cast<float*>(p); }
const int32_t* i32(const uint8_t* p) { return reinterpret_cast<const int32_t*>(p); }

// Rows small enough to share a task: elementwise ops are memory-light, so a
// task should carry a few thousand elements to outweigh the dispatch.
int64_t min_rows_for(int64_t width) { return std::max<int64_t>(1, 4096 / std::max<int64_t>(1, width)); }

void embedding(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const auto& table = t.in(node, 0);
    const int64_t vocab = table.shape[0], dim = table.shape[1];
    const int64_t n = t.in(node, 1).shape[0];
    const int32_t* ids = i32(t.in_data(node, 1));
    for (int64_t i = 0; i < n; ++i)
        if (ids[i] < 0 || ids[i] >= vocab)
            fail(HETERO_ERR_INVALID_ARGUMENT, "embedding: id " + std::to_string(ids[i]) + " at row " + std::to_string(i) +
                                                  " outside the table of " + std::to_string(vocab) + " rows");
    const uint64_t stride = sdk::row_bytes(table.dtype, dim);
    const uint8_t* src = t.in_data(node, 0);
    float* out = f32(t.out_data(node));
    parallel_ranges(ctx.pool, n, min_rows_for(dim), [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
            const uint8_t* row = src + uint64_t(ids[i]) * stride;
            if (table.dtype == HETERO_DTYPE_F16) ctx.kernels.f16_to_f32_row(reinterpret_cast<const uint16_t*>(row), out + i * dim, dim);
            else sdk::row_to_f32(table.dtype, row, out + i * dim, dim);
        }
    });
}

void rmsnorm(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const auto& xd = t.in(node, 0);
    const int64_t d = sdk::inner_dim(xd), rows = sdk::outer_rows(xd);
    const float* x = f32(t.in_data(node, 0));
    const float* w = f32(t.in_data(node, 1));
    float* out = f32(t.out_data(node));
    const double eps = node.fparams[0];
    parallel_ranges(ctx.pool, rows, min_rows_for(d), [&](int64_t b, int64_t e, int) {
        for (int64_t r = b; r < e; ++r) {
            const float* xr = x + r * d;
            float* yr = out + r * d;
            // Four partial sums keep the loop vectorisable without reassociation flags.
            double ss[4] = {0, 0, 0, 0};
            int64_t j = 0;
            for (; j + 4 <= d; j += 4)
                for (int l = 0; l < 4; ++l) ss[l] += double(xr[j + l]) * double(xr[j + l]);
            for (; j < d; ++j) ss[0] += double(xr[j]) * double(xr[j]);
            const float inv = float(1.0 / std::sqrt((ss[0] + ss[1] + ss[2] + ss[3]) / double(d) + eps));
            for (j = 0; j < d; ++j) yr[j] = xr[j] * inv * w[j];
        }
    });
}

// ROPE, and ROPE_SCALED with its frequency scale and per-pair factors.
void rope(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const auto& xd = t.in(node, 0);
    const int64_t n = xd.shape[0], heads = xd.shape[1], hd = xd.shape[2];
    const int64_t rot = sdk::rope_dims(node, hd);
    const bool halves = node.iparams[0] == HETERO_ROPE_HALVES;
    const double base = node.fparams[0];
    const bool scaled = node.op == HETERO_OP_ROPE_SCALED;
    const double freq_scale = scaled && node.fparams[1] != 0.f ? double(node.fparams[1]) : 1.0;
    const float* factors = scaled && node.n_inputs > 2 ? f32(t.in_data(node, 2)) : nullptr;
    const float* x = f32(t.in_data(node, 0));
    const int32_t* pos = i32(t.in_data(node, 1));
    float* out = f32(t.out_data(node));
    // One cos/sin table per task, shared by every head of a row.
    auto* table = static_cast<float*>(ctx.scratch.get(uint64_t(ctx.pool.size()) * uint64_t(rot) * sizeof(float)));
    parallel_ranges(ctx.pool, n, std::max<int64_t>(1, 2048 / std::max<int64_t>(1, heads * hd)), [&](int64_t b, int64_t e, int thread) {
        float* cs = table + int64_t(thread) * rot;
        for (int64_t i = b; i < e; ++i) {
            for (int64_t p = 0; p < rot / 2; ++p) {
                // Angles in double: positions reach tens of thousands.
                double angle = double(pos[i]) * freq_scale * std::pow(base, -2.0 * double(p) / double(rot));
                if (factors) angle /= double(factors[p]);
                cs[2 * p] = float(std::cos(angle));
                cs[2 * p + 1] = float(std::sin(angle));
            }
            for (int64_t h = 0; h < heads; ++h) {
                const float* xr = x + (i * heads + h) * hd;
                float* yr = out + (i * heads + h) * hd;
                for (int64_t p = 0; p < rot / 2; ++p) {
                    const int64_t a = halves ? p : 2 * p, bb = halves ? p + rot / 2 : 2 * p + 1;
                    const float x0 = xr[a], x1 = xr[bb], c = cs[2 * p], s = cs[2 * p + 1];
                    yr[a] = x0 * c - x1 * s;
                    yr[bb] = x0 * s + x1 * c;
                }
                if (yr != xr) std::memcpy(yr + rot, xr + rot, size_t(hd - rot) * sizeof(float));
            }
        }
    });
}

void swiglu(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const int64_t width = sdk::inner_dim(t.out(node)), rows = sdk::outer_rows(t.out(node));
    const float* g = f32(t.in_data(node, 0));
    const float* u = f32(t.in_data(node, 1));
    float* out = f32(t.out_data(node));
    const auto row = ctx.kernels.swiglu_row;
    // Every row is cut into the same pieces however many rows there are: the
    // row function computes a piece's last (length % lanes) values another
    // way, and a row's values must not depend on the batch it is in.
    constexpr int64_t kPiece = 4096;
    const int64_t pieces = (width + kPiece - 1) / kPiece;
    parallel_ranges(ctx.pool, rows * pieces, std::max<int64_t>(1, kPiece / std::min(width, kPiece)), [&](int64_t b, int64_t e, int) {
        for (int64_t unit = b; unit < e; ++unit) {
            const int64_t first = (unit / pieces) * width + (unit % pieces) * kPiece;
            const int64_t len = std::min(kPiece, width - (unit % pieces) * kPiece);
            if (row) row(g + first, u + first, out + first, len);
            else
                for (int64_t i = first; i < first + len; ++i) out[i] = g[i] / (1.f + std::exp(-g[i])) * u[i];
        }
    });
}

// gelu(g) * u with GELU's tanh form.
void geglu(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const int64_t count = sdk::element_count(t.out(node));
    const float* g = f32(t.in_data(node, 0));
    const float* u = f32(t.in_data(node, 1));
    float* out = f32(t.out_data(node));
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    parallel_ranges(ctx.pool, count, 4096, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
            const float x = g[i];
            out[i] = 0.5f * x * (1.f + std::tanh(kSqrt2OverPi * x * (1.f + 0.044715f * x * x))) * u[i];
        }
    });
}

void softcap(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const int64_t count = sdk::element_count(t.out(node));
    const float c = node.fparams[0];
    const float* x = f32(t.in_data(node, 0));
    float* out = f32(t.out_data(node));
    parallel_ranges(ctx.pool, count, 4096, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) out[i] = c * std::tanh(x[i] / c);
    });
}

template <class Op>
void binary(const OpContext& ctx, const hetero_node& node, const NodeTensors& t, Op op) {
    const auto& ad = t.in(node, 0);
    const int64_t d = sdk::inner_dim(ad), rows = sdk::outer_rows(ad);
    const bool broadcast = sdk::element_count(t.in(node, 1)) != sdk::element_count(ad);
    const float* a = f32(t.in_data(node, 0));
    const float* bsrc = f32(t.in_data(node, 1));
    float* out = f32(t.out_data(node));
    parallel_ranges(ctx.pool, rows, min_rows_for(d), [&](int64_t b, int64_t e, int) {
        for (int64_t r = b; r < e; ++r) {
            const float* ar = a + r * d;
            const float* br = broadcast ? bsrc : bsrc + r * d;
            float* yr = out + r * d;
            for (int64_t j = 0; j < d; ++j) yr[j] = op(ar[j], br[j]);
        }
    });
}

void softmax(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const auto& xd = t.in(node, 0);
    const int64_t d = sdk::inner_dim(xd), rows = sdk::outer_rows(xd);
    const float scale = node.fparams[0] == 0.f ? 1.f : node.fparams[0];
    const float* x = f32(t.in_data(node, 0));
    float* out = f32(t.out_data(node));
    parallel_ranges(ctx.pool, rows, min_rows_for(d), [&](int64_t b, int64_t e, int) {
        for (int64_t r = b; r < e; ++r) {
            const float* xr = x + r * d;
            float* yr = out + r * d;
            float best = -INFINITY;
            for (int64_t j = 0; j < d; ++j) best = std::max(best, xr[j] * scale);
            double sum = 0.0;
            for (int64_t j = 0; j < d; ++j) sum += (yr[j] = std::exp(xr[j] * scale - best));
            const float inv = float(1.0 / sum);
            for (int64_t j = 0; j < d; ++j) yr[j] *= inv;
        }
    });
}

void convert(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const auto& xd = t.in(node, 0);
    const auto& od = t.out(node);
    const int64_t width = sdk::inner_dim(xd), rows = sdk::outer_rows(xd);
    const uint64_t in_stride = sdk::row_bytes(xd.dtype, width), out_stride = sdk::row_bytes(od.dtype, width);
    const uint8_t* src = t.in_data(node, 0);
    uint8_t* dst = t.out_data(node);
    parallel_ranges(ctx.pool, rows, min_rows_for(width), [&](int64_t b, int64_t e, int) {
        for (int64_t r = b; r < e; ++r) {
            const uint8_t* s = src + uint64_t(r) * in_stride;
            uint8_t* o = dst + uint64_t(r) * out_stride;
            if (xd.dtype == HETERO_DTYPE_F32 && od.dtype == HETERO_DTYPE_F16)
                ctx.kernels.f32_to_f16_row(reinterpret_cast<const float*>(s), reinterpret_cast<uint16_t*>(o), width);
            else if (xd.dtype == HETERO_DTYPE_F16 && od.dtype == HETERO_DTYPE_F32)
                ctx.kernels.f16_to_f32_row(reinterpret_cast<const uint16_t*>(s), reinterpret_cast<float*>(o), width);
            else if (xd.dtype == HETERO_DTYPE_F32)
                sdk::row_from_f32(od.dtype, reinterpret_cast<const float*>(s), o, width);  // GGUF's rounding
            else
                sdk::row_to_f32(xd.dtype, s, reinterpret_cast<float*>(o), width);
        }
    });
}

void store_rows(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    const auto& sd = t.in(node, 0);
    const auto& od = t.out(node);
    const int64_t n = sd.shape[0], width = sdk::row_width(sd), cache_rows = od.shape[0];
    const int32_t* pos = i32(t.in_data(node, 1));
    for (int64_t i = 0; i < n; ++i)
        if (pos[i] < 0 || pos[i] >= cache_rows)
            fail(HETERO_ERR_INVALID_ARGUMENT, "store_rows: position " + std::to_string(pos[i]) + " of row " + std::to_string(i) +
                                                  " outside the cache of " + std::to_string(cache_rows) + " rows");
    const float* src = f32(t.in_data(node, 0));
    uint8_t* dst = t.out_data(node);
    const uint64_t stride = sdk::row_bytes(od.dtype, width);
    parallel_ranges(ctx.pool, n, min_rows_for(width), [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
            uint8_t* row = dst + uint64_t(pos[i]) * stride;
            if (od.dtype == HETERO_DTYPE_F16) ctx.kernels.f32_to_f16_row(src + i * width, reinterpret_cast<uint16_t*>(row), width);
            else std::memcpy(row, src + i * width, size_t(width) * sizeof(float));
        }
    });
}

// Ops that read each input element only before writing the same output
// element can run in place on an exactly aliased input.
bool elementwise_in_place_ok(uint32_t op) {
    switch (op) {
        case HETERO_OP_RMSNORM: case HETERO_OP_ROPE: case HETERO_OP_SWIGLU: case HETERO_OP_ADD:
        case HETERO_OP_MUL: case HETERO_OP_SOFTMAX: case HETERO_OP_ROPE_SCALED: case HETERO_OP_GEGLU:
        case HETERO_OP_SOFTCAP: return true;
        default: return false;
    }
}

// True when the output overlaps an input in a way the op cannot handle.
bool needs_separate_output(const hetero_node& node, const NodeTensors& t) {
    const uint8_t* o = t.out_data(node);
    const uint64_t ob = sdk::tensor_bytes(t.out(node));
    for (uint32_t i = 0; i < node.n_inputs; ++i) {
        const uint8_t* p = t.in_data(node, i);
        const uint64_t pb = sdk::tensor_bytes(t.in(node, i));
        if (p + pb <= o || o + ob <= p) continue;
        if (p == o && pb == ob && elementwise_in_place_ok(node.op)) continue;
        return true;
    }
    return false;
}

void dispatch(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    switch (node.op) {
        case HETERO_OP_EMBEDDING: return embedding(ctx, node, t);
        case HETERO_OP_MATMUL: return run_matmul(ctx, node, t, f32(t.out_data(node)));
        case HETERO_OP_RMSNORM: return rmsnorm(ctx, node, t);
        case HETERO_OP_ROPE: return rope(ctx, node, t);
        case HETERO_OP_ATTENTION: return run_attention(ctx, node, t, f32(t.out_data(node)));
        case HETERO_OP_SWIGLU: return swiglu(ctx, node, t);
        case HETERO_OP_ADD: return binary(ctx, node, t, [](float a, float b) { return a + b; });
        case HETERO_OP_MUL: return binary(ctx, node, t, [](float a, float b) { return a * b; });
        case HETERO_OP_SOFTMAX: return softmax(ctx, node, t);
        case HETERO_OP_CONVERT: return convert(ctx, node, t);
        case HETERO_OP_STORE_ROWS: return store_rows(ctx, node, t);
        case HETERO_OP_ROPE_SCALED: return rope(ctx, node, t);
        case HETERO_OP_ATTENTION_EXT:
        case HETERO_OP_ATTENTION_SEQS: return run_attention(ctx, node, t, f32(t.out_data(node)));
        case HETERO_OP_GEGLU: return geglu(ctx, node, t);
        case HETERO_OP_SOFTCAP: return softcap(ctx, node, t);
        default: fail(HETERO_ERR_UNSUPPORTED, "cpu: unknown op " + std::to_string(node.op));
    }
}

}  // namespace

void run_node(const OpContext& ctx, const hetero_node& node, const NodeTensors& t) {
    if (!needs_separate_output(node, t)) return dispatch(ctx, node, t);
    // Rare: the output overlaps an input. Compute into a copy of the output
    // (store_rows keeps the rows it does not write), then copy it back.
    const uint64_t bytes = sdk::tensor_bytes(t.out(node));
    std::vector<uint64_t> tmp((bytes + 7) / 8);
    std::memcpy(tmp.data(), t.out_data(node), bytes);
    const int32_t max_id = std::max<int32_t>(node.output, *std::max_element(node.inputs, node.inputs + std::max<uint32_t>(1, node.n_inputs)));
    std::vector<uint8_t*> data(t.data, t.data + max_id + 1);
    data[size_t(node.output)] = reinterpret_cast<uint8_t*>(tmp.data());
    dispatch(ctx, node, NodeTensors{t.desc, data.data()});
    std::memcpy(t.out_data(node), tmp.data(), bytes);
}

}  // namespace hetero::cpu
