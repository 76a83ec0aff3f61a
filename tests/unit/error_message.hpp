// What a refusal says: the message of the hetero::Error a call throws, ""
// when it returns; for damaged or hostile files, loading or opening one.
#pragma once

#include <hetero/error.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/model.hpp>

#include <filesystem>
#include <string>

namespace hetero::test {

// The message of the E (a hetero::Error, or a kind of it) call() throws.
template <class E = Error, class Call>
std::string error_message(Call&& call) {
    try {
        call();
    } catch (const E& e) {
        return e.what();
    }
    return "";
}

inline std::string model_load_error(const std::string& path) {
    return error_message([&] { load_model(path); });
}

// model_load_error of a scratch file, which is removed after.
inline std::string model_load_error_removing(const std::string& path) {
    const std::string e = model_load_error(path);
    std::filesystem::remove(path);
    return e;
}

inline std::string gguf_open_error(const std::string& path) {
    return error_message([&] { GgufFile::open(path); });
}

}  // namespace hetero::test
