// read_model_needs in a build without libhetero (HETERO_BUILD_CORE=OFF):
// the kit still checks providers; --model says what it lacks.
#include "model_needs.hpp"

#include <stdexcept>

namespace hetero::conformance {

std::unique_ptr<ModelNeeds> read_model_needs(const std::string&) {
    throw std::runtime_error("this hetero-conformance was built without libhetero (HETERO_BUILD_CORE=OFF), so it cannot read models");
}

bool model_needs_available() { return false; }

}  // namespace hetero::conformance
