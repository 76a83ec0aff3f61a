// The tool's console output, written as the child's records arrive: a line
// per case with -v, else only failures; a summary line per family as soon
// as its last case ends; then a table of the families and a one-line verdict.
#pragma once

#include "run_results.hpp"

namespace hetero::conformance {

// The tool's exit statuses.
enum ExitStatus {
    kExitPass = 0,         // cases ran and none failed
    kExitFailed = 1,       // a case failed, or the plugin's process crashed, exited or hung
    kExitNotLoaded = 2,    // the plugin did not load or start (or the command line is wrong)
    kExitNothingRan = 3,   // no case ran: every one was skipped, or none was selected
    kExitNotCovered = 4    // --model: the provider does not cover the model
};

class ConsoleReport {
public:
    ConsoleReport(const RunResults& results, bool verbose) : results_(results), verbose_(verbose) {}
    // After results.apply(r): prints what r adds. `completed` is apply's answer.
    void on_record(const Record& r, const std::optional<CaseRef>& completed);
    // After results.finish(): the interrupted family, the table and the verdict. Returns the exit status.
    int conclude();

private:
    void print_family(const DeviceRun& run, size_t first, size_t end, bool interrupted) const;
    void print_table() const;
    const RunResults& results_;
    bool verbose_;
    int last_device_ = -1;   // where the last result was (device run index, case index)
    long last_case_ = -1;
};

}  // namespace hetero::conformance
