#include "model_coverage.hpp"

#include "console_report.hpp"

#include <hetero/sdk/graph_check.hpp>

#include <algorithm>
#include <cstdio>

namespace hetero::conformance {
namespace {

// Why the provider cannot run question q, or "".
std::string refusal(const hetero_ep_api& api, hetero_ep* ep, uint32_t device, const hetero_device_props& props, const NodeQuestion& q) {
    const hetero_node& n = *q.node;
    const auto& descs = *q.descs;
    const std::string at = " (" + q.where + ", " + std::to_string(q.n_tokens) + (q.n_tokens == 1 ? " token)" : " tokens)");
    // As the runtime does: a dtype newer than ABI 1.0 goes only to a device
    // that lists it, since an older plugin could not refuse it itself.
    for (uint32_t k = 0; k <= n.n_inputs; ++k) {
        const uint32_t dt = descs[size_t(k < n.n_inputs ? n.inputs[k] : n.output)].dtype;
        if (dt >= HETERO_DTYPE_COUNT_1_0 && !(props.dtype_mask & HETERO_DTYPE_BIT(dt)))
            return std::string("the device does not list dtype ") + sdk::dtype_name(dt) + at;
    }
    const hetero_status st = api.op_supported(ep, device, &n, descs.data(), uint32_t(descs.size()), nullptr);
    if (st == HETERO_OK) return "";
    const char* why = api.last_error ? api.last_error() : nullptr;
    return std::string(why && *why ? why : "refused without a message") + at;
}

}  // namespace

void send_model_coverage(const hetero_ep_api& api, hetero_ep* ep, uint32_t device, const std::vector<NeedRow>& rows, RecordWriter& out) {
    hetero_device_props props{};
    props.struct_size = sizeof props;
    props.abi_version = HETERO_ABI_VERSION;
    api.device_props(ep, device, &props);
    for (const NeedRow& row : rows) {
        out.send(RecordKind::Phase, {"asking op_supported about " + row.op + " " + row.dtypes + " on device " + std::to_string(device)});
        std::string why;
        for (const NodeQuestion& q : row.questions)
            if (why = refusal(api, ep, device, props, q); !why.empty()) break;
        out.send(RecordKind::Need, {std::to_string(device), row.op, row.dtypes, row.shapes, why.empty() ? "yes" : "no", why});
    }
}

void ModelCoverageReport::on_record(const Record& r) {
    if (r.kind == RecordKind::Device) {
        print_device();
        title_ = r.field(1);
        ++devices_;
    } else if (r.kind == RecordKind::Need) {
        rows_.push_back(r);
    }
}

void ModelCoverageReport::print_device() {
    if (title_.empty()) return;
    std::printf("%s\n", title_.c_str());
    size_t w_op = 2, w_dt = 8;
    for (const Record& r : rows_) w_op = std::max(w_op, r.field(1).size()), w_dt = std::max(w_dt, r.field(2).size());
    std::printf("  %-*s  %-*s  %-7s  %s\n", int(w_op), "op", int(w_dt), "dtype(s)", "covered", "shapes");
    int uncovered = 0;
    for (const Record& r : rows_) {
        const bool yes = r.field(4) == "yes";
        uncovered += yes ? 0 : 1;
        std::string line(256 + r.field(3).size(), '\0');
        line.resize(size_t(std::snprintf(line.data(), line.size(), "  %-*s  %-*s  %-7s  %s", int(w_op), r.field(1).c_str(), int(w_dt),
                                         r.field(2).c_str(), yes ? "yes" : "NO", r.field(3).c_str())));
        line.erase(line.find_last_not_of(' ') + 1);
        std::printf("%s\n", line.c_str());
        if (!yes) std::printf("  %*s  why: %s\n", int(w_op + w_dt + 2), "", r.field(5).c_str());
    }
    std::printf("  %d of %zu kinds of node covered\n", int(rows_.size()) - uncovered, rows_.size());
    const bool matmuls = std::all_of(rows_.begin(), rows_.end(), [](const Record& r) { return r.field(1) != "matmul" || r.field(4) == "yes"; });
    if (uncovered > 0 && matmuls)
        std::printf("  it runs every matmul: the runtime can still use it as a matmul helper beside a device that runs whole layers\n");
    uncovered_ += uncovered;
    rows_.clear();
    title_.clear();
}

int ModelCoverageReport::conclude(const std::optional<std::string>& refused, const std::optional<std::string>& abnormal, bool done) {
    print_device();
    int status = kExitPass;
    std::string verdict;
    if (abnormal) {
        status = kExitFailed;
        verdict = "FAIL (" + plugin_ + "): " + *abnormal;
    } else if (refused) {
        status = kExitNotLoaded;
        verdict = "NOT LOADED: " + plugin_ + ": " + *refused;
    } else if (!done || devices_ == 0) {
        status = kExitFailed;
        verdict = "FAIL (" + plugin_ + "): no answer about the model";
    } else if (uncovered_ > 0) {
        status = kExitNotCovered;
        verdict = "NOT COVERED: " + plugin_ + " cannot run " + std::to_string(uncovered_) + " kind(s) of node this model needs";
    } else {
        verdict = "COVERED: " + plugin_ + " runs every node this model needs";
    }
    std::printf("\n%s\n", verdict.c_str());
    std::fflush(stdout);
    return status;
}

}  // namespace hetero::conformance
