// --model on a provider: asks op_supported every node of each NeedRow (over
// the C ABI alone, in the child) and prints the table in the parent.
#pragma once

#include "model_needs.hpp"
#include "result_channel.hpp"

#include <optional>
#include <string>
#include <vector>

namespace hetero::conformance {

// Child: one Need record per row: {device, op, dtypes, shapes, "yes"/"no", reason}.
void send_model_coverage(const hetero_ep_api& api, hetero_ep* ep, uint32_t device, const std::vector<NeedRow>& rows, RecordWriter& out);

// Parent: collects the Need records and prints the table and the verdict.
class ModelCoverageReport {
public:
    explicit ModelCoverageReport(std::string plugin) : plugin_(std::move(plugin)) {}
    void on_record(const Record& r);
    // Returns the exit status: kExitPass when every row is covered on every device.
    int conclude(const std::optional<std::string>& refused, const std::optional<std::string>& abnormal, bool done);

private:
    void print_device();
    std::string plugin_;
    std::string title_;
    std::vector<Record> rows_;  // the current device's
    int uncovered_ = 0, devices_ = 0;
};

}  // namespace hetero::conformance
