// The CPU provider's block-type matmul tiles, called directly on every kernel
// table this CPU runs, against the SDK's decoders in double precision.
//
// The activations lie on the int8 grid of their 32-element blocks (integers
// times a power of two, each block reaching +-127), so quantizing them is
// exact and an int8 tile may differ from the reference only by f32 rounding:
// a wrong level, scale, min or bit is far outside that. Plain main (no
// GoogleTest) so the aarch64 cross build runs it under qemu too.
//
// usage: hetero_cpu_kernels_test [ISA ...]   (default: every table of this build)
#include "cpu_info.hpp"
#include "kernels.hpp"

#include <hetero/sdk/quant.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

namespace {

using hetero::cpu::ActBlock;
using hetero::cpu::Kernels;
using hetero::cpu::MatmulArgs;
using hetero::cpu::MatmulTileFn;
namespace sdk = hetero::sdk;

struct Shape { int64_t n, m, k; };

// Activations on llama.cpp's Q8_K grid, as the provider quantizes a K-quant
// matmul's: one scale per 256 elements, shared by the eight ActBlocks.
void quantize_superblocks(const float* x, ActBlock* out, int64_t k) {
    for (int64_t sb = 0; sb < k / 256; ++sb) {
        float amax = 0.f;
        for (int i = 0; i < 256; ++i) amax = std::max(amax, std::fabs(x[sb * 256 + i]));
        const float d = amax / 127.f;
        for (int b = 0; b < 8; ++b) {
            ActBlock& o = out[sb * 8 + b];
            int32_t sum = 0;
            for (int i = 0; i < 32; ++i) {
                o.qs[i] = int8_t(d != 0.f ? std::lrint(x[sb * 256 + b * 32 + i] / d) : 0);
                sum += o.qs[i];
            }
            o.d = d;
            o.neg_sum = -sum;
        }
    }
}

// Runs one matmul in two tiles (rows [0, m/2) and [m/2, m), all activation
// rows) and returns the worst error over its allowance; > 1 fails.
// superblock: the activations lie on one int8 grid per 256 elements and are
// quantized as the provider does for K-quants (MatmulArgs::act_superblock_scale).
double check(const Kernels& kt, uint32_t dtype, const Shape& s, std::mt19937_64& rng, bool bias, bool superblock) {
    std::uniform_real_distribution<float> wdist(-0.5f, 0.5f);
    std::uniform_int_distribution<int> qdist(-127, 127);
    const uint64_t row = sdk::row_bytes(dtype, s.k);
    std::vector<uint8_t> w(row * uint64_t(s.m));
    std::vector<float> wf(size_t(s.m * s.k)), tmp(size_t(s.k));
    for (int64_t r = 0; r < s.m; ++r) {
        for (float& v : tmp) v = wdist(rng);
        sdk::row_from_f32(dtype, tmp.data(), w.data() + uint64_t(r) * row, s.k);
        sdk::row_to_f32(dtype, w.data() + uint64_t(r) * row, wf.data() + r * s.k, s.k);
    }
    std::vector<float> x(size_t(s.n * s.k)), b(size_t(s.m)), y(size_t(s.n * s.m), NAN);
    for (auto& v : b) v = wdist(rng);
    const int64_t grid = superblock ? 256 : 32;  // elements per activation scale
    for (int64_t blk = 0; blk < s.n * s.k / grid; ++blk) {
        const float step = std::ldexp(1.f, -int(rng() % 10));  // exact in every scale computation
        for (int64_t i = 0; i < grid; ++i) x[size_t(blk * grid + i)] = step * float(qdist(rng));
        x[size_t(blk * grid + int64_t(rng() % uint64_t(grid)))] = step * (rng() % 2 ? 127.f : -127.f);
    }
    MatmulArgs a{};
    a.w = w.data();
    a.w_row_bytes = row;
    a.x = x.data();
    a.bias = bias ? b.data() : nullptr;
    a.y = y.data();
    a.k = s.k;
    a.m = s.m;
    std::vector<ActBlock> xq;
    const bool int8 = kt.matmul[dtype].int8_act;
    if (int8) {
        xq.resize(size_t(s.n * s.k / 32));
        for (int64_t r = 0; r < s.n; ++r)
            (superblock ? &quantize_superblocks : kt.quantize_act)(x.data() + r * s.k, xq.data() + r * (s.k / 32), s.k);
        a.xq = xq.data();
        a.act_superblock_scale = superblock;
    }
    const MatmulTileFn fn = kt.matmul[dtype].tile;
    fn(a, 0, s.m / 2, 0, s.n);
    fn(a, s.m / 2, s.m, 0, s.n);
    // f32 rounding: one per block product and per addition of block sums
    // (int8 tiles), or per element (tiles that dot f32 values).
    const double eps = std::ldexp(1.0, -23), terms = int8 ? double(s.k / 32 + 16) : double(s.k + 16);
    double worst = 0.0;
    for (int64_t r = 0; r < s.n; ++r)
        for (int64_t c = 0; c < s.m; ++c) {
            double ref = bias ? double(b[size_t(c)]) : 0.0, mag = std::fabs(ref);
            for (int64_t e = 0; e < s.k; ++e) {
                const double p = double(x[size_t(r * s.k + e)]) * double(wf[size_t(c * s.k + e)]);
                ref += p;
                mag += std::fabs(p);
            }
            const double got = double(y[size_t(r * s.m + c)]);
            const double err = std::fabs(got - ref) / (eps * terms * mag + 1e-30);
            if (!(err <= worst)) worst = std::isnan(got) ? INFINITY : err;
        }
    return worst;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> isas;
    for (int i = 1; i < argc; ++i) isas.emplace_back(argv[i]);
    if (isas.empty()) {
#if defined(HETERO_CPU_X86)
        isas = {"scalar", "avx2", "avx512-novnni", "avx512", "avx512-amx"};
#elif defined(HETERO_CPU_AARCH64)
        isas = {"scalar", "neon"};
#else
        isas = {"scalar"};
#endif
    }
    const uint32_t dtypes[] = {HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q4_1, HETERO_DTYPE_Q5_0,
                               HETERO_DTYPE_Q5_1, HETERO_DTYPE_IQ4_NL, HETERO_DTYPE_Q2_K, HETERO_DTYPE_Q3_K,
                               HETERO_DTYPE_Q4_K, HETERO_DTYPE_Q5_K, HETERO_DTYPE_Q6_K, HETERO_DTYPE_E0M4};
    const Shape shapes[] = {{1, 1, 256}, {1, 9, 512}, {2, 5, 256}, {3, 8, 768}, {4, 4, 256},
                            {5, 7, 1024}, {17, 3, 256}, {65, 6, 512}, {1, 13, 2048}, {8, 17, 512}, {13, 9, 1280}};
    int failures = 0, runs = 0, skipped_isas = 0;
    for (const std::string& isa : isas) {
        const Kernels* kt = nullptr;
        try {
            kt = &hetero::cpu::select_kernels(isa);
        } catch (const std::exception& e) {
            std::printf("skip %s: %s\n", isa.c_str(), e.what());
            ++skipped_isas;
            continue;
        }
        std::mt19937_64 rng(0x5eed);
        for (uint32_t dt : dtypes)
            for (const bool superblock : {false, true}) {
                // The Q8_K grid is what the provider gives K-quant matmuls; the
                // per-32 grid is theirs with llama_act_grids off.
                if (superblock && sdk::block_elems(dt) != 256) continue;
                double worst = 0.0;
                for (size_t i = 0; i < std::size(shapes); ++i) {
                    Shape s = shapes[i];
                    if (sdk::block_elems(dt) == 32 && i % 2 == 1) s.k -= 32 * int64_t(i);  // widths that are not multiples of 256
                    const double e = check(*kt, dt, s, rng, i % 3 == 0, superblock);
                    ++runs;
                    if (!(e <= 1.0)) {
                        std::printf("FAIL %s %s%s n%lld m%lld k%lld: error %.3g of the f32 rounding allowance\n", kt->name,
                                    sdk::dtype_name(dt), superblock ? " (Q8_K grid)" : "", (long long)s.n, (long long)s.m,
                                    (long long)s.k, e);
                        ++failures;
                    }
                    if (e > worst) worst = e;
                }
                std::printf("%-4s %-12s %-7s%s worst error %.3f of the allowance\n", worst <= 1.0 ? "ok" : "FAIL", kt->name,
                            sdk::dtype_name(dt), superblock ? " Q8_K grid" : "", worst);
            }
    }
    std::printf("%d of %d matmuls outside the allowance%s\n", failures, runs,
                skipped_isas ? " (some tables not run: this CPU lacks them)" : "");
    return failures || runs == 0 ? 1 : 0;
}
