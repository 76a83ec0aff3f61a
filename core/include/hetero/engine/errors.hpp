// What went wrong when opening a runtime or loading a model, by stage, so an
// app (and the C API's result codes) can tell a bad file from a missing
// device without reading messages. Each keeps the message of its cause.
#pragma once

#include <hetero/error.hpp>

namespace hetero {

class ConfigError : public Error {  // the config file or text is not valid
public:
    using Error::Error;
};
class NotFoundError : public Error {  // a named file or provider is not there
public:
    using Error::Error;
};
class ModelFileError : public Error {  // the model or tokenizer file cannot be read or run
public:
    using Error::Error;
};
class ArgumentError : public Error {  // a value the caller passed is out of range
public:
    using Error::Error;
};
class NoDeviceError : public Error {  // no usable device, or none can run the model
public:
    using Error::Error;
};

}  // namespace hetero
