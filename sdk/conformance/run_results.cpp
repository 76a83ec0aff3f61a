#include "run_results.hpp"

#include "conformance.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace hetero::conformance {

void Counts::add(Verdict v) {
    switch (v) {
        case Verdict::Passed: ++passed; break;
        case Verdict::Failed: ++failed; break;
        case Verdict::Skipped: ++skipped; break;
        case Verdict::NotRun: ++not_run; break;
    }
}

std::vector<std::string> grouped_by_family(std::vector<std::string> names) {
    std::map<std::string, size_t> first_seen;
    for (const auto& n : names) first_seen.emplace(family_of(n), first_seen.size());
    std::stable_sort(names.begin(), names.end(),
                     [&](const std::string& a, const std::string& b) { return first_seen[family_of(a)] < first_seen[family_of(b)]; });
    return names;
}

std::optional<CaseRef> RunResults::apply(const Record& r) {
    const auto device_of = [&](const std::string& field) -> DeviceRun* {
        const uint32_t d = uint32_t(std::strtoul(field.c_str(), nullptr, 10));
        for (auto& run : devices)
            if (run.device == d) return &run;
        return nullptr;
    };
    const auto case_of = [&](const std::string& field) -> long {
        const long i = std::strtol(field.c_str(), nullptr, 10);
        return i >= 0 && size_t(i) < case_names.size() ? i : -1;
    };
    switch (r.kind) {
        case RecordKind::Phase: phase = r.field(0); break;
        case RecordKind::Device: {
            DeviceRun run;
            run.device = uint32_t(std::strtoul(r.field(0).c_str(), nullptr, 10));
            run.title = r.field(1);
            run.outcomes.resize(case_names.size());
            devices.push_back(std::move(run));
            break;
        }
        case RecordKind::Start: {
            const long i = case_of(r.field(1));
            DeviceRun* run = device_of(r.field(0));
            if (!run || i < 0) break;
            running_device = int(run - devices.data());
            running_case = i;
            phase = "running case " + case_names[size_t(i)] + " on device " + std::to_string(run->device);
            break;
        }
        case RecordKind::Result: {
            const long i = case_of(r.field(1));
            DeviceRun* run = device_of(r.field(0));
            if (!run || i < 0) break;
            CaseOutcome& o = run->outcomes[size_t(i)];
            const std::string& v = r.field(2);
            o.verdict = v == "pass" ? Verdict::Passed : v == "skip" ? Verdict::Skipped : Verdict::Failed;
            o.skip_op = r.field(3);
            o.skip_dtype = r.field(4);
            o.seconds = std::strtod(r.field(5).c_str(), nullptr);
            o.message = r.field(6);
            running_device = -1;
            running_case = -1;
            return CaseRef{size_t(run - devices.data()), size_t(i)};
        }
        case RecordKind::Refused: refused = r.field(0); break;
        case RecordKind::Done: done = true; break;
        case RecordKind::Need: break;  // --model's rows; see model_report
    }
    return std::nullopt;
}

void RunResults::finish(const ChildEnd& end) {
    const bool clean = end.how == ChildEnd::How::Exited && (done ? end.exit_code == 0 : refused.has_value());
    if (clean) return;
    std::string what = "the process running the plugin " + end.describe();
    what += phase.empty() ? " before it started" : " while " + phase;
    what += done ? ", after its verdict" : ", without a verdict";
    abnormal = what;
    if (running_device >= 0 && running_case >= 0) {
        CaseOutcome& o = devices[size_t(running_device)].outcomes[size_t(running_case)];
        o.verdict = Verdict::Failed;
        o.message = "the process running the plugin " + end.describe() + " during this case";
    }
}

Counts RunResults::total() const {
    Counts c;
    for (const auto& run : devices)
        for (const auto& o : run.outcomes) c.add(o.verdict);
    return c;
}

}  // namespace hetero::conformance

namespace hetero::conformance {

int RunResults::compared() const {
    int n = 0;
    for (const auto& run : devices)
        for (size_t i = 0; i < run.outcomes.size(); ++i)
            if (i < compares.size() && compares[i] && (run.outcomes[i].verdict == Verdict::Passed || run.outcomes[i].verdict == Verdict::Failed)) ++n;
    return n;
}

}  // namespace hetero::conformance
