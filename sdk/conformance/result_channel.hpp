// The line protocol between the conformance tool's child (which loads the
// plugin and runs the cases) and its parent (which reports): one record per
// line, fields separated by tabs, with tabs, newlines and backslashes escaped
// so a provider's error message can hold anything.
#pragma once

#include <string>
#include <vector>

namespace hetero::conformance {

enum class RecordKind : char {
    Phase = 'P',    // the child starts a step: fields {what it is doing}
    Device = 'D',   // a device's cases begin: {device, title line}
    Start = 'S',    // a case begins: {device, case index}
    Result = 'R',   // a case ended: {device, case index, verdict, skip op, skip dtype, seconds, message}
    Need = 'N',     // one row of --model's table: {op, dtypes, shapes, covered, reason}
    Refused = 'X',  // the plugin did not load or start, cleanly: {message}
    Done = 'E'      // the child reached its verdict: {}
};

struct Record {
    RecordKind kind = RecordKind::Phase;
    std::vector<std::string> fields;
    // Field i, or "" when the record is short (a record from an older or broken child).
    const std::string& field(size_t i) const;
};

std::string encode_record(const Record& r);  // one line, '\n' included

// Splits a byte stream into records; bytes may arrive in any pieces.
class RecordReader {
public:
    void feed(const char* data, size_t size) { pending_.append(data, size); }
    bool next(Record& out);  // false: no complete line yet

private:
    std::string pending_;
};

// Writes records to a file descriptor (the child's end of the pipe).
class RecordWriter {
public:
    explicit RecordWriter(int fd) : fd_(fd) {}
    void send(RecordKind kind, std::vector<std::string> fields = {});

private:
    int fd_;
};

}  // namespace hetero::conformance
