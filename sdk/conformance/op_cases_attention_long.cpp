// Attention over long caches: decode (one to eight query rows) over up to
// 4,097 cache rows, where providers split the rows into chunks across
// threads and merge the chunks' partial softmaxes (flash-decoding), and
// prefill chunks at the end of a long cache, where they may convert f16
// rows to f32 a group of heads at a time. Cache lengths just past, at and
// short of chunk-like sizes; head sizes 64 to 256, odd ones included;
// multi-head, grouped-query and multi-query; head counts that are not a
// multiple of a vector; windows and soft caps (ATTENTION_EXT); positions
// short of the cache's end, whose later rows hold NaN; and sharp softmaxes
// (larger queries), where a wrongly weighted chunk shows.
#include "case_builder.hpp"
#include "case_lists.hpp"

#include <hetero/sdk/quant.hpp>

#include <cmath>
#include <string>

namespace hetero::conformance {
namespace {

constexpr uint32_t B = HETERO_TENSOR_BOUND;
constexpr uint32_t F32 = HETERO_DTYPE_F32, I32 = HETERO_DTYPE_I32;

std::string s(int64_t v) { return std::to_string(v); }

enum class Rows { End, Scattered, Repeated };

struct Long {
    int64_t n, c, h, kv, hd;
    Rows rows = Rows::End;  // End: the last n positions (before `short_by`)
    int64_t short_by = 0;   // End: the last position is c - 1 - short_by; later rows are NaN
    int64_t window = 0;     // > 0 or cap > 0: ATTENTION_EXT
    float cap = 0.f;
    bool sharp = false;     // queries in [-6, 6) instead of [-2, 2)
};

// Cache bytes stay under 16 MiB per case (f32 K and V).
const Long kDecode[] = {
    // one query row: MHA, GQA, MQA; 4,097 = 16 x 256 + 1
    {1, 4097, 4, 4, 128},
    {1, 4097, 32, 4, 128, Rows::End, 0, 0, 0.f, true},
    {1, 4096, 8, 8, 64},
    {1, 2049, 8, 2, 256},
    {1, 3000, 10, 5, 80, Rows::End, 0, 0, 0.f, true},
    {1, 1500, 12, 12, 96},
    {1, 600, 32, 32, 128},
    {1, 1025, 20, 20, 72},
    {1, 257, 40, 8, 64},
    {1, 65, 16, 1, 128},
    {1, 2, 4, 4, 64},
    {1, 4097, 8, 2, 128, Rows::End, 1096},
    {1, 1000, 6, 6, 256, Rows::End, 0, 0, 0.f, true},
    // a few query rows
    {2, 2048, 8, 8, 128},
    {5, 1500, 12, 4, 64, Rows::Scattered},
    {8, 4097, 4, 1, 128, Rows::End, 0, 0, 0.f, true},
    {8, 700, 6, 6, 96, Rows::Scattered},
    {3, 1001, 4, 2, 64, Rows::Repeated},
    {4, 2500, 16, 16, 32, Rows::End, 300},
    // windows and soft caps
    {1, 4097, 8, 2, 128, Rows::End, 0, 1000},
    {1, 4097, 8, 4, 128, Rows::End, 0, 4096, 30.f},
    {4, 2000, 16, 4, 64, Rows::End, 0, 300, 5.f, true},
    {1, 2000, 4, 4, 64, Rows::End, 0, 1},
    {6, 3333, 12, 3, 80, Rows::Scattered, 0, 1500, 0.f, true},
    // prefill chunks at the end of a long cache (f16: past one 16 MiB group of heads' f32 rows)
    {40, 4097, 18, 9, 64},
    {17, 2100, 8, 8, 128, Rows::End, 0, 1500},
    {20, 3000, 16, 4, 128, Rows::End, 500},
};

void attention_long_decode_cases(std::vector<Case>& out) {
    for (uint32_t dtype : {HETERO_DTYPE_F32, HETERO_DTYPE_F16})
        for (const Long& l : kDecode) {
            const bool ext = l.window > 0 || l.cap > 0.f;
            std::string name = std::string(ext ? "attention_ext/" : "attention/") + sdk::dtype_name(dtype) + "/n" + s(l.n) + "_h" +
                               s(l.h) + "_kv" + s(l.kv) + "_hd" + s(l.hd) + "_c" + s(l.c);
            if (ext) name += "_w" + s(l.window) + (l.cap > 0.f ? "_cap" + s(int64_t(l.cap)) : "");
            name += l.rows == Rows::Scattered ? "_long_scattered" : l.rows == Rows::Repeated ? "_long_repeated" : "_long_end";
            if (l.short_by > 0) name += "_short" + s(l.short_by);
            if (l.sharp) name += "_sharp";
            CaseBuilder b(name);
            Rng rng(b.get().seed);
            std::vector<int32_t> pos;
            switch (l.rows) {
                case Rows::End: pos = contiguous_positions(l.c - l.short_by - l.n, l.n); break;
                case Rows::Scattered: pos = distinct_positions(rng, l.n, l.c); break;
                case Rows::Repeated:
                    // Short and long rows, each twice.
                    for (int64_t i = 0; i < l.n; ++i) pos.push_back(int32_t(i % 2 ? rng.below(l.c / 8) : l.c - 1 - rng.below(8)));
                    break;
            }
            Fill cache = uniform(-2, 2);
            if (l.short_by > 0) cache.poison_from_row = l.c - l.short_by;
            const double qr = l.sharp ? 6 : 2;
            const int32_t q = b.tensor("q", F32, B, {l.n, l.h, l.hd}, uniform(-qr, qr));
            const int32_t k = b.tensor("k_cache", dtype, B, {l.c, l.kv, l.hd}, cache);
            Fill vfill = cache;
            vfill.lo = -1, vfill.hi = 1;
            const int32_t v = b.tensor("v_cache", dtype, B, {l.c, l.kv, l.hd}, vfill);
            const int32_t p = b.tensor("positions", I32, B, {l.n}, values(pos));
            hetero_node& node =
                b.node(ext ? HETERO_OP_ATTENTION_EXT : HETERO_OP_ATTENTION, {q, k, v, p}, b.output("out", F32, {l.n, l.h, l.hd}));
            node.fparams[0] = float(1.0 / std::sqrt(double(l.hd)));
            if (ext) {
                node.fparams[1] = l.cap;
                node.iparams[0] = l.window;
            }
            out.push_back(b.done());
        }
}

}  // namespace

void add_attention_long_cases(std::vector<Case>& out) { attention_long_decode_cases(out); }

}  // namespace hetero::conformance
