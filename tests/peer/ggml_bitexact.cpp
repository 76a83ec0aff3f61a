// Decodes blocks of every GGUF block type hetero reads with both ggml's
// to_float and hetero's SDK reference (sdk/quant.hpp) and requires the same
// f32 bits: random blocks (random quants and scale bytes, finite f16
// scales), blocks ggml's quantizer made from random rows, and blocks
// hetero's quantizer made from the same rows. Also prints each quantizer's
// RMS error, for information.
//
// Built and run by tests/peer/peer_test.sh against a llama.cpp peer's
// libggml-base.so and headers. usage: ggml_bitexact
#include <hetero/sdk/quant.hpp>

#include <ggml.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

struct Pair {
    ggml_type ggml;
    uint32_t hetero;
};

// Offsets of the f16 fields of each block (made finite in random blocks:
// NaN payloads would compare by chance, not by layout).
std::vector<size_t> f16_fields(uint32_t dt) {
    switch (dt) {
        case HETERO_DTYPE_Q8_0: case HETERO_DTYPE_Q4_0: case HETERO_DTYPE_Q5_0: case HETERO_DTYPE_IQ4_NL: return {0};
        case HETERO_DTYPE_Q4_1: case HETERO_DTYPE_Q5_1: case HETERO_DTYPE_Q4_K: case HETERO_DTYPE_Q5_K: return {0, 2};
        case HETERO_DTYPE_Q2_K: return {80, 82};
        case HETERO_DTYPE_Q3_K: return {108};
        case HETERO_DTYPE_Q6_K: return {208};
        default: return {};
    }
}

int compare(const char* what, const Pair& p, const std::vector<uint8_t>& blocks, int64_t n) {
    const ggml_type_traits* t = ggml_get_type_traits(p.ggml);
    std::vector<float> a(size_t(n), 1.f), b(size_t(n), 2.f);
    t->to_float(blocks.data(), a.data(), n);
    hetero::sdk::row_to_f32(p.hetero, blocks.data(), b.data(), n);
    for (int64_t i = 0; i < n; ++i)
        if (std::memcmp(&a[size_t(i)], &b[size_t(i)], sizeof(float)) != 0) {
            std::printf("FAIL %s %s: element %lld (block %lld): ggml %.9g, hetero %.9g\n", t->type_name, what, (long long)i,
                        (long long)(i / hetero::sdk::block_elems(p.hetero)), double(a[size_t(i)]), double(b[size_t(i)]));
            return 1;
        }
    return 0;
}

double rms_error(const std::vector<float>& x, const Pair& p, const std::vector<uint8_t>& blocks) {
    std::vector<float> y(x.size());
    hetero::sdk::row_to_f32(p.hetero, blocks.data(), y.data(), int64_t(x.size()));
    double e = 0.0;
    for (size_t i = 0; i < x.size(); ++i) e += (double(x[i]) - double(y[i])) * (double(x[i]) - double(y[i]));
    return std::sqrt(e / double(x.size()));
}

}  // namespace

int main() {
    const Pair pairs[] = {{GGML_TYPE_Q4_0, HETERO_DTYPE_Q4_0}, {GGML_TYPE_Q8_0, HETERO_DTYPE_Q8_0}, {GGML_TYPE_Q4_1, HETERO_DTYPE_Q4_1},
                          {GGML_TYPE_Q5_0, HETERO_DTYPE_Q5_0}, {GGML_TYPE_Q5_1, HETERO_DTYPE_Q5_1}, {GGML_TYPE_IQ4_NL, HETERO_DTYPE_IQ4_NL},
                          {GGML_TYPE_Q2_K, HETERO_DTYPE_Q2_K}, {GGML_TYPE_Q3_K, HETERO_DTYPE_Q3_K}, {GGML_TYPE_Q4_K, HETERO_DTYPE_Q4_K},
                          {GGML_TYPE_Q5_K, HETERO_DTYPE_Q5_K}, {GGML_TYPE_Q6_K, HETERO_DTYPE_Q6_K}};
    std::mt19937_64 rng(20261125);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::uniform_real_distribution<float> scale(-4.f, 4.f);
    int failures = 0;
    const int64_t n = 16 * 256;  // 16 super-blocks, 128 blocks of 32
    for (const Pair& p : pairs) {
        const ggml_type_traits* t = ggml_get_type_traits(p.ggml);
        const uint64_t bytes = hetero::sdk::row_bytes(p.hetero, n);
        if (t->blck_size != hetero::sdk::block_elems(p.hetero) || uint64_t(n / t->blck_size) * t->type_size != bytes) {
            std::printf("FAIL %s: ggml block %lld elements / %zu bytes, hetero %lld / %llu bytes per row of %lld\n", t->type_name,
                        (long long)t->blck_size, t->type_size, (long long)hetero::sdk::block_elems(p.hetero), (unsigned long long)bytes,
                        (long long)n);
            ++failures;
            continue;
        }
        int f = 0;
        // Random blocks, many rounds.
        std::vector<uint8_t> blocks(bytes);
        for (int round = 0; round < 64; ++round) {
            for (auto& b : blocks) b = uint8_t(rng());
            for (uint64_t off = 0; off < bytes; off += t->type_size)
                for (size_t at : f16_fields(p.hetero)) {
                    const uint16_t h = hetero::sdk::f32_to_f16(scale(rng) * std::exp2(float(int(rng() % 16)) - 12.f));
                    std::memcpy(blocks.data() + off + at, &h, 2);
                }
            f += compare("random blocks", p, blocks, n);
        }
        // Rows with outliers and an all-zero stretch, quantized by each side.
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = normal(rng);
        for (int64_t i = 0; i < n; i += 97) x[size_t(i)] *= 8.f;
        for (int64_t i = 512; i < 768; ++i) x[size_t(i)] = 0.f;
        std::vector<uint8_t> by_ggml(bytes), by_hetero(bytes);
        ggml_quantize_chunk(p.ggml, x.data(), by_ggml.data(), 0, 1, n, nullptr);
        hetero::sdk::row_from_f32(p.hetero, x.data(), by_hetero.data(), n);
        f += compare("ggml-quantized", p, by_ggml, n);
        f += compare("hetero-quantized", p, by_hetero, n);
        std::printf("%s %-7s rms error of the quantizers on N(0,1) rows: ggml %.4f, hetero %.4f\n", f ? "FAIL" : "ok  ", t->type_name,
                    rms_error(x, p, by_ggml), rms_error(x, p, by_hetero));
        failures += f;
    }
    ggml_quantize_free();
    if (failures) {
        std::printf("%d mismatching decodes\n", failures);
        return 1;
    }
    std::printf("every type decodes bit for bit as ggml does\n");
    return 0;
}
