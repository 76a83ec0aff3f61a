#include "junit_report.hpp"

#include "conformance.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

namespace hetero::conformance {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t utf8_length(const std::string& s, size_t i) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
    return n;
}

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", s);
    return buf;
}

struct Suite {
    std::string name;
    Counts counts;
    double seconds = 0.0;
    std::string body;
};

}  // namespace

std::string xml_escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const char c = text[i];
        const auto u = static_cast<unsigned char>(c);
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else if (c == '\'') out += "&apos;";
        else if (c == '\n') out += "&#10;";  // kept in attributes, which would fold a raw newline
        else if (c == '\t') out += "&#9;";
        else if (u < 0x20 || u == 0x7f) out += '?';
        else if (u >= 0x80) {
            const size_t n = utf8_length(text, i);
            if (n == 0) {
                out += '?';
                ++i;
                continue;
            }
            out.append(text, i, n);
            i += n;
            continue;
        } else out += c;
        ++i;
    }
    return out;
}

std::string junit_xml(const RunResults& r) {
    std::vector<Suite> suites;
    std::map<std::string, size_t> suite_of;
    for (const DeviceRun& run : r.devices)
        for (size_t i = 0; i < run.outcomes.size(); ++i) {
            const CaseOutcome& o = run.outcomes[i];
            if (o.verdict == Verdict::NotRun) continue;
            const std::string family = family_of(r.case_names[i]);
            const std::string suite_name = r.devices.size() > 1 ? family + " [device " + std::to_string(run.device) + "]" : family;
            auto [it, added] = suite_of.emplace(suite_name, suites.size());
            if (added) suites.push_back(Suite{suite_name, {}, 0.0, {}});
            Suite& s = suites[it->second];
            s.counts.add(o.verdict);
            s.seconds += o.seconds;
            s.body += "    <testcase classname=\"" + xml_escape(family) + "\" name=\"" + xml_escape(r.case_names[i]) + "\" time=\"" + seconds(o.seconds) + "\"";
            if (o.verdict == Verdict::Passed) {
                s.body += "/>\n";
                continue;
            }
            const char* tag = o.verdict == Verdict::Skipped ? "skipped" : "failure";
            s.body += ">\n      <" + std::string(tag) + " message=\"" + xml_escape(o.message) + "\"/>\n    </testcase>\n";
        }
    if (r.abnormal) {
        Suite s{"process", {}, 0.0, {}};
        s.counts.failed = 1;
        s.body = "    <testcase classname=\"process\" name=\"" + xml_escape(r.plugin) + "\" time=\"0\">\n      <failure message=\"" +
                 xml_escape(*r.abnormal) + "\"/>\n    </testcase>\n";
        suites.push_back(std::move(s));
    }
    Counts total;
    double total_seconds = 0.0;
    std::string body;
    for (const Suite& s : suites) {
        total.passed += s.counts.passed;
        total.failed += s.counts.failed;
        total.skipped += s.counts.skipped;
        total_seconds += s.seconds;
        const int tests = s.counts.passed + s.counts.failed + s.counts.skipped;
        body += "  <testsuite name=\"" + xml_escape(s.name) + "\" tests=\"" + std::to_string(tests) + "\" failures=\"" +
                std::to_string(s.counts.failed) + "\" errors=\"0\" skipped=\"" + std::to_string(s.counts.skipped) + "\" time=\"" +
                seconds(s.seconds) + "\">\n" + s.body + "  </testsuite>\n";
    }
    const int tests = total.passed + total.failed + total.skipped;
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hetero-conformance " + xml_escape(r.plugin) + "\" tests=\"" +
           std::to_string(tests) + "\" failures=\"" + std::to_string(total.failed) + "\" errors=\"0\" skipped=\"" +
           std::to_string(total.skipped) + "\" time=\"" + seconds(total_seconds) + "\">\n" + body + "</testsuites>\n";
}

std::string write_junit(const std::string& path, const RunResults& results) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + path + ": " + std::strerror(errno);
    out << junit_xml(results);
    out.close();
    if (!out) return "cannot write " + path + ": " + std::strerror(errno);
    return "";
}

}  // namespace hetero::conformance
