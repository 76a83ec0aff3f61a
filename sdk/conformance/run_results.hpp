// What the parent learns about a run from its child's records: the outcome
// of every case on every device, and how the child ended. The console
// report and the JUnit file are both written from this.
#pragma once

#include "child_process.hpp"
#include "result_channel.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetero::conformance {

enum class Verdict { NotRun, Passed, Failed, Skipped };

struct CaseOutcome {
    Verdict verdict = Verdict::NotRun;
    std::string message;
    std::string skip_op, skip_dtype;  // Skipped: what the provider refused
    double seconds = 0.0;
};

struct DeviceRun {
    uint32_t device = 0;
    std::string title;
    std::vector<CaseOutcome> outcomes;  // one per case, in the order of RunResults::case_names
};

struct Counts {
    int passed = 0, failed = 0, skipped = 0, not_run = 0;
    void add(Verdict v);
    int ran() const { return passed + failed; }
};

// One case on one device: RunResults::devices[run].outcomes[index].
struct CaseRef {
    size_t run = 0, index = 0;
};

struct RunResults {
    std::string plugin;                   // as given on the command line
    std::vector<std::string> case_names;  // grouped by family (families in order of first appearance)
    std::vector<bool> compares;           // per case: it runs ops and compares them with the reference
    std::vector<DeviceRun> devices;
    std::string phase;                    // the step the child announced last
    std::optional<std::string> refused;   // the plugin did not load or start (it said why)
    bool done = false;                    // the child reached its verdict
    int running_device = -1;              // index into devices of the case begun last and not ended
    long running_case = -1;
    std::optional<std::string> abnormal;  // how the child ended without a verdict, when it did

    // Applies one record of the child's; returns the case it completed, if any.
    std::optional<CaseRef> apply(const Record& r);
    // Records how the child ended: abnormal is set unless it reached its verdict and exited 0.
    void finish(const ChildEnd& end);
    Counts total() const;
    // Cases that ran an op and compared it (passed or failed): zero means
    // the provider refused every op, whatever the housekeeping cases say.
    int compared() const;
};

// Reorders cases so each family's cases run together (stable within a family).
std::vector<std::string> grouped_by_family(std::vector<std::string> names);

}  // namespace hetero::conformance
