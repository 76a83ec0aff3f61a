// bench_op_estimates: how a provider's op_supported estimates compare with
// what its nodes take, over the C ABI alone. For each device it prints the
// device properties (with the ABI 1.1 hints), the round trip of one execute +
// wait of a trivial node (what launch_seconds_hint predicts), the first
// compile (what compile_seconds_hint predicts), then one row per single-node
// case: measured seconds (median execute + wait, less the trivial node's
// round trip), the provider's est_seconds, their ratio, and the GFLOP/s and
// GB/s reached by the roofline's count of the node's work (sdk/roofline.hpp).
// The efficiency factors of a provider's roofline come from these columns.
//
//   bench_op_estimates PLUGIN.so [--device N] [--option key=value ...]
//                      [--filter SUBSTRING] [--reps N] [--stream-mib N]
//
// Matmuls over one token cycle through copies of their weights, --stream-mib
// (default 512) in all, so the weights come from memory as in decoding.
#include "plugin_loader.hpp"

#include <hetero/sdk/device_kind.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/graph_parts.hpp>
#include <hetero/sdk/quant.hpp>
#include <hetero/sdk/roofline.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using hetero::bench::LoadedProvider;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct TensorSpec {
    uint32_t dtype;
    uint32_t kind;
    std::vector<int64_t> shape;
};

struct Case {
    std::string name;
    std::vector<TensorSpec> tensors;  // the last one is the node's output
    hetero_node node{};
    std::vector<hetero_node> more;    // further nodes after `node` (the dispatch chain only)
};

hetero_tensor_desc desc_of(const TensorSpec& s) { return hetero::sdk::make_desc(s.dtype, s.kind, s.shape); }

using hetero::sdk::make_node;

constexpr uint32_t F32 = HETERO_DTYPE_F32, F16 = HETERO_DTYPE_F16, I32 = HETERO_DTYPE_I32;
constexpr uint32_t BOUND = HETERO_TENSOR_BOUND, CONST = HETERO_TENSOR_CONSTANT;

// Shapes of TinyLlama-1.1B (dim 2048, ffn 5632, 32 heads of 64, 4 KV heads),
// the model size the BENCHMARKS figures use.
std::vector<Case> all_cases() {
    std::vector<Case> cs;
    const uint32_t weight_types[] = {HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q8_0, HETERO_DTYPE_F16, HETERO_DTYPE_F32};
    for (uint32_t wt : weight_types)
        for (int64_t n : {int64_t(1), int64_t(16), int64_t(128)}) {
            Case c;
            c.name = std::string("matmul/") + hetero::sdk::dtype_name(wt) + "/n" + std::to_string(n) + "_m2048_k2048";
            c.tensors = {{F32, BOUND, {n, 2048}}, {wt, CONST, {2048, 2048}}, {F32, BOUND, {n, 2048}}};
            c.node = make_node(HETERO_OP_MATMUL, {0, 1}, 2);
            cs.push_back(c);
        }
    // Prefill GEMMs at the sizes the BENCHMARKS runs use (N = 512, 2048), and
    // a Llama-7B FFN matrix (11008 x 4096) from decode to a 4,096-token prompt.
    for (uint32_t wt : {HETERO_DTYPE_Q4_0, HETERO_DTYPE_Q8_0})
        for (int64_t n : {int64_t(512), int64_t(2048)}) {
            Case c;
            c.name = std::string("matmul/") + hetero::sdk::dtype_name(wt) + "/n" + std::to_string(n) + "_m2048_k2048";
            c.tensors = {{F32, BOUND, {n, 2048}}, {wt, CONST, {2048, 2048}}, {F32, BOUND, {n, 2048}}};
            c.node = make_node(HETERO_OP_MATMUL, {0, 1}, 2);
            cs.push_back(c);
        }
    for (int64_t n : {int64_t(1), int64_t(128), int64_t(512), int64_t(4096)}) {
        Case c;
        c.name = "matmul/q4_0/n" + std::to_string(n) + "_m11008_k4096";
        c.tensors = {{F32, BOUND, {n, 4096}}, {HETERO_DTYPE_Q4_0, CONST, {11008, 4096}}, {F32, BOUND, {n, 11008}}};
        c.node = make_node(HETERO_OP_MATMUL, {0, 1}, 2);
        cs.push_back(c);
    }
    for (uint32_t cache : {F32, F16})
        for (auto [n, rows] : {std::pair<int64_t, int64_t>{1, 511}, {128, 255}}) {
            Case c;
            c.name = std::string("attention/") + hetero::sdk::dtype_name(cache) + "/n" + std::to_string(n) + "_cache" + std::to_string(rows);
            c.tensors = {{F32, BOUND, {n, 32, 64}}, {cache, BOUND, {rows, 4, 64}}, {cache, BOUND, {rows, 4, 64}}, {I32, BOUND, {n}},
                         {F32, BOUND, {n, 32, 64}}};
            c.node = make_node(HETERO_OP_ATTENTION, {0, 1, 2, 3}, 4);
            c.node.fparams[0] = 0.125f;
            cs.push_back(c);
        }
    for (int64_t n : {int64_t(1), int64_t(128)}) {
        const std::string sn = "/n" + std::to_string(n);
        Case c;
        c.name = "rmsnorm" + sn + "_d2048";
        c.tensors = {{F32, BOUND, {n, 2048}}, {F32, CONST, {2048}}, {F32, BOUND, {n, 2048}}};
        c.node = make_node(HETERO_OP_RMSNORM, {0, 1}, 2);
        c.node.fparams[0] = 1e-5f;
        cs.push_back(c);
        c = Case{};
        c.name = "swiglu" + sn + "_f5632";
        c.tensors = {{F32, BOUND, {n, 5632}}, {F32, BOUND, {n, 5632}}, {F32, BOUND, {n, 5632}}};
        c.node = make_node(HETERO_OP_SWIGLU, {0, 1}, 2);
        cs.push_back(c);
        c = Case{};
        c.name = "add" + sn + "_d2048";
        c.tensors = {{F32, BOUND, {n, 2048}}, {F32, BOUND, {n, 2048}}, {F32, BOUND, {n, 2048}}};
        c.node = make_node(HETERO_OP_ADD, {0, 1}, 2);
        cs.push_back(c);
        c = Case{};
        c.name = "rope" + sn + "_h32_hd64";
        c.tensors = {{F32, BOUND, {n, 32, 64}}, {I32, BOUND, {n}}, {F32, BOUND, {n, 32, 64}}};
        c.node = make_node(HETERO_OP_ROPE, {0, 1}, 2);
        c.node.fparams[0] = 10000.f;
        cs.push_back(c);
    }
    return cs;
}

// The trivial node whose round trip stands for the fixed cost of an execute.
Case trivial_case() {
    Case c;
    c.name = "add/n1_d32";
    c.tensors = {{F32, BOUND, {1, 32}}, {F32, BOUND, {1, 32}}, {F32, BOUND, {1, 32}}};
    c.node = make_node(HETERO_OP_ADD, {0, 1}, 2);
    return c;
}

// kChain trivial adds in one executable: their round trip less the trivial
// node's, over kChain - 1, is the fixed cost of one more node (a dispatch).
constexpr int kChain = 9;
Case chain_case() {
    Case c;
    c.name = "add/n1_d32 x" + std::to_string(kChain);
    c.tensors = {{F32, BOUND, {1, 32}}, {F32, BOUND, {1, 32}}};
    for (int i = 1; i < kChain; ++i) c.tensors.push_back({F32, HETERO_TENSOR_INTERNAL, {1, 32}});
    c.tensors.push_back({F32, BOUND, {1, 32}});
    c.node = make_node(HETERO_OP_ADD, {0, 1}, 2);
    for (int i = 1; i < kChain; ++i) c.more.push_back(make_node(HETERO_OP_ADD, {int32_t(i + 1), 1}, int32_t(i + 2)));
    return c;
}

class Rig {
public:
    Rig(LoadedProvider& p, uint32_t device, const Case& c, uint64_t stream_bytes) : p_(p), c_(c) {
        const auto& api = p.api();
        for (const auto& t : c.tensors) descs_.push_back(desc_of(t));
        for (size_t i = 0; i < descs_.size(); ++i) descs_[i].name = nullptr;
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> dist(-1.f, 1.f);
        auto fill = [&](size_t i) {
            const hetero_tensor_desc& d = descs_[i];
            std::vector<uint8_t> bytes(hetero::sdk::tensor_bytes(d));
            if (d.dtype == I32) {
                // Consecutive positions centred in the cache, so the queries
                // attend to (C + 1) / 2 rows on average, as the roofline assumes.
                const int64_t n = d.shape[0];
                const int64_t cache_rows = c.node.op == HETERO_OP_ATTENTION ? descs_[1].shape[0] : n;
                for (int64_t r = 0; r < n; ++r) {
                    const int32_t pos = int32_t((cache_rows - n) / 2 + r);
                    std::memcpy(bytes.data() + 4 * r, &pos, 4);
                }
            } else {
                const int64_t inner = hetero::sdk::inner_dim(d);
                const uint64_t row = hetero::sdk::row_bytes(d.dtype, inner);
                std::vector<float> tmp(static_cast<size_t>(inner));
                for (int64_t r = 0; r < hetero::sdk::outer_rows(d); ++r) {
                    for (auto& v : tmp) v = dist(rng);
                    hetero::sdk::row_from_f32(d.dtype, tmp.data(), bytes.data() + uint64_t(r) * row, inner);
                }
            }
            return bytes;
        };
        // Weights of one-token matmuls stream from memory: several copies.
        uint64_t const_bytes = 0;
        for (const auto& d : descs_)
            if (d.kind == CONST) const_bytes += hetero::sdk::tensor_bytes(d);
        const bool streaming = c.node.op == HETERO_OP_MATMUL && descs_[0].shape[0] == 1 && const_bytes > 0;
        const size_t copies = streaming ? size_t(std::max<uint64_t>(1, stream_bytes / const_bytes)) : 1;
        for (size_t i = 0; i < descs_.size(); ++i) {
            if (descs_[i].kind != BOUND) continue;
            hetero_buffer* b = nullptr;
            p.check(api.buffer_alloc(p.ep(), device, hetero::sdk::tensor_bytes(descs_[i]), &b), "buffer_alloc");
            buffers_.push_back(b);
            const auto bytes = fill(i);
            p.check(api.buffer_write(p.ep(), b, 0, bytes.data(), bytes.size()), "buffer_write");
            bound_.push_back({int32_t(i), 0, b, 0});
        }
        std::vector<hetero_node> nodes{c.node};
        nodes.insert(nodes.end(), c.more.begin(), c.more.end());
        const hetero_graph g{sizeof(hetero_graph), HETERO_ABI_VERSION, uint32_t(descs_.size()), uint32_t(nodes.size()), descs_.data(),
                             nodes.data()};
        std::vector<std::vector<uint8_t>> const_data;
        for (size_t i = 0; i < descs_.size(); ++i)
            if (descs_[i].kind == CONST) const_data.push_back(fill(i));
        for (size_t k = 0; k < copies; ++k) {
            std::vector<hetero_binding> constants;
            size_t j = 0;
            for (size_t i = 0; i < descs_.size(); ++i) {
                if (descs_[i].kind != CONST) continue;
                hetero_buffer* b = nullptr;
                p.check(api.buffer_alloc(p.ep(), device, const_data[j].size(), &b), "buffer_alloc");
                buffers_.push_back(b);
                p.check(api.buffer_write(p.ep(), b, 0, const_data[j].data(), const_data[j].size()), "buffer_write");
                constants.push_back({int32_t(i), 0, b, 0});
                ++j;
            }
            const auto t0 = Clock::now();
            hetero_executable* exe = nullptr;
            p.check(api.compile(p.ep(), device, &g, constants.data(), constants.size(), &exe), "compile");
            if (k == 0) first_compile_seconds_ = seconds_since(t0);
            exes_.push_back(exe);
        }
    }
    ~Rig() {
        for (auto* e : exes_) p_.api().executable_release(p_.ep(), e);
        for (auto* b : buffers_) p_.api().buffer_release(p_.ep(), b);
    }
    Rig(const Rig&) = delete;
    Rig& operator=(const Rig&) = delete;

    // One execute + wait, as the core's scheduler does it; seconds.
    double run_once() {
        const auto& api = p_.api();
        const auto t0 = Clock::now();
        hetero_event* ev = nullptr;
        p_.check(api.execute(p_.ep(), exes_[next_], bound_.data(), bound_.size(), &ev), "execute");
        const hetero_status st = api.event_wait(p_.ep(), ev);
        api.event_release(p_.ep(), ev);
        p_.check(st, "event_wait");
        next_ = (next_ + 1) % exes_.size();
        return seconds_since(t0);
    }
    // Median of `reps` round trips after two warm-ups (at most ~2 s of runs).
    double median(int reps) {
        run_once();
        const double first = run_once();
        const int n = std::max(3, std::min(reps, int(2.0 / std::max(first, 1e-6))));
        std::vector<double> t(size_t(n), 0.0);
        for (auto& v : t) v = run_once();
        std::nth_element(t.begin(), t.begin() + n / 2, t.end());
        return t[size_t(n / 2)];
    }
    double first_compile_seconds() const { return first_compile_seconds_; }
    const std::vector<hetero_tensor_desc>& descs() const { return descs_; }

private:
    LoadedProvider& p_;
    const Case& c_;
    std::vector<hetero_tensor_desc> descs_;
    std::vector<hetero_buffer*> buffers_;
    std::vector<hetero_binding> bound_;
    std::vector<hetero_executable*> exes_;
    size_t next_ = 0;
    double first_compile_seconds_ = 0;
};

void print_props(const hetero_device_props& p) {
    std::printf("  kind %s, flags 0x%x, name '%s'\n  driver '%s'\n", hetero::sdk::device_kind_name(p.kind), p.flags, p.name, p.driver);
    std::printf("  memory %.2f GiB, peak %.1f GFLOP/s, bandwidth %.1f GB/s, compute units %u, subgroup %u\n",
                double(p.memory_bytes) / double(1ull << 30), p.peak_gflops, p.peak_bandwidth_gbs, p.compute_units, p.subgroup_size);
    if (HETERO_HAS_FIELD(hetero_device_props, &p, compile_seconds_hint))
        std::printf("  resource '%s', launch_seconds_hint %.3g, compile_seconds_hint %.3g\n", p.resource, p.launch_seconds_hint,
                    p.compile_seconds_hint);
    else
        std::printf("  (struct_size %u: an ABI 1.0 provider, no 1.1 fields)\n", p.struct_size);
}

int usage(const char* why) {
    std::fprintf(stderr, "bench_op_estimates: %s\nusage: bench_op_estimates PLUGIN.so [--device N] [--option key=value ...] "
                         "[--filter SUBSTRING] [--reps N] [--stream-mib N]\n", why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string plugin, filter;
    long only_device = -1;
    int reps = 50;
    uint64_t stream_mib = 512;
    std::vector<std::pair<std::string, std::string>> options;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--device" && has_value) only_device = std::strtol(argv[++i], nullptr, 10);
        else if (a == "--filter" && has_value) filter = argv[++i];
        else if (a == "--reps" && has_value) reps = std::max(3, int(std::strtol(argv[++i], nullptr, 10)));
        else if (a == "--stream-mib" && has_value) stream_mib = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--option" && has_value) {
            const std::string kv = argv[++i];
            const size_t eq = kv.find('=');
            if (eq == std::string::npos) return usage("--option needs key=value");
            options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        } else if (!a.empty() && a[0] != '-' && plugin.empty()) plugin = a;
        else return usage(("unexpected argument " + a).c_str());
    }
    if (plugin.empty()) return usage("no plugin given");
    try {
        LoadedProvider p(plugin, options);
        const auto& api = p.api();
        const uint32_t n_devices = api.device_count(p.ep());
        if (n_devices == 0) throw std::runtime_error(std::string("no device: ") + api.last_error());
        for (uint32_t d = 0; d < n_devices; ++d) {
            if (only_device >= 0 && d != uint32_t(only_device)) continue;
            hetero_device_props props{};
            props.struct_size = sizeof props;
            props.abi_version = HETERO_ABI_VERSION;
            p.check(api.device_props(p.ep(), d, &props), "device_props");
            std::printf("provider %s %s, device %u\n", api.name, api.version, d);
            print_props(props);
            const Case trivial = trivial_case();
            double launch = 0;
            {
                Rig rig(p, d, trivial, 0);
                std::printf("  first compile (program build / pipelines of that node): %.3f s\n", rig.first_compile_seconds());
                launch = rig.median(std::max(reps, 200));
                std::printf("  execute + wait of %s: %.1f us (median)\n", trivial.name.c_str(), launch * 1e6);
            }
            {
                const Case chain = chain_case();
                Rig rig(p, d, chain, 0);
                const double t = rig.median(std::max(reps, 200));
                std::printf("  execute + wait of %s: %.1f us (median): %.1f us per further node\n", chain.name.c_str(), t * 1e6,
                            (t - launch) / (kChain - 1) * 1e6);
            }
            std::printf("  %-30s %12s %12s %8s %10s %10s %9s\n", "case", "measured us", "est us", "meas/est", "GFLOP/s", "GB/s", "compile s");
            for (const Case& c : all_cases()) {
                if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
                std::vector<hetero_tensor_desc> descs;
                for (const auto& t : c.tensors) descs.push_back(desc_of(t));
                double est = -1;
                if (api.op_supported(p.ep(), d, &c.node, descs.data(), uint32_t(descs.size()), &est) != HETERO_OK) {
                    std::printf("  %-30s unsupported: %s\n", c.name.c_str(), api.last_error());
                    continue;
                }
                Rig rig(p, d, c, stream_mib << 20);
                const double node = std::max(rig.median(reps) - launch, 1e-9);
                const hetero::sdk::NodeWork w = hetero::sdk::node_work(c.node, rig.descs().data());
                std::printf("  %-30s %12.1f %12.1f %8.2f %10.2f %10.2f %9.3f\n", c.name.c_str(), node * 1e6, est * 1e6,
                            est > 0 ? node / est : 0.0, w.flops / node / 1e9, w.bytes / node / 1e9, rig.first_compile_seconds());
                std::fflush(stdout);
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_op_estimates: %s\n", e.what());
        return 1;
    }
    return 0;
}
