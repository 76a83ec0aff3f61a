// Real-execution profiling: every op family of a model's graph, run alone as a
// one-node graph on one device at a grid of token counts, timed as
// execute + event_wait round trips minus the launch cost of an empty-ish
// executable. Weights are the model's own bytes (uploaded once per device and
// shared by the families); activations, positions, tokens and KV caches are
// bound buffers filled with plausible data. Nodes that read weights or a KV
// cache are timed with the device's caches evicted first, as they are in a
// forward pass.
#include "profile_files.hpp"
#include "profiler_work.hpp"
#include "session_fit.hpp"

#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/profile/profile.hpp>
#include <hetero/runtime/model_graph.hpp>
#include <hetero/runtime/session.hpp>
#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/quant.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <random>
#include <set>

namespace hetero {

namespace profiler_detail {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace profiler_detail

namespace {

using namespace profiler_detail;


// The grids. Powers of two along n (the solver's chunk sizes are mostly
// powers of two), cache lengths spread by 4x along kv; held-out points sit
// between grid points, away from both neighbours.
constexpr int64_t kNGrid[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
constexpr int64_t kNHeldOut[] = {3, 12, 48, 192, 768, 3072};
constexpr int64_t kKvGrid[] = {16, 64, 256, 1024, 4096};
constexpr int64_t kKvHeldOut[] = {40, 160, 640, 2560};
// The output head only ever runs on the last row; its own families get a
// short grid so that a line exists, not the full one.
constexpr int64_t kHeadTokens = 4;
constexpr uint64_t kTransferSizes[] = {4u << 10, 16u << 10, 64u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20, 64u << 20};

// The grid up to `cap` (the cap itself added when it falls between grid points).
std::vector<int64_t> capped_grid(const int64_t* grid, size_t n, int64_t cap) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < n; ++i)
        if (grid[i] <= cap) out.push_back(grid[i]);
    if ((out.empty() || out.back() < cap) && cap <= grid[n - 1]) out.push_back(cap);
    return out;
}
std::vector<int64_t> held_out_below(const int64_t* pts, size_t n, int64_t cap) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < n; ++i)
        if (pts[i] < cap) out.push_back(pts[i]);
    return out;
}

// The points one family is measured at.
struct Item {
    std::string family;
    size_t node = 0;
    bool kv_axis = false;  // attention decode: one token, x = cache rows attended
    int64_t x = 0;
    bool held_out = false;
};

struct FamilyPlan {
    std::string family;
    size_t node = 0;
    bool head_only = true;
};

// Bytes one forward pass touches: every weight, and the KV cache at the
// profile's context (f32, the larger case).
uint64_t working_set_bytes(const ModelFile& m, const ProfileOptions& o) {
    uint64_t bytes = 0;
    for (const auto& [name, w] : m.weights) bytes += w.bytes;
    const LlamaHParams& hp = m.hparams;
    return bytes + 2 * uint64_t(hp.n_layer) * uint64_t(context_length(hp, o.n_ctx)) * uint64_t(hp.n_head_kv * hp.head_dim) * 4;
}

class Profiler {
public:
    Profiler(const DeviceRef& d, const ModelFile& m, const ProfileOptions& o, const ProfileProgressFn& progress, const DeviceProfile* base)
        : d_(d), model_(m), o_(o), progress_(progress), base_(base), work_(d), cold_caches_(working_set_bytes(m, o) > kEvictBytes / 2) {}

    DeviceProfile run() {
        const auto t0 = Clock::now();
        DeviceProfile p;
        p.key = profile_key(d_, model_);
        p.date = profile_files::utc_now();
        p.n_ctx = context_length(model_.hparams, o_.n_ctx);
        p.max_tokens = profile_token_cap(model_, o_);
        const std::vector<uint32_t> cache(size_t(model_.hparams.n_layer), cache_dtype(CacheType::automatic, d_.props));
        const ModelGraph mg = build_model_graph(model_, 1, p.n_ctx, cache, true);
        // What a base profile measured stays: its launch and transfer figures,
        // its tables (new points come after theirs), its layer and session fits.
        const int64_t kept_n = base_ ? base_->max_tokens : 0, kept_kv = base_ ? base_->n_ctx : 0;
        if (base_) {
            p.launch_seconds = base_->launch_seconds;
            p.write = base_->write;
            p.read = base_->read;
            p.families = base_->families;
            p.layer_scale = base_->layer_scale;
            p.session_fit = base_->session_fit;
            p.first_compile_seconds = base_->first_compile_seconds;
            p.compile_seconds = base_->compile_seconds;
        }
        const std::vector<Item> items = plan_items(mg, p, kept_n, kept_kv);
        size_t new_fit_points = 0;
        for (int64_t n : session_fit_points(p.max_tokens)) new_fit_points += n > kept_n;
        total_ = double(items.size() + (base_ ? 0 : 2) + layer_points_.size() + new_fit_points);

        if (!base_) {
            report("launch", "", 0);
            p.launch_seconds = measure_launch();
            ++done_;
            measure_transfers(p);
            ++done_;
        }

        // Items come family by family: grid points of an axis before its held-out ones.
        std::map<std::pair<std::string, bool>, int64_t> stopped;  // (family, kv) -> x where a point failed
        for (size_t k = 0; k < items.size();) {
            size_t end = k;
            while (end < items.size() && items[end].family == items[k].family) ++end;
            try {
                measure_family(mg, p, items, k, end, stopped);
            } catch (const Error& e) {  // e.g. its buffers do not fit: the others still count
                log(LogLevel::warn, fmt::format("{}: {} not measured: {}", d_.label(), items[k].family, e.what()));
                p.families.erase(items[k].family);
                done_ = double(end + (base_ ? 0 : 2));
            }
            k = end;
        }
        for (auto& [name, f] : p.families) {
            for (ProfileTable* t : {&f.by_n, &f.by_kv})
                for (HeldOutPoint& h : t->held_out) h.predicted = t->predict(double(h.x));
        }
        try {
            measure_layers(mg, p);
        } catch (const Error& e) {
            log(LogLevel::warn, fmt::format("{}: whole layers not measured (node figures stand alone): {}", d_.label(), e.what()));
            p.layer_scale = ProfileTable{};
        }
        try {
            fit_session(d_, model_, p, o_, [&](int64_t n) {
                report("session", "n", n);
                ++done_;
            }, kept_n);
        } catch (const Error& e) {
            log(LogLevel::warn, fmt::format("{}: no session fit (executables are predicted from the tables alone): {}", d_.label(), e.what()));
            p.session_fit.clear();
        }
        if (!work_.compile_times.empty() && !base_) {
            p.first_compile_seconds = work_.compile_times.front();
            p.compile_seconds = median(std::vector<double>(work_.compile_times.begin() + 1, work_.compile_times.end()));
        }
        p.profile_seconds = since(t0);
        return p;
    }

private:
    void report(const std::string& stage, const std::string& axis, int64_t x) {
        if (progress_) progress_(ProfileProgress{d_.label(), stage, axis, x, total_ > 0 ? done_ / total_ : 0.0});
    }

    // The points to measure: the grids up to the cap and context, past
    // kept_n tokens and kept_kv cache rows (a base profile's).
    std::vector<Item> plan_items(const ModelGraph& mg, const DeviceProfile& p, int64_t kept_n, int64_t kept_kv) {
        std::vector<FamilyPlan> fams;
        std::map<std::string, size_t> index;
        for (size_t i = 0; i < mg.nodes.size(); ++i) {
            const std::string f = op_shape(mg, i, 1).family();
            auto [it, fresh] = index.emplace(f, fams.size());
            if (fresh) fams.push_back(FamilyPlan{f, i, true});
            if (mg.nodes[i].layer != mg.n_layer) fams[it->second].head_only = false;
        }
        std::vector<Item> items;
        auto past = [](std::vector<int64_t> xs, int64_t kept) {
            xs.erase(std::remove_if(xs.begin(), xs.end(), [&](int64_t x) { return x <= kept; }), xs.end());
            return xs;
        };
        layer_points_ = past(capped_grid(kNGrid, std::size(kNGrid), p.max_tokens), kept_n);
        for (const FamilyPlan& f : fams) {
            const int64_t cap = f.head_only ? std::min<int64_t>(kHeadTokens, p.max_tokens) : p.max_tokens;
            // A family the base lacks (it failed there) is measured whole.
            const bool kept = p.families.count(f.family) > 0;
            const int64_t kn = kept ? kept_n : 0, kkv = kept ? kept_kv : 0;
            for (int64_t x : past(capped_grid(kNGrid, std::size(kNGrid), cap), kn)) items.push_back({f.family, f.node, false, x, false});
            if (!f.head_only)
                for (int64_t x : past(held_out_below(kNHeldOut, std::size(kNHeldOut), cap), kn)) items.push_back({f.family, f.node, false, x, true});
            if (mg.nodes[f.node].node.op == HETERO_OP_ATTENTION || mg.nodes[f.node].node.op == HETERO_OP_ATTENTION_EXT) {
                for (int64_t x : past(capped_grid(kKvGrid, std::size(kKvGrid), p.n_ctx), kkv)) items.push_back({f.family, f.node, true, x, false});
                for (int64_t x : past(held_out_below(kKvHeldOut, std::size(kKvHeldOut), p.n_ctx), kkv))
                    items.push_back({f.family, f.node, true, x, true});
            }
        }
        return items;
    }

    // An ADD of one 32-float row: its round trip is submission + synchronisation.
    double measure_launch() {
        Scratch s(work_);
        hetero_tensor_desc row{};
        row.dtype = HETERO_DTYPE_F32;
        row.kind = HETERO_TENSOR_BOUND;
        row.ndim = 2;
        row.shape[0] = 1;
        row.shape[1] = 32;
        const NodeGraph g = add_graph(row, row);
        std::vector<uint8_t> data(128);
        fill_random(data, HETERO_DTYPE_F32, 32);
        std::vector<hetero_binding> bound;
        for (int32_t t = 0; t < 3; ++t) {
            hetero_buffer* b = s.alloc(128, "launch test row");
            s.write(b, data.data(), data.size(), "launch test row");
            bound.push_back({t, 0, b, 0});
        }
        hetero_executable* exe = s.compile(g.view(), {}, "the launch test");
        return work_.median_run(exe, bound, "the launch test", o_.target_seconds, 10, 200);
    }

    void measure_transfers(DeviceProfile& p) {
        uint64_t max_bytes = kTransferSizes[std::size(kTransferSizes) - 1];
        if (d_.props.memory_bytes) max_bytes = std::min<uint64_t>(max_bytes, d_.props.memory_bytes / 4);
        Scratch s(work_);
        hetero_buffer* b = s.alloc(max_bytes, "transfer test buffer");
        std::vector<uint8_t> host(max_bytes);
        for (size_t i = 0; i < host.size(); ++i) host[i] = uint8_t(i * 31);
        auto& api = work_.api();
        auto time = [&](bool write, uint64_t bytes) {
            auto once = [&] {
                const auto t0 = Clock::now();
                const hetero_status st = write ? api.buffer_write(work_.ep(), b, 0, host.data(), bytes)
                                               : api.buffer_read(work_.ep(), b, 0, host.data(), bytes);
                work_.provider().check(st, fmt::format("{} {} bytes", write ? "writing" : "reading", bytes));
                return since(t0);
            };
            once();
            std::vector<double> t;
            const auto t0 = Clock::now();
            while (t.size() < 10 && (t.size() < 3 || since(t0) < 0.1)) t.push_back(once());
            return median(t);
        };
        for (bool write : {true, false}) {
            TransferFit& f = write ? p.write : p.read;
            for (uint64_t bytes : kTransferSizes) {
                if (bytes > max_bytes) break;
                report(write ? "transfer write" : "transfer read", "bytes", int64_t(bytes));
                f.points.emplace_back(bytes, time(write, bytes));
            }
            fit_transfer(f);
        }
    }

    // latency + bytes / bandwidth, least squares in relative error so the
    // 4 KiB points weigh as much as the 64 MiB ones; latency >= 0.
    static void fit_transfer(TransferFit& f) {
        double S = 0, Sx = 0, Sxx = 0, St = 0, Sxt = 0;
        for (const auto& [bytes, t] : f.points) {
            const double w = 1.0 / (t * t), x = double(bytes);
            S += w, Sx += w * x, Sxx += w * x * x, St += w * t, Sxt += w * x * t;
        }
        double b = (S * Sxt - Sx * St) / (S * Sxx - Sx * Sx);
        double a = (St - b * Sx) / S;
        if (!(a >= 0)) {
            a = 0;
            b = Sxt / Sxx;
        }
        if (!(b > 0)) b = f.points.back().second / double(f.points.back().first);
        f.latency_seconds = a;
        f.bytes_per_second = 1.0 / b;
    }

    // Layer 0 compiled whole at each grid point, against the sum of its
    // nodes' predictions (DeviceProfile::layer_scale).
    void measure_layers(const ModelGraph& mg, DeviceProfile& p) {
        std::vector<size_t> nodes;
        for (size_t i = 0; i < mg.nodes.size(); ++i)
            if (mg.nodes[i].layer == 0 && mg.nodes[i].node.op != HETERO_OP_EMBEDDING) nodes.push_back(i);
        if (nodes.empty() || layer_points_.empty()) return;
        Scratch s(work_);
        const SubGraph widest = sub_graph(mg, nodes, layer_points_.back());
        std::map<int32_t, hetero_buffer*> buf;
        hetero_buffer* positions = nullptr;
        for (size_t j = 0; j < widest.tensors.size(); ++j) {
            const hetero_tensor_desc& d = widest.tensors[j];
            if (d.kind != HETERO_TENSOR_BOUND) continue;
            const ModelTensor& t = mg.tensors[size_t(widest.model_ids[j])];
            const uint64_t bytes = sdk::tensor_bytes(d);
            hetero_buffer* b = s.alloc(bytes, d.name ? d.name : "tensor");
            buf[widest.model_ids[j]] = b;
            if (t.use == TensorUse::positions) {
                positions = b;
                continue;
            }
            std::vector<uint8_t> data(bytes);
            fill_random(data, d.dtype, d.ndim > 1 ? sdk::row_width(d) : d.shape[0]);
            s.write(b, data.data(), bytes, d.name ? d.name : "tensor");
        }
        for (int64_t n : layer_points_) {
            report("whole layer", "n", n);
            ++done_;
            const SubGraph g = sub_graph(mg, nodes, n);
            std::vector<hetero_binding> constants, bound;
            for (size_t j = 0; j < g.tensors.size(); ++j) {
                const int32_t id = g.model_ids[j];
                if (g.tensors[j].kind == HETERO_TENSOR_CONSTANT)
                    constants.push_back({int32_t(j), 0, work_.weight(model_.weight(mg.tensors[size_t(id)].desc.name)), 0});
                else if (g.tensors[j].kind == HETERO_TENSOR_BOUND)
                    bound.push_back({int32_t(j), 0, buf.at(id), 0});
            }
            if (positions) {
                std::vector<int32_t> pos(static_cast<size_t>(n));
                for (int64_t r = 0; r < n; ++r) pos[size_t(r)] = int32_t(r);
                s.write(positions, pos.data(), pos.size() * 4, "positions");
            }
            const std::string what = fmt::format("layer 0 n={}", n);
            hetero_executable* exe = s.compile(g.view(), constants, what);
            const double measured = std::max(work_.median_run(exe, bound, what, o_.target_seconds, o_.min_runs, o_.max_runs, cold_caches_) - p.launch_seconds,
                                             kMinNodeSeconds);
            s.release(exe);
            double predicted = 0;
            for (size_t i : nodes) {
                auto f = p.families.find(op_shape(mg, i, 1).family());
                if (f == p.families.end() || f->second.by_n.empty()) {  // a family is missing: no calibration
                    p.layer_scale = ProfileTable{};
                    return;
                }
                predicted += f->second.by_n.predict(double(n));
            }
            p.layer_scale.points.push_back({n, measured / predicted});
        }
    }

    void measure_family(const ModelGraph& mg, DeviceProfile& p, const std::vector<Item>& items, size_t begin, size_t end,
                        std::map<std::pair<std::string, bool>, int64_t>& stopped) {
        const std::string& family = items[begin].family;
        const size_t node = items[begin].node;
        int64_t max_rows = 1;
        for (size_t k = begin; k < end; ++k)
            if (!items[k].kv_axis) max_rows = std::max(max_rows, items[k].x);

        // Bound tensors get one buffer each, sized for the most rows and
        // filled once; the constants are the device's shared weight buffers.
        Scratch s(work_);
        const NodeGraph widest = node_graph(mg, node, max_rows);
        std::map<int32_t, hetero_buffer*> bound_buf;  // model tensor id -> buffer
        hetero_buffer* positions = nullptr;
        for (size_t j = 0; j < widest.tensors.size(); ++j) {
            const ModelTensor& t = mg.tensors[size_t(widest.model_ids[j])];
            if (t.use == TensorUse::weight) continue;
            const hetero_tensor_desc& d = widest.tensors[j];
            const uint64_t bytes = sdk::tensor_bytes(d);
            hetero_buffer* b = s.alloc(bytes, d.name ? d.name : "tensor");
            bound_buf[widest.model_ids[j]] = b;
            if (t.use == TensorUse::positions) {  // written per point
                positions = b;
                continue;
            }
            std::vector<uint8_t> data(bytes);
            if (t.use == TensorUse::tokens) {
                auto* ids = reinterpret_cast<int32_t*>(data.data());
                for (int64_t r = 0; r < d.shape[0]; ++r) ids[r] = int32_t(r % model_.hparams.n_vocab);
            } else {
                fill_random(data, d.dtype, d.ndim > 1 ? sdk::row_width(d) : d.shape[0]);
            }
            s.write(b, data.data(), bytes, d.name ? d.name : "tensor");
        }

        for (size_t k = begin; k < end; ++k) {
            const Item& it = items[k];
            report(family, it.kv_axis ? "kv" : "n", it.x);
            ++done_;
            const auto key = std::make_pair(family, it.kv_axis);
            if (auto st = stopped.find(key); st != stopped.end() && it.x >= st->second) continue;
            FamilyProfile& fp = p.families[family];
            ProfileTable& table = it.kv_axis ? fp.by_kv : fp.by_n;
            if (it.held_out && (table.points.empty() || it.x > table.points.back().x)) continue;
            const int64_t rows = it.kv_axis ? 1 : it.x;
            const std::string what = fmt::format("{} {}={}", family, it.kv_axis ? "kv" : "n", it.x);
            try {
                const NodeGraph g = node_graph(mg, node, rows);
                std::vector<hetero_binding> constants, bound;
                bool cold = false;  // reads weights or a KV cache: timed with cold caches
                for (size_t j = 0; j < g.tensors.size(); ++j) {
                    const int32_t id = g.model_ids[j];
                    cold = cold || mg.tensors[size_t(id)].use == TensorUse::weight || is_cache(mg.tensors[size_t(id)].use);
                    if (g.tensors[j].kind == HETERO_TENSOR_CONSTANT)
                        constants.push_back({int32_t(j), 0, work_.weight(model_.weight(mg.tensors[size_t(id)].desc.name)), 0});
                    else
                        bound.push_back({int32_t(j), 0, bound_buf.at(id), 0});
                }
                if (positions) {
                    // A prefill chunk at position 0, or one decode token whose query sees kv rows.
                    std::vector<int32_t> pos(static_cast<size_t>(rows));
                    for (int64_t r = 0; r < rows; ++r) pos[size_t(r)] = it.kv_axis ? int32_t(it.x - 1) : int32_t(r);
                    s.write(positions, pos.data(), pos.size() * 4, "positions");
                }
                hetero_executable* exe = s.compile(g.view(), constants, what);
                const double t = work_.median_run(exe, bound, what, o_.target_seconds, o_.min_runs, o_.max_runs, cold && cold_caches_);
                s.release(exe);
                const double own = std::max(t - p.launch_seconds, kMinNodeSeconds);
                if (it.held_out) table.held_out.push_back({it.x, own, 0});
                else table.points.push_back({it.x, own});
            } catch (const Error& e) {
                log(LogLevel::warn, fmt::format("{}: {} failed, its table ends below: {}", d_.label(), what, e.what()));
                stopped[key] = it.x;
            }
        }
        // Every point failed: no family rather than an empty one.
        if (auto f = p.families.find(family); f != p.families.end() && f->second.by_n.empty() && f->second.by_kv.empty())
            p.families.erase(f);
    }

    std::vector<int64_t> layer_points_;  // token counts of the whole-layer measurements
    const DeviceRef& d_;
    const ModelFile& model_;
    const ProfileOptions& o_;
    const ProfileProgressFn& progress_;
    const DeviceProfile* base_;  // a profile being extended, or null
    DeviceWork work_;
    // Whether a forward pass's weights and KV cache outgrow the caches, so
    // that a node meets its data cold (else the whole model stays cache-hot
    // between tokens, and so is timed).
    bool cold_caches_;
    double done_ = 0, total_ = 0;
};

}  // namespace

int32_t profile_token_cap(const ModelFile& model, const ProfileOptions& o) {
    int32_t cap = std::min<int32_t>(context_length(model.hparams, o.n_ctx), int32_t(kNGrid[std::size(kNGrid) - 1]));
    if (o.max_tokens > 0) cap = std::min(cap, o.max_tokens);
    return cap;
}

DeviceProfile profile_device(const DeviceRef& device, const ModelFile& model, const ProfileOptions& options,
                             const ProfileProgressFn& progress, const DeviceProfile* base) {
    if (!device.provider) throw Error("profile_device: no provider");
    if (options.min_runs < 1 || options.max_runs < options.min_runs) throw Error("profile_device: bad run counts");
    if (base && !(base->key == profile_key(device, model)))
        throw Error("profile_device: the profile to extend is of another device, provider or model shape");
    return Profiler(device, model, options, progress, base).run();
}

}  // namespace hetero
