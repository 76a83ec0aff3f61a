// The Chrome trace format's metadata events, shared by the measured trace
// (trace.cpp) and the simulated one (sim/simulator.cpp): one process, one
// named thread track per device.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

namespace hetero::trace_tracks {

// Numbers the tracks named in `tids` 1, 2, ... in name order and returns the
// events naming the process `process` and each track (name + `suffix`).
inline nlohmann::json number_tracks(std::map<std::string, int>& tids, const std::string& process, const std::string& suffix) {
    int next = 1;
    for (auto& [track, tid] : tids) tid = next++;
    nlohmann::json events = nlohmann::json::array();
    events.push_back({{"ph", "M"}, {"pid", 1}, {"name", "process_name"}, {"args", {{"name", process}}}});
    for (const auto& [track, tid] : tids)
        events.push_back({{"ph", "M"}, {"pid", 1}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", track + suffix}}}});
    return events;
}

}  // namespace hetero::trace_tracks
