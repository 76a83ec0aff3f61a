#include "result_channel.hpp"

#include <cerrno>
#include <unistd.h>

namespace hetero::conformance {
namespace {

std::string escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '\t') out += "\\t";
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else out += c;
    }
    return out;
}

std::string unescape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        out += c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
    }
    return out;
}

}  // namespace

const std::string& Record::field(size_t i) const {
    static const std::string empty;
    return i < fields.size() ? fields[i] : empty;
}

std::string encode_record(const Record& r) {
    std::string line(1, char(r.kind));
    for (const auto& f : r.fields) line += '\t' + escape(f);
    return line + '\n';
}

bool RecordReader::next(Record& out) {
    const size_t eol = pending_.find('\n');
    if (eol == std::string::npos) return false;
    const std::string line = pending_.substr(0, eol);
    pending_.erase(0, eol + 1);
    out = Record{};
    if (line.empty()) return next(out);
    out.kind = RecordKind(line[0]);
    size_t at = 1;
    while (at < line.size() && line[at] == '\t') {
        const size_t end = line.find('\t', at + 1);
        out.fields.push_back(unescape(line.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1)));
        at = end == std::string::npos ? line.size() : end;
    }
    return true;
}

void RecordWriter::send(RecordKind kind, std::vector<std::string> fields) {
    const std::string line = encode_record(Record{kind, std::move(fields)});
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the parent is gone; nothing left to tell
        done += size_t(n);
    }
}

}  // namespace hetero::conformance
