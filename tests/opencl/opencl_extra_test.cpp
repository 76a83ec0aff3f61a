// Checks of the OpenCL provider beyond the conformance kit's shapes: attention
// (and ATTENTION_EXT's windows and soft-caps)
// over contexts longer than one local-memory chunk, GEMM over many tiles,
// large matvecs, and instance options. Compares against the SDK's scalar
// reference through the C ABI only.
//   opencl_extra_test path/to/libhetero-ep-opencl.so [--bench]
#include <hetero/ep_api.h>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/graph_parts.hpp>
#include <hetero/sdk/quant.hpp>
#include <reference_ops.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

const hetero_ep_api* api = nullptr;
int failures = 0;

void expect(bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    if (!ok) ++failures;
}

using hetero::sdk::make_desc;

// Random contents valid for the dtype (f32 values encoded to the dtype).
std::vector<uint8_t> random_tensor(const hetero_tensor_desc& t, std::mt19937& rng, float lo, float hi) {
    const int64_t n = hetero::sdk::element_count(t);
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> f(static_cast<size_t>(n));
    for (auto& v : f) v = u(rng);
    std::vector<uint8_t> bytes(hetero::sdk::tensor_bytes(t));
    hetero::sdk::row_from_f32(t.dtype, f.data(), bytes.data(), n);
    return bytes;
}

// One buffer per tensor holding data[i], and the bindings of all of them.
struct Uploaded {
    std::vector<hetero_buffer*> bufs;
    std::vector<hetero_binding> bind;
};
Uploaded upload_all(hetero_ep* ep, const std::vector<std::vector<uint8_t>>& data) {
    Uploaded u{std::vector<hetero_buffer*>(data.size()), std::vector<hetero_binding>(data.size())};
    for (size_t i = 0; i < data.size(); ++i) {
        api->buffer_alloc(ep, 0, data[i].size(), &u.bufs[i]);
        api->buffer_write(ep, u.bufs[i], 0, data[i].data(), data[i].size());
        u.bind[i] = hetero_binding{int32_t(i), 0, u.bufs[i], 0};
    }
    return u;
}

// Runs one node on the provider (all inputs bound, output bound) and on the
// reference; returns the largest error relative to the reference's largest value.
double run_and_compare(hetero_ep* ep, hetero_node node, std::vector<hetero_tensor_desc> tensors,
                       std::vector<std::vector<uint8_t>> data, double* seconds = nullptr, int repeats = 1) {
    for (auto& t : tensors) t.kind = HETERO_TENSOR_BOUND;
    const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, uint32_t(tensors.size()), 1, tensors.data(), &node};
    hetero_executable* exe = nullptr;
    if (api->compile(ep, 0, &g, nullptr, 0, &exe) != HETERO_OK) {
        std::printf("compile: %s\n", api->last_error());
        return 1e9;
    }
    auto [bufs, bind] = upload_all(ep, data);
    hetero_status st = api->execute(ep, exe, bind.data(), bind.size(), nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 1; r < repeats && st == HETERO_OK; ++r) st = api->execute(ep, exe, bind.data(), bind.size(), nullptr);
    if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / std::max(1, repeats - 1);
    if (st != HETERO_OK) std::printf("execute: %s\n", api->last_error());
    const size_t out = size_t(node.output);
    std::vector<uint8_t> got(data[out].size());
    api->buffer_read(ep, bufs[out], 0, got.data(), got.size());
    for (auto* b : bufs) api->buffer_release(ep, b);
    api->executable_release(ep, exe);
    if (st != HETERO_OK) return 1e9;

    std::vector<uint8_t*> ptrs(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) ptrs[i] = data[i].data();
    hetero::reference::run_node(node, tensors.data(), ptrs.data());
    const int64_t n = hetero::sdk::element_count(tensors[out]);
    std::vector<float> want(static_cast<size_t>(n)), have(static_cast<size_t>(n));
    hetero::sdk::row_to_f32(tensors[out].dtype, data[out].data(), want.data(), n);
    hetero::sdk::row_to_f32(tensors[out].dtype, got.data(), have.data(), n);
    double scale = 1e-6, err = 0;
    for (int64_t i = 0; i < n; ++i) scale = std::max(scale, double(std::fabs(want[size_t(i)])));
    for (int64_t i = 0; i < n; ++i) err = std::max(err, double(std::fabs(want[size_t(i)] - have[size_t(i)])));
    return err / scale;
}

struct AttentionShape {
    int64_t H = 8, Hkv = 2, Hd = 64;
    int32_t window = 0;  // > 0 (or cap > 0): ATTENTION_EXT
    float cap = 0.f;
};

hetero_node attention_node(float scale) {
    hetero_node node{};
    node.op = HETERO_OP_ATTENTION;
    node.n_inputs = 4;
    for (int i = 0; i < 4; ++i) node.inputs[i] = i;
    node.output = 4;
    node.fparams[0] = scale;
    return node;
}

// Tensors of an attention node (q, k cache, v cache, positions, output) and random contents.
void attention_tensors(std::mt19937& rng, uint32_t cache_dtype, int64_t C, const std::vector<int32_t>& pos, AttentionShape a,
                       std::vector<hetero_tensor_desc>& t, std::vector<std::vector<uint8_t>>& d) {
    const int64_t N = int64_t(pos.size());
    t = {make_desc(HETERO_DTYPE_F32, 1, {N, a.H, a.Hd}), make_desc(cache_dtype, 1, {C, a.Hkv, a.Hd}), make_desc(cache_dtype, 1, {C, a.Hkv, a.Hd}),
         make_desc(HETERO_DTYPE_I32, 1, {N}), make_desc(HETERO_DTYPE_F32, 1, {N, a.H, a.Hd})};
    d = {random_tensor(t[0], rng, -1, 1), random_tensor(t[1], rng, -1, 1), random_tensor(t[2], rng, -1, 1), {},
         random_tensor(t[4], rng, 0, 0)};
    d[3].resize(size_t(N) * 4);
    std::memcpy(d[3].data(), pos.data(), d[3].size());
}

void attention_case(hetero_ep* ep, std::mt19937& rng, uint32_t cache_dtype, int64_t C, std::vector<int32_t> pos,
                    AttentionShape a = {}, int repeats = 1) {
    std::vector<hetero_tensor_desc> t;
    std::vector<std::vector<uint8_t>> d;
    attention_tensors(rng, cache_dtype, C, pos, a, t, d);
    double secs = 0;
    hetero_node node = attention_node(1.f / std::sqrt(float(a.Hd)));
    if (a.window > 0 || a.cap > 0.f) {
        node.op = HETERO_OP_ATTENTION_EXT;
        node.iparams[0] = a.window;
        node.fparams[1] = a.cap;
    }
    const double e = run_and_compare(ep, node, t, d, &secs, repeats);
    std::string what = std::string(node.op == HETERO_OP_ATTENTION_EXT ? "attention_ext window " + std::to_string(a.window) + " cap " +
                                                                            std::to_string(a.cap) + " "
                                                                      : "") +
                       "attention " + std::string(hetero::sdk::dtype_name(cache_dtype)) + " cache C=" + std::to_string(C) +
                       " N=" + std::to_string(pos.size()) + " H=" + std::to_string(a.H) + " Hkv=" + std::to_string(a.Hkv) +
                       " Hd=" + std::to_string(a.Hd) + ", rel err " + std::to_string(e);
    if (repeats > 1) {
        // Work of the causal attention actually asked for: two FMAs per key and head dim.
        double keys = 0;
        for (int32_t p : pos) keys += double(p) + 1;
        char buf[96];
        std::snprintf(buf, sizeof buf, "; %.3f ms/run, %.2f GFLOP/s", secs * 1e3, 4.0 * keys * double(a.H * a.Hd) / secs / 1e9);
        what += buf;
    }
    // f16 caches may have q and p rounded to f16 too (the tensor-core kernel
    // does), as the conformance suite's bound allows.
    expect(e < (cache_dtype == HETERO_DTYPE_F16 ? 1e-3 : 1e-4), what);
}

// One out-of-range position among many rows: the execute reports it, that
// row comes out as zeros, and the other rows (sharing work-groups with it in
// tiled kernels) are still right.
void attention_bad_row_case(hetero_ep* ep, std::mt19937& rng) {
    const int64_t C = 64, N = 40, bad = 21;
    std::vector<int32_t> pos(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) pos[size_t(i)] = int32_t(C - N + i);
    pos[size_t(bad)] = int32_t(C + 5);
    const AttentionShape a{8, 1, 64};
    std::vector<hetero_tensor_desc> t;
    std::vector<std::vector<uint8_t>> d;
    attention_tensors(rng, HETERO_DTYPE_F16, C, pos, a, t, d);
    for (auto& x : t) x.kind = HETERO_TENSOR_BOUND;
    const hetero_node node = attention_node(0.125f);
    const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, uint32_t(t.size()), 1, t.data(), &node};
    hetero_executable* exe = nullptr;
    if (api->compile(ep, 0, &g, nullptr, 0, &exe) != HETERO_OK) {
        expect(false, std::string("attention bad row: compile: ") + api->last_error());
        return;
    }
    auto [bufs, bind] = upload_all(ep, d);
    const hetero_status st = api->execute(ep, exe, bind.data(), bind.size(), nullptr);
    std::vector<float> got(size_t(N * a.H * a.Hd));
    api->buffer_read(ep, bufs[4], 0, got.data(), got.size() * sizeof(float));
    for (auto* b : bufs) api->buffer_release(ep, b);
    api->executable_release(ep, exe);

    // The reference refuses the bad position; give it a valid one and skip that row.
    pos[size_t(bad)] = 0;
    std::memcpy(d[3].data(), pos.data(), d[3].size());
    std::vector<uint8_t*> ptrs;
    for (auto& x : d) ptrs.push_back(x.data());
    hetero::reference::run_node(node, t.data(), ptrs.data());
    const float* want = reinterpret_cast<const float*>(d[4].data());
    const size_t row = size_t(a.H * a.Hd);
    double err = 0, bad_max = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (i / row == size_t(bad)) bad_max = std::max(bad_max, double(std::fabs(got[i])));
        else err = std::max(err, double(std::fabs(got[i] - want[i])));
    }
    expect(st != HETERO_OK && bad_max == 0 && err < 1e-3,
           "attention with one bad position in 40 rows: status " + std::to_string(int(st)) + ", bad row max |y| " +
               std::to_string(bad_max) + ", other rows max error " + std::to_string(err));
}

// A MATMUL over tensors 0 .. n_inputs - 1 (x, w[, bias]) into tensor n_inputs.
hetero_node matmul_node(uint32_t n_inputs) {
    hetero_node node{};
    node.op = HETERO_OP_MATMUL;
    node.n_inputs = n_inputs;
    for (uint32_t i = 0; i < n_inputs; ++i) node.inputs[i] = int32_t(i);
    node.output = int32_t(n_inputs);
    return node;
}

void matmul_case(hetero_ep* ep, std::mt19937& rng, uint32_t wdtype, int64_t N, int64_t M, int64_t K, bool bias,
                 int repeats = 1) {
    std::vector<hetero_tensor_desc> t = {make_desc(HETERO_DTYPE_F32, 1, {N, K}), make_desc(wdtype, 1, {M, K})};
    if (bias) t.push_back(make_desc(HETERO_DTYPE_F32, 1, {M}));
    t.push_back(make_desc(HETERO_DTYPE_F32, 1, {N, M}));
    std::vector<std::vector<uint8_t>> d;
    for (size_t i = 0; i < t.size(); ++i) d.push_back(random_tensor(t[i], rng, -1, 1));
    const hetero_node node = matmul_node(uint32_t(t.size() - 1));
    double secs = 0;
    const double e = run_and_compare(ep, node, t, d, &secs, repeats);
    std::string what = "matmul " + std::string(hetero::sdk::dtype_name(wdtype)) + " N=" + std::to_string(N) + " M=" +
                       std::to_string(M) + " K=" + std::to_string(K) + ", rel err " + std::to_string(e);
    if (repeats > 1) {
        const double bytes = double(hetero::sdk::tensor_bytes(t[1]));
        char buf[160];
        std::snprintf(buf, sizeof buf, "; %.3f ms/run, %.2f GB/s of weights, %.2f GFLOP/s", secs * 1e3, bytes / secs / 1e9,
                      2.0 * double(N * M * K) / secs / 1e9);
        what += buf;
    }
    // Quantized weights may take the tensor-core GEMM, which rounds x and the
    // dequantized weights to f16 (2^-11 each); a wrong index errs by O(1).
    expect(e < (hetero::sdk::is_block_dtype(wdtype) && N > 1 ? 1e-3 : 1e-4), what);
}

void options_cases(hetero_ep_api const* a) {
    hetero_option bad{"no_such_option", "1"};
    hetero_ep* ep = nullptr;
    hetero_status st = a->create(&bad, 1, &ep);
    expect(st == HETERO_ERR_INVALID_ARGUMENT, std::string("unknown option refused: ") + a->last_error());
    hetero_option bad_type{"device_types", "fpga"};
    st = a->create(&bad_type, 1, &ep);
    expect(st == HETERO_ERR_INVALID_ARGUMENT, std::string("bad device_types refused: ") + a->last_error());
    hetero_option none{"platform", "no platform has this name"};
    if (a->create(&none, 1, &ep) == HETERO_OK) {
        expect(a->device_count(ep) == 0, "platform filter matching nothing gives 0 devices");
        expect(std::string(a->last_error()).find("no platform has this name") != std::string::npos,
               std::string("0 devices comes with the reason: ") + a->last_error());
        a->destroy(ep);
    } else {
        expect(false, "platform filter instance creation");
    }
}

// Throughput of a chain of `layers` square matmuls (each its own weights, so
// the chain streams more than a GPU's L2 when large); one node per layer.
void chain_bench(hetero_ep* ep, std::mt19937& rng, uint32_t wdtype, int64_t N, int64_t D, int layers, int repeats) {
    std::vector<hetero_tensor_desc> t;
    t.push_back(make_desc(HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, {N, D}));
    for (int i = 0; i < layers; ++i) t.push_back(make_desc(wdtype, HETERO_TENSOR_CONSTANT, {D, D}));
    for (int i = 0; i < layers; ++i)
        t.push_back(make_desc(HETERO_DTYPE_F32, i + 1 == layers ? HETERO_TENSOR_BOUND : HETERO_TENSOR_INTERNAL, {N, D}));
    std::vector<hetero_node> nodes(static_cast<size_t>(layers));
    for (int i = 0; i < layers; ++i) {
        nodes[size_t(i)].op = HETERO_OP_MATMUL;
        nodes[size_t(i)].n_inputs = 2;
        nodes[size_t(i)].inputs[0] = i == 0 ? 0 : layers + i;
        nodes[size_t(i)].inputs[1] = 1 + i;
        nodes[size_t(i)].output = layers + 1 + i;
    }
    std::vector<hetero_buffer*> bufs;
    std::vector<hetero_binding> consts;
    const float amp = 1.f / std::sqrt(float(D));
    for (int i = 0; i < layers; ++i) {
        auto w = random_tensor(t[size_t(1 + i)], rng, -amp, amp);
        hetero_buffer* b = nullptr;
        api->buffer_alloc(ep, 0, w.size(), &b);
        api->buffer_write(ep, b, 0, w.data(), w.size());
        bufs.push_back(b);
        consts.push_back(hetero_binding{1 + i, 0, b, 0});
    }
    const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, uint32_t(t.size()), uint32_t(nodes.size()), t.data(), nodes.data()};
    hetero_executable* exe = nullptr;
    if (api->compile(ep, 0, &g, consts.data(), consts.size(), &exe) != HETERO_OK) {
        expect(false, std::string("bench compile: ") + api->last_error());
        return;
    }
    auto x = random_tensor(t[0], rng, -1, 1);
    hetero_buffer *xb = nullptr, *yb = nullptr;
    api->buffer_alloc(ep, 0, x.size(), &xb);
    api->buffer_alloc(ep, 0, x.size(), &yb);
    api->buffer_write(ep, xb, 0, x.data(), x.size());
    const hetero_binding bind[2] = {{0, 0, xb, 0}, {int32_t(t.size() - 1), 0, yb, 0}};
    hetero_status st = api->execute(ep, exe, bind, 2, nullptr);  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats && st == HETERO_OK; ++r) st = api->execute(ep, exe, bind, 2, nullptr);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeats;
    const double bytes = double(hetero::sdk::tensor_bytes(t[1])) * layers;
    char buf[256];
    std::snprintf(buf, sizeof buf, "bench %s N=%lld D=%lld x%d layers: %.3f ms/run, %.1f GB/s of weights, %.1f GFLOP/s",
                  hetero::sdk::dtype_name(wdtype), (long long)N, (long long)D, layers, secs * 1e3, bytes / secs / 1e9,
                  2.0 * double(N) * double(D) * double(D) * layers / secs / 1e9);
    expect(st == HETERO_OK, buf);
    api->buffer_release(ep, xb);
    api->buffer_release(ep, yb);
    api->executable_release(ep, exe);
    for (auto* b : bufs) api->buffer_release(ep, b);
}

// Constant Q4_0/Q8_0 weights in device memory are kept in the provider's
// planar layout once compiled against. The ABI must not see it: reads and
// copies return the GGUF bytes, a binding over part of the weights is
// refused with a message, and new bytes written after the executables are
// gone are read as written.
void planar_layout_case(hetero_ep* ep, std::mt19937& rng, uint32_t wdtype) {
    const int64_t M = 96, K = 256;
    const std::string dt = hetero::sdk::dtype_name(wdtype);
    std::vector<hetero_tensor_desc> t = {make_desc(HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, {1, K}), make_desc(wdtype, HETERO_TENSOR_CONSTANT, {M, K}),
                                         make_desc(HETERO_DTYPE_F32, HETERO_TENSOR_BOUND, {1, M})};
    const hetero_node node = matmul_node(2);
    const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, 3, 1, t.data(), &node};
    auto w = random_tensor(t[1], rng, -1, 1);
    hetero_buffer* wb = nullptr;
    api->buffer_alloc(ep, 0, w.size(), &wb);
    api->buffer_write(ep, wb, 0, w.data(), w.size());
    const hetero_binding wbind{1, 0, wb, 0};
    // Runs the matvec over the weights in wb against the reference over `bytes`.
    auto check_matvec = [&](const std::vector<uint8_t>& bytes, const std::string& what) {
        hetero_executable* exe = nullptr;
        if (api->compile(ep, 0, &g, &wbind, 1, &exe) != HETERO_OK) return expect(false, what + ": compile: " + api->last_error());
        auto x = random_tensor(t[0], rng, -1, 1);
        std::vector<uint8_t> y(size_t(M) * 4), want(y.size());
        hetero_buffer *xb = nullptr, *yb = nullptr;
        api->buffer_alloc(ep, 0, x.size(), &xb);
        api->buffer_alloc(ep, 0, y.size(), &yb);
        api->buffer_write(ep, xb, 0, x.data(), x.size());
        const hetero_binding bind[2] = {{0, 0, xb, 0}, {2, 0, yb, 0}};
        const hetero_status st = api->execute(ep, exe, bind, 2, nullptr);
        api->buffer_read(ep, yb, 0, y.data(), y.size());
        uint8_t* ptrs[3] = {x.data(), const_cast<uint8_t*>(bytes.data()), want.data()};
        hetero::reference::run_node(node, t.data(), ptrs);
        double err = 0, scale = 1e-6;
        for (int64_t i = 0; i < M; ++i) {
            float a, b;
            std::memcpy(&a, want.data() + 4 * i, 4);
            std::memcpy(&b, y.data() + 4 * i, 4);
            scale = std::max(scale, double(std::fabs(a)));
            err = std::max(err, double(std::fabs(a - b)));
        }
        // Decode kernels quantize x to int8 per block (error ~2^-8); a wrong layout errs by O(1).
        expect(st == HETERO_OK && err / scale < 1e-2, what + ", rel err " + std::to_string(err / scale));
        api->buffer_release(ep, xb);
        api->buffer_release(ep, yb);
        api->executable_release(ep, exe);
    };
    hetero_executable* keep = nullptr;
    const bool compiled = api->compile(ep, 0, &g, &wbind, 1, &keep) == HETERO_OK;
    expect(compiled, dt + " constant weights compile");
    std::vector<uint8_t> back(w.size());
    api->buffer_read(ep, wb, 0, back.data(), back.size());
    expect(back == w, dt + " weights read back after compile are the bytes written");
    std::vector<uint8_t> part(300);
    api->buffer_read(ep, wb, 130, part.data(), part.size());
    expect(std::equal(part.begin(), part.end(), w.begin() + 130), dt + " part of the weights read back");
    hetero_buffer* copy = nullptr;
    api->buffer_alloc(ep, 0, w.size(), &copy);
    api->buffer_copy(ep, wb, 0, copy, 0, w.size());
    api->buffer_read(ep, copy, 0, back.data(), back.size());
    expect(back == w, dt + " weights copied after compile are the bytes written");
    api->buffer_release(ep, copy);
    // Half the rows as a tensor of their own, over the same bytes.
    std::vector<hetero_tensor_desc> half = t;
    half[1].shape[0] = M / 2;
    half[2].shape[1] = M / 2;
    const hetero_graph hg{sizeof(hetero_graph), HETERO_ABI_VERSION, 3, 1, half.data(), &node};
    hetero_executable* exe = nullptr;
    const hetero_status st = api->compile(ep, 0, &hg, &wbind, 1, &exe);
    const std::string msg = st == HETERO_OK ? "" : api->last_error();
    const char* planar_switch = std::getenv("HETERO_CL_PLANAR");  // "0": weights stay in the GGUF layout
    if (planar_switch && std::string(planar_switch) == "0")
        expect(st == HETERO_OK, dt + " binding over part of the weights (GGUF layout kept)");
    else
        expect(st != HETERO_OK && msg.find("planar") != std::string::npos, dt + " binding over part of rewritten weights refused: " + msg);
    if (exe) api->executable_release(ep, exe);
    check_matvec(w, dt + " matvec while another executable holds the weights");
    if (keep) api->executable_release(ep, keep);
    // New weights into the same buffer once nothing reads the old ones.
    auto w2 = random_tensor(t[1], rng, -1, 1);
    api->buffer_write(ep, wb, 0, w2.data(), w2.size());
    api->buffer_read(ep, wb, 0, back.data(), back.size());
    expect(back == w2, dt + " new weights read back as written");
    check_matvec(w2, dt + " matvec over new weights in the same buffer");
    api->buffer_release(ep, wb);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s libhetero-ep-opencl.so\n", argv[0]);
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    auto init = reinterpret_cast<hetero_ep_init_fn>(dlsym(lib, HETERO_EP_ENTRY_SYMBOL));
    const char* reason = nullptr;
    api = init ? init(nullptr, HETERO_ABI_VERSION, &reason) : nullptr;
    if (!api) {
        std::fprintf(stderr, "init failed: %s\n", reason ? reason : "no entry symbol");
        return 2;
    }
    options_cases(api);
    // Extra arguments key=value become instance options (e.g. gemm_tiling=16,8,8,8).
    std::vector<std::string> kv;
    for (int i = 2; i < argc; ++i)
        if (std::string(argv[i]).find('=') != std::string::npos) kv.push_back(argv[i]);
    std::vector<std::string> keys, values;
    for (const auto& a : kv) {
        keys.push_back(a.substr(0, a.find('=')));
        values.push_back(a.substr(a.find('=') + 1));
    }
    std::vector<hetero_option> opts;
    for (size_t i = 0; i < kv.size(); ++i) opts.push_back(hetero_option{keys[i].c_str(), values[i].c_str()});
    hetero_ep* ep = nullptr;
    if (api->create(opts.data(), opts.size(), &ep) != HETERO_OK || api->device_count(ep) == 0) {
        std::printf("no OpenCL device; device-dependent checks skipped\n");
        if (ep) api->destroy(ep);
        return failures ? 1 : 0;
    }
    std::mt19937 rng(7);
    attention_case(ep, rng, HETERO_DTYPE_F32, 1500, {0, 511, 512, 1024, 1499});
    attention_case(ep, rng, HETERO_DTYPE_F16, 1300, {1299, 700, 3});
    // Prefill rows over long contexts (many key tiles): the last 40 rows of
    // 1500, and 24 rows scattered over 1300 in random order.
    {
        std::vector<int32_t> tail(40), scattered(24);
        for (size_t i = 0; i < tail.size(); ++i) tail[i] = int32_t(1460 + i);
        for (auto& p : scattered) p = int32_t(rng() % 1300);
        attention_case(ep, rng, HETERO_DTYPE_F32, 1500, tail);
        attention_case(ep, rng, HETERO_DTYPE_F16, 1500, tail, AttentionShape{32, 4, 64});
        attention_case(ep, rng, HETERO_DTYPE_F16, 1300, scattered, AttentionShape{16, 2, 128});
        // Head dim 128 (Llama-7B's) over two tensor-core row blocks and more.
        attention_case(ep, rng, HETERO_DTYPE_F16, 1500, tail, AttentionShape{8, 1, 128});
    }
    // Sliding windows and soft-capped scores over long contexts: windows that
    // start inside a chunk or key tile, rows whose windows start apart.
    {
        std::vector<int32_t> tail(40), scattered(24);
        for (size_t i = 0; i < tail.size(); ++i) tail[i] = int32_t(1460 + i);
        for (auto& p : scattered) p = int32_t(rng() % 1300);
        attention_case(ep, rng, HETERO_DTYPE_F32, 1500, {0, 511, 512, 1024, 1499}, AttentionShape{8, 2, 64, 700, 5.f});
        attention_case(ep, rng, HETERO_DTYPE_F16, 1300, {1299, 700, 3}, AttentionShape{8, 2, 64, 4096, 0.f});
        attention_case(ep, rng, HETERO_DTYPE_F32, 1500, tail, AttentionShape{8, 2, 64, 300, 5.f});
        attention_case(ep, rng, HETERO_DTYPE_F16, 1500, tail, AttentionShape{32, 4, 64, 37, 5.f});
        attention_case(ep, rng, HETERO_DTYPE_F16, 1300, scattered, AttentionShape{16, 2, 128, 100, 0.f});
        attention_case(ep, rng, HETERO_DTYPE_F32, 1300, scattered, AttentionShape{8, 1, 64, 0, 3.f});
    }
    attention_bad_row_case(ep, rng);
    for (uint32_t dt : {HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q8_0}) planar_layout_case(ep, rng, dt);
    for (uint32_t dt : {HETERO_DTYPE_F32, HETERO_DTYPE_F16, HETERO_DTYPE_BF16, HETERO_DTYPE_Q8_0, HETERO_DTYPE_Q4_0}) {
        matmul_case(ep, rng, dt, 130, 200, 320, true);
        matmul_case(ep, rng, dt, 1, 3000, 2048, false);
    }
    // Throughput: small by default, GPU-sized with --bench.
    bool big = false;
    for (int i = 2; i < argc; ++i) big = big || std::string(argv[i]) == "--bench";
    for (uint32_t dt : {HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q8_0, HETERO_DTYPE_F16})
        chain_bench(ep, rng, dt, 1, big ? 4096 : 1024, big ? 16 : 2, big ? 50 : 3);
    if (big) {
        // Large rows: kernel bandwidth; tiny rows: per-node overhead.
        for (uint32_t dt : {HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q8_0}) chain_bench(ep, rng, dt, 1, 8192, 4, 50);
        chain_bench(ep, rng, HETERO_DTYPE_Q4_0, 1, 128, 64, 50);
    }
    for (uint32_t dt : {HETERO_DTYPE_F32, HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q8_0})
        chain_bench(ep, rng, dt, big ? 512 : 64, big ? 2048 : 256, big ? 8 : 2, big ? 10 : 2);
    // Prefill attention: a whole prompt of N rows over a cache of N (GQA 8, the
    // shape of Llama-style models with 32 heads), small by default.
    {
        const int64_t n = big ? 512 : 64;
        std::vector<int32_t> prompt(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) prompt[size_t(i)] = int32_t(i);
        for (uint32_t dt : {HETERO_DTYPE_F16, HETERO_DTYPE_F32})
            for (int64_t hd : {64, 128})
                attention_case(ep, rng, dt, n, prompt, AttentionShape{big ? 32 : 8, big ? 4 : 1, hd}, big ? 10 : 3);
    }
    api->destroy(ep);
    std::printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
