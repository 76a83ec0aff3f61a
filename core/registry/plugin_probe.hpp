// The first time the registry sees a plugin file (by path, size, mtime and
// content hash, and the options it is created with), it loads it in a child
// process, hetero-plugin-probe, with a time limit: a plugin that crashes,
// hangs or exits while loading is then refused with the cause instead of
// taking the process down. Verdicts are cached in the user cache dir and
// reused until the file changes. HETERO_PLUGIN_PROBE=0 turns probing off;
// HETERO_PLUGIN_PROBE_SECONDS sets the limit (default 20).
#pragma once

#include <map>
#include <string>

namespace hetero::registry_detail {

struct ProbeVerdict {
    bool safe = true;
    bool probed = false;  // false: probing off or the probe program missing
    std::string reason;   // why not safe
};

ProbeVerdict probe_plugin(const std::string& path, const std::map<std::string, std::string>& options);

}  // namespace hetero::registry_detail
