#include <hetero/error.hpp>
#include <hetero/sim/soc_cost_model.hpp>
#include <hetero/sdk/graph_check.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hetero {

namespace {

bool quantised(uint32_t dtype) { return dtype != HETERO_DTYPE_F32 && dtype != HETERO_DTYPE_F16 && dtype != HETERO_DTYPE_BF16; }

int64_t round_up(int64_t v, int64_t to) { return to > 1 ? (v + to - 1) / to * to : v; }


void copy_name(char* dst, size_t size, const std::string& s) {
    std::memset(dst, 0, size);
    std::memcpy(dst, s.data(), std::min(size - 1, s.size()));
}

}  // namespace

std::vector<DeviceRef> soc_devices(const SocProfile& profile, const std::vector<std::string>& units) {
    std::vector<DeviceRef> out;
    std::vector<std::string> names = units;
    if (names.empty())
        for (const SocUnit& u : profile.units) names.push_back(u.name);
    for (const std::string& n : names) {
        const SocUnit& u = profile.units[profile.unit_index(n)];
        DeviceRef d;
        d.provider = nullptr;
        d.index = 0;
        hetero_device_props& p = d.props;
        p.struct_size = sizeof(hetero_device_props);
        p.abi_version = HETERO_ABI_VERSION;
        p.kind = u.kind;
        p.flags = HETERO_DEVICE_FLAG_UNIFIED_MEMORY | HETERO_DEVICE_FLAG_SIMULATED_TIME | (u.has_npu ? HETERO_DEVICE_FLAG_STATIC_SHAPES : 0u);
        copy_name(p.name, sizeof p.name, u.name);
        copy_name(p.driver, sizeof p.driver, "simulated: " + profile.name);
        copy_name(p.resource, sizeof p.resource, "soc:" + profile.id + ":" + u.name);
        p.peak_gflops = u.fp32_gflops.value;
        p.peak_bandwidth_gbs = u.bandwidth_gbs.value;
        p.launch_seconds_hint = u.launch_us.value * 1e-6;
        out.push_back(d);
    }
    return out;
}

SocCostModel::SocCostModel(SocProfile profile, const std::vector<DeviceRef>& devices) : profile_(std::move(profile)) {
    for (const DeviceRef& d : devices) unit_of_.push_back(profile_.unit_index(d.props.name));
}

SocCostModel::Work SocCostModel::work(size_t device, const OpShape& s) const {
    const SocUnit& u = unit(device);
    Work w;
    w.bytes = s.bytes();
    double rate = 0, flops = s.flops();
    if (s.op == HETERO_OP_MATMUL) {
        const bool q = quantised(s.dtype);
        if (u.kind == HETERO_DEVICE_NPU && u.runs("matmul_w8a8") && u.int8_gops.value > 0) w.op = "matmul_w8a8", rate = u.int8_gops.value;
        else if (u.kind == HETERO_DEVICE_CPU && q) w.op = "matmul_w8a8", rate = u.int8_gops.value;
        else if (s.dtype == HETERO_DTYPE_F32 && u.kind != HETERO_DEVICE_NPU) w.op = "matmul_f32", rate = u.fp32_gflops.value;
        else w.op = q && u.kind == HETERO_DEVICE_GPU ? "matmul_w4a16" : "matmul_f16", rate = u.fp16_gflops.value;
        if (u.has_npu) {
            const SocNpu& n = u.npu;
            const int64_t nt = round_up(s.n, int64_t(n.tile_rows.value)), mt = round_up(s.m, int64_t(n.tile_cols.value));
            const double order = s.n == 1 ? 1.0 : std::clamp(n.order_knee_rows.value / double(s.n), 1.0, n.order_penalty_max.value);
            const double shape = std::clamp(double(s.k) / double(std::max<int64_t>(1, s.m)), 1.0, n.shape_penalty_max.value);
            flops = 2.0 * double(nt) * double(s.k) * double(mt) * order * shape;
        }
    } else {
        w.op = sdk::op_name(s.op);
        rate = u.fp16_gflops.value > 0 ? u.fp16_gflops.value : u.fp32_gflops.value;
    }
    if (w.op.empty() || !u.runs(w.op) || !(rate > 0)) return w;
    w.supported = true;
    w.compute_seconds = flops / (rate * 1e9);
    return w;
}

double SocCostModel::node_seconds(size_t device, const OpShape& shape) const {
    const Work w = work(device, shape);
    if (!w.supported) return -1;
    return std::max(w.compute_seconds, w.bytes / (bandwidth_gbs(device) * 1e9));
}

double SocCostModel::launch_seconds(size_t device) const { return (unit(device).launch_us.value + profile_.memory.sync_us.value) * 1e-6; }

double SocCostModel::transfer_seconds(size_t from, size_t to, uint64_t bytes) const {
    // Units of a SoC share DRAM: a hand-over is a buffer both map (the
    // session imports host memory without a copy); only a merge copies.
    (void)bytes;
    return from == to ? 0.0 : 0.0;
}

bool SocCostModel::prepared(size_t device, int64_t n) const {
    const SocUnit& u = unit(device);
    if (!u.has_npu) return true;
    return std::find(u.npu.prepared_tokens.begin(), u.npu.prepared_tokens.end(), n) != u.npu.prepared_tokens.end();
}

double SocCostModel::compile_seconds_for(size_t device, double mflop) const {
    const SocUnit& u = unit(device);
    if (!u.has_npu) return 0;
    return (u.npu.compile_ms_base.value + u.npu.compile_ms_per_mflop.value * mflop) * 1e-3;
}

double SocCostModel::compile_seconds(size_t device) const {
    if (chunk_tokens_ <= 0 || prepared(device, chunk_tokens_)) return 0;
    return compile_seconds_for(device, chunk_mflop_);
}

void SocCostModel::set_prefill_chunk(int64_t tokens, double mflop) {
    chunk_tokens_ = tokens;
    chunk_mflop_ = mflop;
}

int64_t SocCostModel::row_align(size_t device) const {
    const SocUnit& u = unit(device);
    return u.has_npu ? int64_t(u.npu.row_align.value) : 32;
}

std::string SocCostModel::source(size_t device) const {
    return fmt::format("simulated from SoC profile {} unit {}", profile_.id, unit(device).name);
}

}  // namespace hetero
