#include "json_strict.hpp"

#include <hetero/error.hpp>
#include <hetero/sdk/json_strict.hpp>

namespace hetero::json_detail {

nlohmann::json parse_json_strict(const std::string& text, const std::string& source) {
    try {
        return sdk::parse_json_strict(text, source);
    } catch (const sdk::JsonError& e) {
        throw Error(e.what());
    }
}

}  // namespace hetero::json_detail
