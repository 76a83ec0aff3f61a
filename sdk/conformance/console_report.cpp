#include "console_report.hpp"

#include "conformance.hpp"

#include <cstdio>
#include <map>

namespace hetero::conformance {
namespace {

const char* verdict_word(Verdict v) {
    switch (v) {
        case Verdict::Passed: return "PASS";
        case Verdict::Failed: return "FAIL";
        case Verdict::Skipped: return "SKIP";
        case Verdict::NotRun: return "NOT RUN";
    }
    return "?";
}

// [first, end) of the family that case i belongs to.
std::pair<size_t, size_t> family_range(const std::vector<std::string>& names, size_t i) {
    const std::string f = family_of(names[i]);
    size_t first = i, end = i + 1;
    while (first > 0 && family_of(names[first - 1]) == f) --first;
    while (end < names.size() && family_of(names[end]) == f) ++end;
    return {first, end};
}

// "q4_K, q6_K" when every refusal is of the family's own op, else "matmul q4_K, attention f16".
std::string skip_summary(const std::string& family, const std::vector<CaseOutcome>& outcomes, size_t first, size_t end) {
    std::vector<std::string> seen;
    bool other_ops = false;
    for (size_t i = first; i < end; ++i)
        if (outcomes[i].verdict == Verdict::Skipped && outcomes[i].skip_op != family && !outcomes[i].skip_op.empty()) other_ops = true;
    for (size_t i = first; i < end; ++i) {
        const CaseOutcome& o = outcomes[i];
        if (o.verdict != Verdict::Skipped || o.skip_op.empty()) continue;
        const std::string what = other_ops ? o.skip_op + " " + o.skip_dtype : o.skip_dtype;
        bool known = false;
        for (const auto& s : seen) known = known || s == what;
        if (!known) seen.push_back(what);
    }
    std::string out;
    for (const auto& s : seen) out += (out.empty() ? "" : ", ") + s;
    return out;
}

}  // namespace

void ConsoleReport::on_record(const Record& r, const std::optional<CaseRef>& completed) {
    if (r.kind == RecordKind::Device) std::printf("%s\n", r.field(1).c_str());
    if (r.kind == RecordKind::Result && completed) {
        const DeviceRun& run = results_.devices[completed->run];
        const size_t i = completed->index;
        const CaseOutcome& o = run.outcomes[i];
        if (verbose_ || o.verdict == Verdict::Failed)
            std::printf("%s %s [device %u]: %s\n", verdict_word(o.verdict), results_.case_names[i].c_str(), run.device, o.message.c_str());
        const auto [first, end] = family_range(results_.case_names, i);
        if (i + 1 == end) print_family(run, first, end, false);
        last_device_ = int(completed->run);
        last_case_ = long(i);
    }
    std::fflush(stdout);
}

void ConsoleReport::print_family(const DeviceRun& run, size_t first, size_t end, bool interrupted) const {
    Counts c;
    for (size_t i = first; i < end; ++i) c.add(run.outcomes[i].verdict);
    const std::string family = family_of(results_.case_names[first]);
    std::string line = "  " + family + std::string(family.size() < 14 ? 14 - family.size() : 1, ' ');
    char counts[96];
    std::snprintf(counts, sizeof counts, "passed %4d  failed %3d  skipped %4d", c.passed, c.failed, c.skipped);
    line += counts;
    const std::string skips = skip_summary(family, run.outcomes, first, end);
    if (!skips.empty()) line += " (op_supported said no: " + skips + ")";
    if (interrupted) line += "  [interrupted: " + std::to_string(c.not_run) + " not run]";
    std::printf("%s\n", line.c_str());
}

void ConsoleReport::print_table() const {
    // Families in run order, summed over devices.
    std::vector<std::string> families;
    std::map<std::string, Counts> by_family;
    for (const auto& name : results_.case_names) {
        const std::string f = family_of(name);
        if (by_family.emplace(f, Counts{}).second) families.push_back(f);
    }
    Counts total;
    for (const auto& run : results_.devices)
        for (size_t i = 0; i < run.outcomes.size(); ++i) {
            by_family[family_of(results_.case_names[i])].add(run.outcomes[i].verdict);
            total.add(run.outcomes[i].verdict);
        }
    const bool not_run = total.not_run > 0;
    std::printf("\n%-16s %7s %7s %8s%s\n", "family", "passed", "failed", "skipped", not_run ? "  not run" : "");
    auto row = [&](const std::string& label, const Counts& c) {
        std::printf("%-16s %7d %7d %8d", label.c_str(), c.passed, c.failed, c.skipped);
        if (not_run) std::printf(" %8d", c.not_run);
        std::printf("\n");
    };
    for (const auto& f : families) row(f, by_family[f]);
    row("total", total);
}

int ConsoleReport::conclude() {
    const RunResults& r = results_;
    if (r.abnormal && !r.devices.empty()) {
        // The family the child was in when it ended.
        const size_t d = r.running_device >= 0 ? size_t(r.running_device) : last_device_ >= 0 ? size_t(last_device_) : r.devices.size() - 1;
        const long i = r.running_case >= 0 ? r.running_case : last_case_ + 1;
        if (i >= 0 && size_t(i) < r.case_names.size() && d < r.devices.size()) {
            const auto [first, end] = family_range(r.case_names, size_t(i));
            print_family(r.devices[d], first, end, true);
        }
    }
    if (r.abnormal && !r.devices.empty()) std::printf("FAIL %s: %s\n", r.plugin.c_str(), r.abnormal->c_str());
    if (!r.devices.empty()) print_table();

    const Counts c = r.total();
    std::string counts = std::to_string(c.passed) + " passed, " + std::to_string(c.failed) + " failed, " + std::to_string(c.skipped) + " skipped";
    if (c.not_run) counts += ", " + std::to_string(c.not_run) + " not run";
    int status = kExitPass;
    std::string verdict;
    if (r.refused && !r.abnormal) {
        status = kExitNotLoaded;
        verdict = "NOT LOADED: " + r.plugin + ": " + *r.refused;
    } else if (r.abnormal) {
        status = kExitFailed;
        verdict = r.devices.empty() ? "FAIL: " + r.plugin + ": " + *r.abnormal : "FAIL: " + counts + " (" + r.plugin + "): " + *r.abnormal;
    } else if (c.failed > 0) {
        status = kExitFailed;
        verdict = "FAIL: " + counts + " (" + r.plugin + ")";
    } else if (r.compared() == 0) {
        status = kExitNothingRan;
        verdict = "NOTHING RAN: " + counts + " (" + r.plugin + "): " +
                  (r.case_names.empty() ? "no case matches the filter" : "the provider refused every case that runs an op (op_supported)");
    } else {
        verdict = "PASS: " + counts + " (" + r.plugin + ")";
    }
    std::printf("\n%s\n", verdict.c_str());
    std::fflush(stdout);
    return status;
}

}  // namespace hetero::conformance
