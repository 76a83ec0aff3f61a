#include <hetero/error.hpp>
#include <hetero/runtime/trace.hpp>

#include "trace_tracks.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

namespace hetero {

void TraceRecorder::add(Slice s) {
    std::lock_guard<std::mutex> lock(mu_);
    slices_.push_back(std::move(s));
}

std::vector<TraceRecorder::Slice> TraceRecorder::slices() const {
    std::lock_guard<std::mutex> lock(mu_);
    return slices_;
}

std::vector<TraceRecorder::Slice> TraceRecorder::slices(size_t from) const {
    std::lock_guard<std::mutex> lock(mu_);
    return {slices_.begin() + long(std::min(from, slices_.size())), slices_.end()};
}

size_t TraceRecorder::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return slices_.size();
}

std::vector<TraceRecorder::Accuracy> TraceRecorder::accuracy(const std::string& category) const {
    std::map<std::string, std::vector<double>> errors;
    std::map<std::string, Accuracy> acc;
    for (const Slice& s : slices()) {
        if (s.category != category || s.predicted_seconds < 0 || s.seconds <= 0) continue;
        Accuracy& a = acc[s.track];
        a.track = s.track;
        a.count += 1;
        a.measured += s.seconds;
        a.simulated = a.simulated || s.simulated;
        a.predicted += s.predicted_seconds;
        errors[s.track].push_back(std::abs(s.seconds - s.predicted_seconds) / s.seconds);
    }
    std::vector<Accuracy> out;
    for (auto& [track, a] : acc) {
        auto& e = errors[track];
        std::sort(e.begin(), e.end());
        a.median_abs_error = e.size() % 2 ? e[e.size() / 2] : 0.5 * (e[e.size() / 2 - 1] + e[e.size() / 2]);
        out.push_back(a);
    }
    return out;
}

std::map<std::string, TraceRecorder::Total> TraceRecorder::totals(const std::string& category) const {
    std::map<std::string, Total> out;
    for (const Slice& s : slices()) {
        if (s.category != category) continue;
        Total& t = out[s.track];
        t.count += 1;
        t.seconds += s.seconds;
        t.bytes += s.bytes;
    }
    return out;
}

std::string TraceRecorder::to_json() const {
    using nlohmann::json;
    const std::vector<Slice> all = slices();
    // One "process" (hetero) with one thread track per device, named.
    std::map<std::string, int> tids;
    for (const Slice& s : all) tids.emplace(s.track, 0);
    json events = trace_tracks::number_tracks(tids, "hetero", "");
    for (const Slice& s : all) {
        json e = {{"ph", "X"},
                  {"pid", 1},
                  {"tid", tids[s.track]},
                  {"name", s.name},
                  {"cat", s.category},
                  {"ts", std::chrono::duration<double, std::micro>(s.start - origin_).count()},
                  {"dur", s.seconds * 1e6}};
        json args = {{s.simulated ? "simulated_us" : "measured_us", s.seconds * 1e6}};
        if (s.simulated) {
            args["simulated"] = true;
            if (s.host_seconds >= 0) args["host_us"] = s.host_seconds * 1e6;
        }
        if (s.bytes) args["bytes"] = s.bytes;
        if (s.predicted_seconds >= 0) args["predicted_us"] = s.predicted_seconds * 1e6;
        e["args"] = args;
        events.push_back(e);
    }
    return json({{"traceEvents", events}, {"displayTimeUnit", "ms"}}).dump();
}

void TraceRecorder::write(const std::string& path) const {
    const std::string text = to_json();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(text.data(), std::streamsize(text.size())) || !out.flush())
        throw Error("cannot write trace file " + path);
}

}  // namespace hetero
