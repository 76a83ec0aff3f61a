// A SoC profile (profiles/soc/SCHEMA.md, schema "hetero-soc-profile/1"), as
// the simulator uses it: the SDK's strict reader (hetero/sdk/soc_profile.hpp,
// shared with the NPU-emulation provider) with hetero::Error for every fault,
// and the places a profile is looked up by name. Times derived from a
// profile are simulated.
#pragma once

#include <hetero/sdk/soc_profile.hpp>

#include <set>
#include <string>
#include <vector>

namespace hetero {

using SocFigure = sdk::SocFigure;
using SocNpu = sdk::SocNpu;
using SocUnit = sdk::SocUnit;
using SocMemory = sdk::SocMemory;
using sdk::soc_op_names;

struct SocProfile : sdk::SocProfile {
    // Index of the unit called `name`; throws hetero::Error listing the units.
    size_t unit_index(const std::string& name) const;
};

// Parses and validates; `origin` names the text in messages (a file path).
// Throws hetero::Error "<origin>: <json path>: <what is wrong>".
SocProfile parse_soc_profile(const std::string& text, const std::string& origin);
// Reads and parses a file.
SocProfile load_soc_profile_file(const std::string& path);

// Where `--profile NAME` looks, in order: $HETERO_SOC_PROFILE_DIR (colon
// separated), <prefix>/share/hetero/soc next to the installed library, the
// source tree's profiles/soc.
std::vector<std::string> soc_profile_dirs();
// A path (contains '/' or ends in ".json") is taken as given; a name is
// looked up as NAME.json in soc_profile_dirs(). Throws hetero::Error naming
// where it looked and the profiles found there.
std::string find_soc_profile(const std::string& name_or_path);
// find_soc_profile + load_soc_profile_file.
SocProfile load_soc_profile(const std::string& name_or_path);

}  // namespace hetero
