#include "sim_plans.hpp"

#include <hetero/error.hpp>
#include <hetero/solver/planner.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace hetero::cli {

namespace {

long find_kind(const std::vector<DeviceRef>& devices, uint32_t kind) {
    for (size_t d = 0; d < devices.size(); ++d)
        if (devices[d].props.kind == kind) return long(d);
    return -1;
}

size_t need_kind(const std::vector<DeviceRef>& devices, uint32_t kind, const std::string& plan) {
    const long d = find_kind(devices, kind);
    if (d < 0) throw Error(fmt::format("plan '{}' needs a {} unit, which the selected units lack", plan, kind == HETERO_DEVICE_NPU ? "npu" : kind == HETERO_DEVICE_GPU ? "gpu" : "cpu"));
    return size_t(d);
}

// Matmul work of one chunk (MFLOP), for the static-shape compile estimate.
double chunk_mflop(const ModelFile& model, int32_t chunk) {
    double mflop = 0;
    for (const auto& [name, w] : model.weights)
        if (name.rfind("blk.", 0) == 0 && w.shape.size() == 2) mflop += 2.0 * double(w.shape[0]) * double(w.shape[1]) * chunk / 1e6;
    return mflop;
}

Plan solved(const ModelFile& model, const std::vector<DeviceRef>& devices, SocCostModel& cost, const SimPlanRequest& r, bool splits) {
    PlanRequest req;
    req.n_ctx = r.n_ctx;
    req.prompt_len = r.prompt_len;
    req.n_generate = r.n_generate;
    req.max_batch = r.chunk;
    req.constraints.allow_splits = splits;
    cost.set_prefill_chunk(std::min(r.chunk, r.prompt_len), chunk_mflop(model, std::min(r.chunk, r.prompt_len)));
    return solve_plan(model, devices, cost, req);
}

}  // namespace

Plan make_sim_plan(const ModelFile& model, const std::vector<DeviceRef>& devices, SocCostModel& cost, const SimPlanRequest& r) {
    const int n_layer = int(model.hparams.n_layer);
    if (r.kind == "solver") return solved(model, devices, cost, r, true);
    if (r.kind == "cpu") return plan_single_device(n_layer, devices, need_kind(devices, HETERO_DEVICE_CPU, r.kind));
    if (r.kind == "gpu") return plan_single_device(n_layer, devices, need_kind(devices, HETERO_DEVICE_GPU, r.kind));
    if (r.kind == "npu") {
        // The NPU runs no attention: every matmul on it, the rest on the GPU (else the CPU).
        const size_t npu = need_kind(devices, HETERO_DEVICE_NPU, r.kind);
        long home = find_kind(devices, HETERO_DEVICE_GPU);
        if (home < 0) home = long(need_kind(devices, HETERO_DEVICE_CPU, r.kind));
        Plan p = plan_single_device(n_layer, devices, size_t(home));
        const ModelGraph g = build_model_graph(model, 1, std::max(r.n_ctx, 1), std::vector<uint32_t>(size_t(n_layer), HETERO_DTYPE_F16));
        for (const ModelNode& mn : g.nodes)
            if (mn.node.op == HETERO_OP_MATMUL && is_matmul_role(mn.role))
                for (int ph = 0; ph < kPhases; ++ph)
                    p.layers[size_t(mn.layer)].matmuls[size_t(ph)][mn.role] = {Share{npu, 0, g.tensors[size_t(mn.node.inputs[1])].desc.shape[0]}};
        return p;
    }
    if (r.kind == "layer" || r.kind == "tensor") {
        // HeteroLLM's engines: the GPU and the NPU, the CPU as control plane only.
        std::vector<DeviceRef> gn = {devices[need_kind(devices, HETERO_DEVICE_GPU, r.kind)], devices[need_kind(devices, HETERO_DEVICE_NPU, r.kind)]};
        SocCostModel sub(cost.profile(), gn);
        Plan p = solved(model, gn, sub, r, r.kind == "tensor");
        // Re-express over all devices.
        std::vector<size_t> map = {need_kind(devices, HETERO_DEVICE_GPU, r.kind), need_kind(devices, HETERO_DEVICE_NPU, r.kind)};
        Plan out = p;
        out.devices = devices;
        for (LayerPlacement& lp : out.layers) {
            lp.home = map[lp.home];
            for (auto& phase : lp.matmuls)
                for (auto& [role, shares] : phase)
                    for (Share& s : shares) s.device = map[s.device];
        }
        return out;
    }
    if (r.kind.size() > 5 && r.kind.substr(r.kind.size() - 5) == ".json") return plan_from_json_file(r.kind, devices, n_layer);
    throw Error(fmt::format("unknown plan '{}' (known: solver, gpu, npu, cpu, layer, tensor, or a FILE.json from hetero plan --json)", r.kind));
}

Plan plan_from_json_file(const std::string& path, const std::vector<DeviceRef>& devices, int n_layer) {
    std::ifstream in(path);
    if (!in) throw Error(fmt::format("cannot read plan file {}", path));
    nlohmann::json j;
    try {
        in >> j;
    } catch (const std::exception& e) {
        throw Error(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
    auto device = [&](const std::string& label) {
        for (size_t d = 0; d < devices.size(); ++d)
            if (devices[d].label() == label) return d;
        throw Error(fmt::format("{}: device '{}' is not a unit of the profile", path, label));
    };
    Plan p = plan_single_device(n_layer, devices, 0);
    const auto& layers = j.at("layers");
    if (layers.size() != size_t(n_layer + 1)) throw Error(fmt::format("{}: {} layer entries, the model needs {}", path, layers.size(), n_layer + 1));
    for (size_t l = 0; l < layers.size(); ++l) {
        p.layers[l].home = device(layers[l].at("home").get<std::string>());
        for (int ph = 0; ph < kPhases; ++ph) {
            if (!layers[l].contains(phase_name(ph))) continue;
            for (const auto& [role, shares] : layers[l].at(phase_name(ph)).items()) {
                Role rl;
                if (!role_from_name(role, rl)) throw Error(fmt::format("{}: unknown role '{}'", path, role));
                std::vector<Share> sh;
                for (const auto& s : shares) sh.push_back(Share{device(s.at("device").get<std::string>()), s.at("rows")[0].get<int64_t>(), s.at("rows")[1].get<int64_t>()});
                p.layers[l].matmuls[size_t(ph)][rl] = sh;
            }
        }
    }
    return p;
}

}  // namespace hetero::cli
