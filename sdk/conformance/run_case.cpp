// Runs one case on a provider over the C ABI and judges the outcome.
#include "conformance.hpp"

#include "case_builder.hpp"
#include "error_bounds.hpp"
#include "reference_ops.hpp"

#include <hetero/sdk/graph_check.hpp>
#include <hetero/sdk/provider.hpp>
#include <hetero/sdk/quant.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

namespace hetero::conformance {
namespace {

// Thrown inside a case to end it as failed with this message.
struct CaseFailure {
    std::string message;
};
// Thrown inside a case to end it as skipped with this reason.
struct CaseSkip {
    std::string reason;
    std::string op, dtype;  // the refused node (CaseResult::skip_op / skip_dtype)
};

const char* status_name(hetero_status s) {
    switch (s) {
        case HETERO_OK: return "HETERO_OK";
        case HETERO_ERR_INVALID_ARGUMENT: return "HETERO_ERR_INVALID_ARGUMENT";
        case HETERO_ERR_UNSUPPORTED: return "HETERO_ERR_UNSUPPORTED";
        case HETERO_ERR_OUT_OF_MEMORY: return "HETERO_ERR_OUT_OF_MEMORY";
        case HETERO_ERR_DEVICE_LOST: return "HETERO_ERR_DEVICE_LOST";
        case HETERO_ERR_COMPILE_FAILED: return "HETERO_ERR_COMPILE_FAILED";
        case HETERO_ERR_ABI_MISMATCH: return "HETERO_ERR_ABI_MISMATCH";
        case HETERO_ERR_INTERNAL: return "HETERO_ERR_INTERNAL";
        default: return "unknown status";
    }
}

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", v);
    return buf;
}

// Everything handed out by the provider for one case, released in reverse.
struct Session {
    const hetero_ep_api& api;
    hetero_ep* ep;
    uint32_t device;
    std::vector<hetero_buffer*> buffers;
    hetero_executable* exe = nullptr;

    Session(const hetero_ep_api& a, hetero_ep* e, uint32_t d) : api(a), ep(e), device(d) {
        hetero_device_props p{};
        p.struct_size = sizeof p;
        p.abi_version = HETERO_ABI_VERSION;
        if (api.device_props(ep, device, &p) == HETERO_OK)
            int8_matmul = p.kind == HETERO_DEVICE_NPU && (p.dtype_mask & HETERO_DTYPE_BIT(HETERO_DTYPE_I8)) != 0;
    }
    bool int8_matmul = false;  // W8A8 matmuls (error_bounds)
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session() {
        if (exe) api.executable_release(ep, exe);
        for (auto* b : buffers) api.buffer_release(ep, b);
    }
    std::string explain(hetero_status s) const {
        const char* msg = api.last_error ? api.last_error() : nullptr;
        return std::string(status_name(s)) + " (" + (msg ? msg : "no message") + ")";
    }
    void check(hetero_status s, const std::string& what) const {
        if (s != HETERO_OK) throw CaseFailure{what + " failed: " + explain(s)};
    }
    hetero_buffer* alloc(uint64_t size) {
        hetero_buffer* b = nullptr;
        check(api.buffer_alloc(ep, device, size, &b), "buffer_alloc(" + std::to_string(size) + ")");
        if (!b) throw CaseFailure{"buffer_alloc returned HETERO_OK and no buffer"};
        buffers.push_back(b);
        return b;
    }
};

// Descriptors with names attached, and the hetero_graph over them.
struct GraphView {
    std::vector<hetero_tensor_desc> descs;
    hetero_graph graph{};
    explicit GraphView(const Case& c) {
        for (const auto& t : c.tensors) {
            descs.push_back(t.desc);
            descs.back().name = t.name.c_str();
        }
        graph = hetero_graph{sizeof(hetero_graph), HETERO_ABI_VERSION, uint32_t(descs.size()), uint32_t(c.nodes.size()), descs.data(),
                             c.nodes.data()};
    }
};

std::string tensor_label(const Case& c, int32_t t) { return "'" + c.tensors[size_t(t)].name + "'"; }

std::string coords(const hetero_tensor_desc& d, int64_t flat) {
    std::string s;
    for (int i = int(d.ndim) - 1; i >= 0; --i) {
        s = std::to_string(flat % d.shape[i]) + (s.empty() ? "" : "," + s);
        flat /= d.shape[i];
    }
    return "[" + s + "]";
}

// The dtype that sets a node apart, for summaries of what a provider
// refused: a conversion's "src_to_dst", else the dtypes other than f32 and
// i32 among its operands (a matmul's weight, an attention's cache), else f32.
std::string deciding_dtype(const hetero_node& node, const std::vector<hetero_tensor_desc>& descs) {
    const uint32_t out = descs[size_t(node.output)].dtype;
    if (node.op == HETERO_OP_CONVERT) return std::string(sdk::dtype_name(descs[size_t(node.inputs[0])].dtype)) + "_to_" + sdk::dtype_name(out);
    std::string dtypes;
    auto note = [&](uint32_t dt) {
        const std::string name = sdk::dtype_name(dt);
        if (dt == HETERO_DTYPE_F32 || dt == HETERO_DTYPE_I32 || ("+" + dtypes + "+").find("+" + name + "+") != std::string::npos) return;
        dtypes += (dtypes.empty() ? "" : "+") + name;
    };
    for (uint32_t i = 0; i < node.n_inputs; ++i) note(descs[size_t(node.inputs[i])].dtype);
    note(out);
    return dtypes.empty() ? "f32" : dtypes;
}

// Unsupported nodes skip the case; any other refusal of a well-formed node fails it.
void require_support(Session& s, const Case& c, const GraphView& g) {
    for (size_t n = 0; n < c.nodes.size(); ++n) {
        double est = 0.0;
        const hetero_status st = s.api.op_supported(s.ep, s.device, &c.nodes[n], g.descs.data(), uint32_t(g.descs.size()), &est);
        const std::string op = sdk::op_name(c.nodes[n].op);
        if (st == HETERO_ERR_UNSUPPORTED)
            throw CaseSkip{"node " + std::to_string(n) + " (" + op + ") unsupported: " + (s.api.last_error ? s.api.last_error() : ""), op,
                           deciding_dtype(c.nodes[n], g.descs)};
        if (st != HETERO_OK) throw CaseFailure{"op_supported refused well-formed node " + std::to_string(n) + " (" + op + "): " + s.explain(st)};
    }
}

// Seeded initial bytes of every tensor (internal ones zeroed: the reference needs memory for them).
std::vector<std::vector<uint8_t>> initial_data(const Case& c) {
    std::vector<std::vector<uint8_t>> data(c.tensors.size());
    for (size_t t = 0; t < c.tensors.size(); ++t) {
        const TensorSpec& spec = c.tensors[t];
        const hetero_tensor_desc& d = spec.desc;
        if (!sdk::check_tensor(d).empty()) continue;
        data[t].assign(sdk::tensor_bytes(d), 0);
        if (d.kind == HETERO_TENSOR_INTERNAL) continue;
        const int64_t count = sdk::element_count(d);
        Rng rng(c.seed ^ seed_of(spec.name));
        auto* i32 = reinterpret_cast<int32_t*>(data[t].data());
        switch (spec.fill.kind) {
            case Fill::Uniform: {
                if (d.dtype == HETERO_DTYPE_I32 || d.dtype == HETERO_DTYPE_I8) break;
                std::vector<float> v(static_cast<size_t>(count));
                for (auto& x : v) x = float(rng.uniform(spec.fill.lo, spec.fill.hi));
                const int64_t width = sdk::inner_dim(d);
                const uint64_t stride = sdk::row_bytes(d.dtype, width);
                for (int64_t r = 0; r < count / width; ++r) sdk::row_from_f32(d.dtype, v.data() + r * width, data[t].data() + uint64_t(r) * stride, width);
                if (spec.fill.poison_from_row >= 0 && d.shape[0] > 0) {
                    const uint64_t row = data[t].size() / uint64_t(d.shape[0]);
                    const uint64_t from = std::min<uint64_t>(data[t].size(), uint64_t(spec.fill.poison_from_row) * row);
                    std::memset(data[t].data() + from, 0xff, data[t].size() - from);  // NaN in every float dtype
                }
                break;
            }
            case Fill::Ids:
                for (int64_t i = 0; i < count; ++i) i32[i] = int32_t(int64_t(spec.fill.lo) + rng.below(int64_t(spec.fill.hi - spec.fill.lo)));
                break;
            case Fill::Values:
                for (int64_t i = 0; i < count && size_t(i) < spec.fill.values.size(); ++i) i32[i] = spec.fill.values[size_t(i)];
                break;
            case Fill::Garbage: std::memset(data[t].data(), 0xff, data[t].size()); break;  // NaN in every float dtype
        }
    }
    return data;
}

// Where each non-internal tensor lives: one buffer each, or all in one
// buffer at 256-byte aligned, nonzero offsets (packed cases).
struct Placement {
    std::vector<hetero_buffer*> buffer;
    std::vector<uint64_t> offset;
};

Placement place(Session& s, const Case& c, const std::vector<std::vector<uint8_t>>& init) {
    Placement p{std::vector<hetero_buffer*>(c.tensors.size(), nullptr), std::vector<uint64_t>(c.tensors.size(), 0)};
    auto wanted = [&](size_t t) { return c.tensors[t].desc.kind != HETERO_TENSOR_INTERNAL && !init[t].empty(); };
    if (c.packed) {
        uint64_t end = 256;
        for (size_t t = 0; t < c.tensors.size(); ++t)
            if (wanted(t)) {
                p.offset[t] = end;
                end = (end + init[t].size() + 256 + 255) / 256 * 256;
            }
        hetero_buffer* b = s.alloc(end);
        for (size_t t = 0; t < c.tensors.size(); ++t)
            if (wanted(t)) p.buffer[t] = b;
    } else {
        for (size_t t = 0; t < c.tensors.size(); ++t)
            if (wanted(t)) p.buffer[t] = s.alloc(init[t].size());
    }
    return p;
}

void write_tensors(Session& s, const Case& c, const Placement& p, const std::vector<std::vector<uint8_t>>& init, uint32_t kind) {
    for (size_t t = 0; t < c.tensors.size(); ++t)
        if (p.buffer[t] && c.tensors[t].desc.kind == kind)
            s.check(s.api.buffer_write(s.ep, p.buffer[t], p.offset[t], init[t].data(), init[t].size()), "buffer_write of " + tensor_label(c, int32_t(t)));
}

std::vector<hetero_binding> bindings_of(const Case& c, const Placement& p, uint32_t kind) {
    std::vector<hetero_binding> out;
    for (size_t t = 0; t < c.tensors.size(); ++t)
        if (p.buffer[t] && c.tensors[t].desc.kind == kind) out.push_back(hetero_binding{int32_t(t), 0, p.buffer[t], p.offset[t]});
    return out;
}

void compile(Session& s, const Case& c, const GraphView& g, const Placement& p) {
    const auto constants = bindings_of(c, p, HETERO_TENSOR_CONSTANT);
    s.check(s.api.compile(s.ep, s.device, &g.graph, constants.data(), constants.size(), &s.exe), "compile");
    if (!s.exe) throw CaseFailure{"compile returned HETERO_OK and no executable"};
}

// Executes with an event (waiting on it) or synchronously; returns the status.
hetero_status execute(Session& s, const std::vector<hetero_binding>& bind, bool with_event) {
    if (!with_event) return s.api.execute(s.ep, s.exe, bind.data(), bind.size(), nullptr);
    hetero_event* ev = nullptr;
    hetero_status st = s.api.execute(s.ep, s.exe, bind.data(), bind.size(), &ev);
    if (st != HETERO_OK) return st;
    if (!ev) throw CaseFailure{"execute returned HETERO_OK and no event"};
    st = s.api.event_wait(s.ep, ev);
    s.api.event_release(s.ep, ev);
    return st;
}

// Tracks the element whose error is largest relative to its bound.
struct Judgement {
    bool failed = false;
    double ratio = -1.0;
    CaseResult worst;
    std::string extra;  // failure that is not about one element

    void see(const std::string& tensor, int64_t index, double expected, double actual, double tol, const std::string& where) {
        const double err = std::fabs(actual - expected);
        const bool bad = !(err <= tol);  // NaN fails
        const double r = bad ? (std::isnan(err) || tol == 0.0 ? std::numeric_limits<double>::infinity() : err / tol) : (tol > 0 ? err / tol : 0.0);
        if ((bad && !failed) || (bad == failed && r > ratio)) {
            failed = failed || bad;
            ratio = r;
            worst.tensor = tensor + where;
            worst.index = index;
            worst.expected = expected;
            worst.actual = actual;
            worst.error = err;
            worst.tolerance = tol;
        }
    }
};

void compare_block_scales(const hetero_tensor_desc& d, const std::vector<uint8_t>& ref, const std::vector<uint8_t>& got,
                          const std::vector<double>& bounds, const std::string& name, Judgement& j) {
    // GGUF's rounding is the contract; a code one step off at a rounding tie
    // is tolerated, a systematic difference (truncation, wrong scale) is not.
    const int64_t count = sdk::element_count(d);
    const uint64_t block_bytes = d.dtype == HETERO_DTYPE_Q8_0 ? sizeof(sdk::BlockQ8_0) : sizeof(sdk::BlockQ4_0);
    const std::vector<float> rv = decode_tensor(d, ref.data()), gv = decode_tensor(d, got.data());
    int64_t differing = 0;
    for (int64_t b = 0; b < count / sdk::kQBlock; ++b) {
        uint16_t rd = 0, gd = 0;
        std::memcpy(&rd, ref.data() + uint64_t(b) * block_bytes, 2);
        std::memcpy(&gd, got.data() + uint64_t(b) * block_bytes, 2);
        const double rs = sdk::f16_to_f32(rd), gs = sdk::f16_to_f32(gd);
        j.see(name + ".scale", b, rs, gs, std::fabs(rs) * 0x1p-10, "");
        for (int64_t e = b * sdk::kQBlock; e < (b + 1) * sdk::kQBlock; ++e) {
            differing += rv[size_t(e)] != gv[size_t(e)];
            j.see(name, e, rv[size_t(e)], gv[size_t(e)], bounds[size_t(e)] + std::fabs(rs) * 1.001, "");
        }
    }
    bool exact_input = true;
    for (double b : bounds) exact_input = exact_input && b == 0.0;
    if (exact_input && differing * 100 > count) {
        j.failed = true;
        j.extra = name + ": " + std::to_string(differing) + " of " + std::to_string(count) + " quantized values differ from GGUF's rounding";
    }
}

void compare_tensor(const hetero_tensor_desc& d, const std::string& name, const std::vector<uint8_t>& ref, const std::vector<uint8_t>& got,
                    const std::vector<double>& bounds, Judgement& j) {
    if (sdk::is_block_dtype(d.dtype)) return compare_block_scales(d, ref, got, bounds, name, j);
    const std::vector<float> rv = decode_tensor(d, ref.data()), gv = decode_tensor(d, got.data());
    for (size_t e = 0; e < rv.size(); ++e) j.see(name, int64_t(e), rv[e], gv[e], bounds[e], "");
}

CaseResult run_compare(Session& s, const Case& c) {
    GraphView g(c);
    require_support(s, c, g);
    const auto init = initial_data(c);

    auto ref = init;
    std::vector<uint8_t*> ptrs;
    for (auto& v : ref) ptrs.push_back(v.data());
    try {
        reference::run_graph(g.graph, ptrs.data());
    } catch (const sdk::Error& e) {
        throw CaseFailure{std::string("the reference rejected the case (a kit bug): ") + e.what()};
    }
    const auto bounds = error_bounds(g.graph, ptrs.data(), s.int8_matmul);

    std::vector<bool> is_output(c.tensors.size(), false);
    for (const auto& n : c.nodes)
        if (c.tensors[size_t(n.output)].desc.kind == HETERO_TENSOR_BOUND) is_output[size_t(n.output)] = true;

    const Placement p = place(s, c, init);
    write_tensors(s, c, p, init, HETERO_TENSOR_CONSTANT);
    compile(s, c, g, p);
    const auto bind = bindings_of(c, p, HETERO_TENSOR_BOUND);

    Judgement j;
    for (bool with_event : {true, false}) {
        const std::string how = with_event ? " (execute with event)" : " (synchronous execute)";
        write_tensors(s, c, p, init, HETERO_TENSOR_BOUND);  // restores caches and the garbage in outputs
        const hetero_status st = execute(s, bind, with_event);
        if (st != HETERO_OK) throw CaseFailure{"execute" + how + " failed: " + s.explain(st)};
        for (size_t t = 0; t < c.tensors.size(); ++t) {
            if (!is_output[t]) continue;
            std::vector<uint8_t> got(init[t].size());
            s.check(s.api.buffer_read(s.ep, p.buffer[t], p.offset[t], got.data(), got.size()), "buffer_read of " + tensor_label(c, int32_t(t)));
            Judgement one;
            compare_tensor(c.tensors[t].desc, c.tensors[t].name, ref[t], got, bounds[t], one);
            if (one.failed || one.ratio > j.ratio) {
                j = one;
                const bool scale = one.worst.tensor != c.tensors[t].name;  // a Q8_0/Q4_0 block scale
                j.worst.tensor = scale ? one.worst.tensor + "[block " + std::to_string(one.worst.index) + "]" + how
                                       : c.tensors[t].name + coords(c.tensors[t].desc, one.worst.index) + how;
            }
            if (j.failed) break;
        }
        if (j.failed) break;
    }
    CaseResult r = j.worst;
    r.passed = !j.failed;
    const std::string detail = r.tensor + ": expected " + fmt(r.expected) + ", got " + fmt(r.actual) + ", |error| " + fmt(r.error) +
                               (r.passed ? " <= " : " > ") + "bound " + fmt(r.tolerance);
    r.message = !j.extra.empty() ? j.extra : (r.passed ? "worst " : "") + detail;
    return r;
}

CaseResult run_reject_compile(Session& s, const Case& c) {
    GraphView g(c);
    if (c.fault == Fault::GraphStructSize) g.graph.struct_size = uint32_t(offsetof(hetero_graph, nodes));
    if (c.fault == Fault::GraphAbiMajor) g.graph.abi_version = (HETERO_ABI_VERSION_MAJOR + 1) << 16;
    const auto init = initial_data(c);
    const Placement p = place(s, c, init);
    write_tensors(s, c, p, init, HETERO_TENSOR_CONSTANT);
    const auto constants = bindings_of(c, p, HETERO_TENSOR_CONSTANT);
    hetero_executable* exe = nullptr;
    const hetero_status st = s.api.compile(s.ep, s.device, &g.graph, constants.data(), constants.size(), &exe);
    if (st == HETERO_OK) {
        if (exe) s.api.executable_release(s.ep, exe);
        throw CaseFailure{"compile accepted a malformed graph"};
    }
    if (st != HETERO_ERR_INVALID_ARGUMENT) throw CaseFailure{"compile must answer HETERO_ERR_INVALID_ARGUMENT, got " + s.explain(st)};
    CaseResult r;
    r.passed = true;
    r.message = "rejected: " + s.explain(st);
    return r;
}

CaseResult run_reject_execute(Session& s, const Case& c) {
    GraphView g(c);
    require_support(s, c, g);
    const auto init = initial_data(c);
    if (c.fault == Fault::None) {  // the kit's own check that the data really is invalid
        auto ref = init;
        std::vector<uint8_t*> ptrs;
        for (auto& v : ref) ptrs.push_back(v.data());
        bool rejected = false;
        try {
            reference::run_graph(g.graph, ptrs.data());
        } catch (const sdk::Error&) {
            rejected = true;
        }
        if (!rejected) throw CaseFailure{"the reference accepts this data (a kit bug)"};
    }
    const Placement p = place(s, c, init);
    write_tensors(s, c, p, init, HETERO_TENSOR_CONSTANT);
    write_tensors(s, c, p, init, HETERO_TENSOR_BOUND);
    compile(s, c, g, p);
    const auto good = bindings_of(c, p, HETERO_TENSOR_BOUND);
    auto bad = good;
    if (c.fault == Fault::Unbound || c.fault == Fault::BindingOutOfRange) {
        for (size_t i = 0; i < bad.size(); ++i)
            if (bad[i].tensor == c.fault_tensor) {
                if (c.fault == Fault::Unbound) bad.erase(bad.begin() + long(i));
                else bad[i].offset += 16;  // each tensor's buffer is exactly its size
                break;
            }
    }
    std::string how;
    for (bool with_event : {true, false}) {
        const hetero_status st = execute(s, bad, with_event);
        const std::string mode = with_event ? "execute with event" : "synchronous execute";
        if (st == HETERO_OK) throw CaseFailure{mode + " succeeded; it must return an error"};
        how = s.explain(st);
    }
    // The instance must keep working after refusing.
    if (c.fault != Fault::None) {
        const hetero_status st = execute(s, good, false);
        if (st != HETERO_OK) throw CaseFailure{"a correct execute after the refused one failed: " + s.explain(st)};
    }
    CaseResult r;
    r.passed = true;
    r.message = "rejected: " + how;
    return r;
}

std::vector<uint8_t> random_bytes(Rng& rng, uint64_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = uint8_t(rng.next());
    return v;
}

void expect_equal(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got, const std::string& what) {
    for (size_t i = 0; i < want.size(); ++i)
        if (want[i] != got[i])
            throw CaseFailure{what + ": byte " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " + std::to_string(want[i])};
}

CaseResult run_buffer_range(Session& s, const Case& c) {
    const uint64_t n = c.buffer_bytes;
    Rng rng(c.seed);
    hetero_buffer* a = s.alloc(n);
    hetero_buffer* b = s.alloc(n);
    const auto pattern = random_bytes(rng, n);
    s.check(s.api.buffer_write(s.ep, a, 0, pattern.data(), n), "buffer_write of the whole buffer");
    s.check(s.api.buffer_write(s.ep, b, 0, pattern.data(), n), "buffer_write of the whole buffer");
    std::vector<uint8_t> junk(n + 16, 0x5a);
    const uint64_t huge = std::numeric_limits<uint64_t>::max() - 3;
    struct Range { uint64_t offset, size; };
    const Range bad[] = {{n - 4, 8}, {n, 1}, {0, n + 1}, {huge, 8}, {n + 100, 0}};
    auto must_refuse = [&](hetero_status st, const std::string& what) {
        if (st == HETERO_OK) throw CaseFailure{what + " succeeded; it must fail"};
        if (st != HETERO_ERR_INVALID_ARGUMENT) throw CaseFailure{what + " must answer HETERO_ERR_INVALID_ARGUMENT, got " + s.explain(st)};
    };
    for (const Range& r : bad) {
        const std::string range = "[" + std::to_string(r.offset) + ", +" + std::to_string(r.size) + ") of a " + std::to_string(n) + "-byte buffer";
        must_refuse(s.api.buffer_write(s.ep, a, r.offset, junk.data(), r.size), "buffer_write " + range);
        must_refuse(s.api.buffer_read(s.ep, a, r.offset, junk.data(), r.size), "buffer_read " + range);
        must_refuse(s.api.buffer_copy(s.ep, a, r.offset, b, 0, r.size), "buffer_copy from " + range);
        must_refuse(s.api.buffer_copy(s.ep, a, 0, b, r.offset, r.size), "buffer_copy to " + range);
    }
    // Refused calls must not have written anything.
    std::vector<uint8_t> back(n);
    s.check(s.api.buffer_read(s.ep, a, 0, back.data(), n), "buffer_read");
    expect_equal(pattern, back, "buffer after refused writes");
    s.check(s.api.buffer_read(s.ep, b, 0, back.data(), n), "buffer_read");
    expect_equal(pattern, back, "copy destination after refused copies");
    // The last bytes are reachable.
    s.check(s.api.buffer_write(s.ep, a, n - 8, junk.data(), 8), "buffer_write of the last 8 bytes");
    s.check(s.api.buffer_read(s.ep, a, n - 8, back.data(), 8), "buffer_read of the last 8 bytes");
    CaseResult res;
    res.passed = true;
    res.message = "out-of-range writes, reads and copies refused";
    return res;
}

CaseResult run_buffer_round_trip(Session& s, const Case& c) {
    const uint64_t n = c.buffer_bytes, shift = 13;  // an odd destination offset
    Rng rng(c.seed);
    hetero_buffer* a = s.alloc(n);
    hetero_buffer* b = s.alloc(n + shift);
    auto pattern = random_bytes(rng, n);
    s.check(s.api.buffer_write(s.ep, a, 0, pattern.data(), n), "buffer_write");
    std::vector<uint8_t> back(n);
    s.check(s.api.buffer_read(s.ep, a, 0, back.data(), n), "buffer_read");
    expect_equal(pattern, back, "read after write");
    s.check(s.api.buffer_copy(s.ep, a, 0, b, shift, n), "buffer_copy");
    s.check(s.api.buffer_read(s.ep, b, shift, back.data(), n), "buffer_read of the copy");
    expect_equal(pattern, back, "read after copy");
    // A partial write at an odd offset changes only its own bytes.
    const uint64_t at = n / 3, len = (n + 1) / 2;
    const auto patch = random_bytes(rng, len);
    s.check(s.api.buffer_write(s.ep, a, at, patch.data(), len), "partial buffer_write");
    std::copy(patch.begin(), patch.end(), pattern.begin() + long(at));
    s.check(s.api.buffer_read(s.ep, a, 0, back.data(), n), "buffer_read");
    expect_equal(pattern, back, "read after partial write");
    // Zero-copy import, where the provider offers it, must show the host bytes.
    std::vector<uint8_t> host = random_bytes(rng, n);
    hetero_buffer* imported = nullptr;
    const hetero_status st = s.api.buffer_import_host(s.ep, s.device, host.data(), n, &imported);
    if (st == HETERO_OK) {
        s.buffers.push_back(imported);
        s.check(s.api.buffer_read(s.ep, imported, 0, back.data(), n), "buffer_read of imported host memory");
        expect_equal(host, back, "imported host memory");
    } else if (st != HETERO_ERR_UNSUPPORTED) {
        throw CaseFailure{"buffer_import_host must succeed or answer HETERO_ERR_UNSUPPORTED, got " + s.explain(st)};
    }
    CaseResult res;
    res.passed = true;
    res.message = "write, read, copy and partial write round-trip";
    return res;
}

}  // namespace

// device_props writes no byte past the caller's struct_size and says in
// struct_size how much it filled (a caller of ABI 1.0 passes the 1.0 size);
// the fields of 1.1, where filled, are terminated and finite.
CaseResult run_device_props(Session& s, const Case&) {
    constexpr size_t kSize_1_0 = offsetof(hetero_device_props, resource);
    constexpr uint8_t kCanary = 0xa5;
    // A 1.0 caller's struct at the start of a larger buffer of canaries.
    alignas(hetero_device_props) uint8_t raw[sizeof(hetero_device_props) + 64];
    std::memset(raw, kCanary, sizeof raw);
    hetero_device_props head{};
    head.struct_size = uint32_t(kSize_1_0);
    head.abi_version = 1u << 16;
    std::memcpy(raw, &head, offsetof(hetero_device_props, kind));
    auto* small = reinterpret_cast<hetero_device_props*>(raw);
    s.check(s.api.device_props(s.ep, s.device, small), "device_props with a 1.0-sized struct");
    for (size_t i = kSize_1_0; i < sizeof raw; ++i)
        if (raw[i] != kCanary)
            throw CaseFailure{"device_props with struct_size " + std::to_string(kSize_1_0) + " wrote byte " + std::to_string(i) + " past it"};
    if (small->struct_size > kSize_1_0)
        throw CaseFailure{"device_props answered struct_size " + std::to_string(small->struct_size) + " to a caller of " + std::to_string(kSize_1_0) + " bytes"};

    hetero_device_props p{};
    p.struct_size = sizeof p;
    p.abi_version = HETERO_ABI_VERSION;
    s.check(s.api.device_props(s.ep, s.device, &p), "device_props");
    if (p.struct_size > sizeof p || p.struct_size < kSize_1_0)
        throw CaseFailure{"device_props answered struct_size " + std::to_string(p.struct_size) + " to a caller of " + std::to_string(sizeof p) + " bytes"};
    if (!std::memchr(p.name, 0, sizeof p.name) || !std::memchr(p.driver, 0, sizeof p.driver)) throw CaseFailure{"name or driver not NUL-terminated"};
    CaseResult res;
    res.passed = true;
    // A provider of ABI 1.0 knows no later field and may leave struct_size as the caller set it.
    if (HETERO_ABI_MINOR_OF(s.api.abi_version) < 1 || !HETERO_HAS_FIELD(hetero_device_props, &p, compile_seconds_hint)) {
        res.message = "ABI 1.0 properties; struct_size honoured";
        return res;
    }
    if (!std::memchr(p.resource, 0, sizeof p.resource)) throw CaseFailure{"resource not NUL-terminated"};
    for (double v : {p.launch_seconds_hint, p.compile_seconds_hint, p.peak_gflops, p.peak_bandwidth_gbs})
        if (!std::isfinite(v) || v < 0) throw CaseFailure{"a hint is negative or not finite: " + std::to_string(v)};
    res.message = std::string("resource '") + p.resource + "', launch " + std::to_string(p.launch_seconds_hint) + " s, compile " +
                  std::to_string(p.compile_seconds_hint) + " s";
    return res;
}

CaseResult run_case(const hetero_ep_api& api, hetero_ep* ep, uint32_t device, const Case& c) {
    Session s(api, ep, device);
    try {
        switch (c.kind) {
            case CaseKind::Compare: return run_compare(s, c);
            case CaseKind::RejectCompile: return run_reject_compile(s, c);
            case CaseKind::RejectExecute: return run_reject_execute(s, c);
            case CaseKind::BufferRange: return run_buffer_range(s, c);
            case CaseKind::BufferRoundTrip: return run_buffer_round_trip(s, c);
            case CaseKind::DeviceProps: return run_device_props(s, c);
        }
        throw CaseFailure{"unknown case kind"};
    } catch (const CaseFailure& f) {
        CaseResult r;
        r.message = f.message;
        return r;
    } catch (const CaseSkip& k) {
        CaseResult r;
        r.skipped = true;
        r.message = k.reason;
        r.skip_op = k.op;
        r.skip_dtype = k.dtype;
        return r;
    } catch (const std::exception& e) {
        CaseResult r;
        r.message = std::string("the kit failed: ") + e.what();
        return r;
    }
}

}  // namespace hetero::conformance
