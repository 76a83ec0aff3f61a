#include <hetero/runtime/cost_model.hpp>

#include <cstring>
#include <map>

namespace hetero {

std::vector<int> resource_ids(const std::vector<DeviceRef>& devices) {
    std::map<std::string, int> named;
    std::vector<int> ids;
    ids.reserve(devices.size());
    int next = 0;
    for (const DeviceRef& d : devices) {
        const hetero_device_props& p = d.props;
        std::string name;
        if (HETERO_HAS_FIELD(hetero_device_props, &p, resource)) name.assign(p.resource, strnlen(p.resource, sizeof p.resource));
        // A provider of ABI 1.0 (or one that leaves it empty): what runs on
        // the CPU or in the host's memory is taken to share the host.
        if (name.empty() && (p.kind == HETERO_DEVICE_CPU || (p.flags & HETERO_DEVICE_FLAG_UNIFIED_MEMORY))) name = "host";
        if (name.empty()) {
            ids.push_back(next++);  // unknown: its own resource
            continue;
        }
        const auto [it, inserted] = named.emplace(name, next);
        if (inserted) ++next;
        ids.push_back(it->second);
    }
    return ids;
}

}  // namespace hetero
