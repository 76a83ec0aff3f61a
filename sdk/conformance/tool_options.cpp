#include "tool_options.hpp"

#include <cstdlib>
#include <cstring>

namespace hetero::conformance {

const char* const kUsage =
    "usage: hetero-conformance PLUGIN.so [--device N] [--filter SUBSTRING] [--exclude SUBSTRING] [--option key=value ...]\n"
    "                          [-v] [--junit FILE.xml] [--timeout SECONDS]\n"
    "       hetero-conformance PLUGIN.so --model MODEL.gguf [--device N] [--option key=value ...]\n"
    "       hetero-conformance --list [--filter SUBSTRING] [--exclude SUBSTRING]\n"
    "exit status: 0 cases ran and none failed; 1 a case failed or the plugin crashed, exited or hung;\n"
    "             2 the plugin did not load or the command line is wrong; 3 nothing ran (every case skipped,\n"
    "             or none selected); 4 (--model) the provider does not cover the model\n";

namespace {

bool to_long(const char* s, long& out) {
    if (!s || !*s) return false;
    char* end = nullptr;
    out = std::strtol(s, &end, 10);
    return *end == '\0';
}

}  // namespace

std::string parse_command_line(int argc, char** argv, ToolOptions& out) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
        auto take = [&]() { ++i; return next; };
        long n = 0;
        if (a == "--device") {
            if (!to_long(take(), n) || n < 0) return "--device needs a non-negative integer";
            out.device = n;
        } else if (a == "--filter") {
            if (!take()) return "--filter needs a substring";
            out.filter = next;
        } else if (a == "--exclude") {
            if (!take() || !*next) return "--exclude needs a substring";
            out.exclude = next;
        } else if (a == "--option") {
            if (!take() || !std::strchr(next, '=')) return "--option needs key=value";
            const std::string kv = next;
            out.provider_options.emplace_back(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
        } else if (a == "--junit") {
            if (!take() || !*next) return "--junit needs a file name";
            out.junit_path = next;
        } else if (a == "--model") {
            if (!take() || !*next) return "--model needs a GGUF file";
            out.model_path = next;
        } else if (a == "--timeout") {
            if (!to_long(take(), n) || n < 1 || n > 86400) return "--timeout needs a number of seconds from 1 to 86400";
            out.timeout_seconds = int(n);
        } else if (a == "--list") {
            out.list = true;
        } else if (a == "-v" || a == "--verbose") {
            out.verbose = true;
        } else if (a == "-h" || a == "--help") {
            out.help = true;
        } else if (!a.empty() && a[0] == '-') {
            return "unknown flag " + a;
        } else if (out.plugin.empty()) {
            out.plugin = a;
        } else {
            return "only one plugin per run";
        }
    }
    if (out.help || out.list) return "";
    if (out.plugin.empty()) return "no plugin given";
    if (!out.model_path.empty() && !out.junit_path.empty()) return "--junit reports cases; --model runs none";
    return "";
}

}  // namespace hetero::conformance
