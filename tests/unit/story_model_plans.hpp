// The default story model (stories260K) on one cpu device, with the two plans
// the threading and soak tests run it under: every layer on the device, and
// the layers split over two entries of the same device (a hand-over between
// segments without a second device).
#pragma once

#include <hetero/registry.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/plan.hpp>

namespace hetero::test {

struct StoryModelPlans {
    OpenedModel m;
    int n_layer;
    DeviceRef dev;
    Plan one;  // every layer on dev
    Plan two;  // the layers over two entries of dev
};

inline StoryModelPlans story_model_plans(Provider* cpu) {
    OpenedModel m = open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const int n_layer = int(m.file.hparams.n_layer);
    const DeviceRef dev{cpu, 0, cpu->device_props(0)};
    Plan one = plan_single_device(n_layer, {dev}, 0);
    Plan two = plan_even_layers(n_layer, {dev, dev});
    return {std::move(m), n_layer, dev, std::move(one), std::move(two)};
}

}  // namespace hetero::test
