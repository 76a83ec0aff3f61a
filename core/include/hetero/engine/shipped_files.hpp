// Files that ship with hetero (the default model, sample texts): found in
// <prefix>/share/hetero/models beside an installed libhetero, else in the
// source tree libhetero was built from.
#pragma once

#include <string>

namespace hetero {

// models/NAME, e.g. "text/calibration.txt".
std::string shipped_file_path(const std::string& name);
// The default model, the small TinyStories model.
std::string default_model_path();

}  // namespace hetero
