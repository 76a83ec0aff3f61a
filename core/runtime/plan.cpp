#include <hetero/runtime/plan.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero {

std::string DeviceRef::label() const { return fmt::format("{}:{}", provider ? provider->name() : "?", index); }

Plan plan_even_layers(int n_layer, const std::vector<DeviceRef>& devices) {
    if (devices.empty()) throw Error("no device to run the model on");
    Plan plan;
    const int n_dev = std::min<int>(int(devices.size()), std::max(1, n_layer));
    int begin = 0;
    for (int d = 0; d < n_dev; ++d) {
        const int count = n_layer / n_dev + (d < n_layer % n_dev ? 1 : 0);
        Segment s;
        s.device = devices[size_t(d)];
        s.layer_begin = begin;
        s.layer_end = begin + count;
        s.embedding = d == 0;
        s.head = d == n_dev - 1;
        begin += count;
        plan.segments.push_back(s);
    }
    return plan;
}

std::string Plan::describe() const {
    std::string s;
    for (const auto& seg : segments) {
        std::string what;
        if (seg.embedding) what += "embedding, ";
        if (seg.layer_end > seg.layer_begin)
            what += seg.layer_end - seg.layer_begin == 1 ? fmt::format("layer {}", seg.layer_begin)
                                                         : fmt::format("layers {}-{}", seg.layer_begin, seg.layer_end - 1);
        if (seg.head) what += (seg.layer_end > seg.layer_begin ? ", " : "") + std::string("output head");
        s += fmt::format("{}{} ({}): {}", s.empty() ? "" : "\n", seg.device.label(), seg.device.props.name, what);
    }
    return s;
}

}  // namespace hetero
