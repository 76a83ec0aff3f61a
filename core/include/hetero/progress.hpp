// Progress of long operations (writing a generated or converted model,
// preparing a session's devices). The core reports; whoever installed a
// reporter (the CLI's terminal bar, a test) decides what to show.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace hetero {

class ProgressReporter {
public:
    virtual ~ProgressReporter() = default;
    // One operation at a time per thread; `total` is in the operation's own
    // units (bytes, tasks), `unit` names them ("B" is shown as bytes).
    virtual void begin(const std::string& what, uint64_t total, const std::string& unit) = 0;
    virtual void update(uint64_t done) = 0;
    virtual void end() = 0;
};

// Replaces the process-wide reporter; nullptr (the default) reports nothing.
void set_progress_reporter(std::shared_ptr<ProgressReporter> reporter);

// An operation in progress: begin on construction, end on destruction
// (also when an exception unwinds through it).
class ProgressTask {
public:
    ProgressTask(const std::string& what, uint64_t total, const std::string& unit = "B");
    ~ProgressTask();
    ProgressTask(const ProgressTask&) = delete;
    ProgressTask& operator=(const ProgressTask&) = delete;
    void advance(uint64_t n);

private:
    std::shared_ptr<ProgressReporter> reporter_;
    uint64_t done_ = 0;
};

}  // namespace hetero
