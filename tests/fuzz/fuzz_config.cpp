// The JSON config parser: any text gives a Config or a hetero::Error.
#include <hetero/config.hpp>
#include <hetero/error.hpp>

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const hetero::Config c = hetero::Config::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
        (void)c.registry_options();
    } catch (const hetero::Error&) {
    }
    return 0;
}
