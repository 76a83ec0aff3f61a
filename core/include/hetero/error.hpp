// The one exception type the core throws; messages name the file, key,
// provider or tensor at fault.
#pragma once

#include <stdexcept>
#include <string>

namespace hetero {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace hetero
