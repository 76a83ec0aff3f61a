// hetero calibrate: records the activation ranges a device that quantises
// activations to int8 needs for shadow outlier execution (llm.npu §3.3).
// Every matmul runs on that device in calibration mode (float results, the
// ranges of its inputs recorded per weight tensor in the device's cache);
// later runs take their outlier thresholds from there.
#include "commands.hpp"
#include "common.hpp"

#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero::cli {

namespace {

struct CalibrateOptions : TextWindowOptions {
    std::string device;
};

void calibrate(CalibrateOptions o) {
    if (o.providers.providers.empty()) o.providers.providers = "npu_emu,cpu";
    o.providers.option_overrides["npu_emu"]["outliers"] = "calibrate";
    Runtime rt = open_runtime(o.providers);
    const auto dev = std::find_if(rt.devices.begin(), rt.devices.end(), [&](const DeviceRef& d) {
        return o.device.empty() ? d.provider->name() == "npu_emu" : d.label() == o.device;
    });
    if (dev == rt.devices.end())
        throw Error(o.device.empty() ? std::string("no npu_emu device is loaded (calibration records ranges for it)")
                                     : fmt::format("device {} is not loaded", o.device));
    const std::string text_path = o.text_file.empty() ? shipped_file_path("text/calibration.txt") : o.text_file;
    OpenedModel m = open_model(o.model.empty() ? default_model_path() : o.model, o.tokenizer);
    const std::vector<int32_t> tokens = m.tokenizer->encode(read_text_file(text_path), true);
    SessionOptions so;
    so.n_ctx = context_length(m.file.hparams, o.window);
    const int32_t window = std::min(o.window, so.n_ctx);
    so.max_batch = window;
    so.cache_type = CacheType::f32;
    so.all_logits = true;  // the head sees every row, as the layers do
    const PlanRequest req = plan_request(so, so.n_ctx, window, 0);
    PlanConstraints pins = rt.config.plan;
    pins.pin_matmuls(0, -1, dev->label());
    const PlannedRun planned = plan_on_devices(rt.devices, pins, m.file, req);
    {
        // The device records when its executables are released, with the session.
        Session session(m.file, planned.plan, so);
        for (const std::vector<int32_t>& w : token_windows(tokens, window)) session.forward(w, 0);
    }
    fmt::print("calibrated the matmuls of {} on {} over {} tokens of {} (windows of {})\n", m.path, dev->label(), tokens.size(), text_path, window);
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
    auto o = std::make_shared<CalibrateOptions>();
    CLI::App* cmd = add_model_command(app, "calibrate", "record activation ranges for npu_emu's shadow outlier execution", *o);
    cmd->add_option("-f,--file", o->text_file, "calibration text (default: the shipped models/text/calibration.txt)");
    cmd->add_option("--window", o->window, "tokens per forward pass")->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--device", o->device, "the device to calibrate (default: the npu_emu device)");
    o->providers.add_to(*cmd);
    cmd->callback([o] { calibrate(*o); });
}

}  // namespace hetero::cli
