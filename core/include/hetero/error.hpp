// The exceptions the core throws; messages name the file, key, provider or
// tensor at fault.
#pragma once

#include <hetero/ep_api.h>

#include <stdexcept>
#include <string>

namespace hetero {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A provider answered a call with an error status (Provider::check): which
// provider, and the status it returned. The message is the usual
// "<provider>: <what>: <provider's message>".
class ProviderError : public Error {
public:
    ProviderError(std::string provider, hetero_status status, const std::string& message)
        : Error(message), provider_(std::move(provider)), status_(status) {}
    const std::string& provider() const { return provider_; }
    hetero_status status() const { return status_; }

private:
    std::string provider_;
    hetero_status status_;
};

}  // namespace hetero
