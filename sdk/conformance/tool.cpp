// hetero-conformance: checks one provider plugin against the reference ops,
// over the C ABI only. The plugin is loaded in a child process, so one that
// exits, crashes or hangs is reported as a failure rather than ending the
// run (see README.md for the output, the exit statuses and --model).
//
//   hetero-conformance PLUGIN.so [--device N] [--filter SUBSTRING] [--exclude SUBSTRING] [--option key=value ...]
//                      [-v] [--junit FILE.xml] [--timeout SECONDS]
//   hetero-conformance PLUGIN.so --model MODEL.gguf
//   hetero-conformance --list [--filter SUBSTRING] [--exclude SUBSTRING]
#include "child_process.hpp"
#include "child_work.hpp"
#include "console_report.hpp"
#include "junit_report.hpp"
#include "model_coverage.hpp"
#include "run_results.hpp"
#include "tool_options.hpp"

#include <cstdio>
#include <map>

using namespace hetero::conformance;

namespace {

int usage(const std::string& why) {
    std::fprintf(stderr, "hetero-conformance: %s\n%s", why.c_str(), kUsage);
    return kExitNotLoaded;
}

// The selected cases, each family's together.
std::vector<Case> selected_cases(const std::string& filter, const std::string& exclude) {
    std::map<std::string, Case> by_name;
    std::vector<std::string> names;
    for (auto& c : all_cases())
        if ((filter.empty() || c.name.find(filter) != std::string::npos) && (exclude.empty() || c.name.find(exclude) == std::string::npos)) {
            names.push_back(c.name);
            by_name.emplace(c.name, std::move(c));
        }
    std::vector<Case> cases;
    for (const auto& n : grouped_by_family(names)) cases.push_back(std::move(by_name.at(n)));
    return cases;
}

int check_cases(const ToolOptions& options) {
    const std::vector<Case> cases = selected_cases(options.filter, options.exclude);
    RunResults results;
    results.plugin = options.plugin;
    for (const auto& c : cases) {
        results.case_names.push_back(c.name);
        results.compares.push_back(c.kind == CaseKind::Compare);
    }
    ConsoleReport console(results, options.verbose);
    const ChildEnd end = run_in_child([&](RecordWriter& out) { return run_cases_child(options, cases, out); }, options.timeout_seconds,
                                      [&](const Record& r) { console.on_record(r, results.apply(r)); });
    results.finish(end);
    const int status = console.conclude();
    if (!options.junit_path.empty()) {
        if (const std::string err = write_junit(options.junit_path, results); !err.empty()) {
            std::fprintf(stderr, "hetero-conformance: %s\n", err.c_str());
            return status == kExitPass ? kExitFailed : status;
        }
    }
    return status;
}

int check_model(const ToolOptions& options) {
    std::unique_ptr<ModelNeeds> needs;
    try {
        needs = read_model_needs(options.model_path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hetero-conformance: cannot read the model %s: %s\n", options.model_path.c_str(), e.what());
        return kExitNotLoaded;
    }
    std::printf("model %s\n", needs->summary().c_str());
    RunResults results;  // tracks the phases, refusal and end; no cases
    results.plugin = options.plugin;
    ModelCoverageReport report(options.plugin);
    const ChildEnd end = run_in_child([&](RecordWriter& out) { return model_coverage_child(options, *needs, out); }, options.timeout_seconds,
                                      [&](const Record& r) {
                                          results.apply(r);
                                          report.on_record(r);
                                      });
    results.finish(end);
    if (results.abnormal) std::printf("FAIL %s: %s\n", options.plugin.c_str(), results.abnormal->c_str());
    return report.conclude(results.refused, results.abnormal, results.done);
}

}  // namespace

int main(int argc, char** argv) {
    ToolOptions options;
    if (const std::string err = parse_command_line(argc, argv, options); !err.empty()) return usage(err);
    if (options.help) {
        std::printf("hetero-conformance: checks a provider plugin against the reference ops\n%s", kUsage);
        return 0;
    }
    try {
        if (options.list) {
            for (const auto& c : selected_cases(options.filter, options.exclude)) std::printf("%s\n", c.name.c_str());
            return 0;
        }
        return options.model_path.empty() ? check_cases(options) : check_model(options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hetero-conformance: %s\n", e.what());
        return kExitFailed;
    }
}
