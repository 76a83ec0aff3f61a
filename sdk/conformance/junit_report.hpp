// The run as JUnit XML, for CI systems: one testsuite per family (and
// device, when there are several), one testcase per case, <skipped> with
// the provider's refusal and <failure> with the kit's finding; a process
// that ended without a verdict adds a failed testcase to a "process" suite.
#pragma once

#include "run_results.hpp"

#include <string>

namespace hetero::conformance {

// The document; cases that never ran are left out.
std::string junit_xml(const RunResults& results);

// Writes junit_xml to path; returns "" or why it could not.
std::string write_junit(const std::string& path, const RunResults& results);

// Text made safe for an XML attribute or element: markup escaped, control
// characters XML 1.0 forbids and invalid UTF-8 replaced.
std::string xml_escape(const std::string& text);

}  // namespace hetero::conformance
