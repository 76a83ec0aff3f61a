// Placement rules a user gives in the config's "plan" object: layers or
// matmuls pinned to a device, matmuls cut by rows in fixed proportions
// (as llama.cpp's --override-tensor pins tensors).
#pragma once

#include <hetero/runtime/model_graph.hpp>

#include <optional>
#include <string>
#include <vector>

namespace hetero {

// Placement rules from the config's "plan" object (see config.hpp).
struct PlanConstraints {
    struct Pin {  // layers [first, last] (or their `role` matmul) run on `device` ("cpu:0")
        int first = 0, last = 0;  // last = -1: through the head
        std::optional<Role> role;
        std::string device;
    };
    struct Split {  // matmuls of layers [first, last] (all, or `role`) cut by rows in these proportions
        int first = 0, last = 0;
        std::optional<Role> role;
        std::vector<std::string> devices;
        std::vector<double> ratio;  // same length as devices; empty = equal
    };
    std::vector<Pin> pins;
    std::vector<Split> splits;
    bool allow_splits = true;  // "splits": false keeps every matmul whole

    // Pins every matmul of layers [first, last] (last -1: through the head,
    // whose output matmul is pinned too) to `device`: "op": "matmuls".
    void pin_matmuls(int first, int last, const std::string& device) {
        for (Role r : kLayerMatmuls) pins.push_back({first, last, r, device});
        if (last == -1) pins.push_back({1 << 30, -1, Role::output, device});
    }
};

}  // namespace hetero
