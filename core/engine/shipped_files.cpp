#include <hetero/engine/shipped_files.hpp>

#include <boost/dll/runtime_symbol_info.hpp>

#include <filesystem>

namespace hetero {

std::string shipped_file_path(const std::string& name) {
    namespace fs = std::filesystem;
    boost::system::error_code ec;
    const boost::dll::fs::path self = boost::dll::this_line_location(ec);
    if (!ec) {
        const fs::path installed = fs::path(self.string()).parent_path() / HETERO_MODELS_SUBDIR_FROM_LIB / name;
        std::error_code fec;
        if (fs::is_regular_file(installed, fec)) return installed.lexically_normal().string();
    }
    return (fs::path(HETERO_SOURCE_DIR) / "models" / name).string();
}

std::string default_model_path() { return shipped_file_path("stories260K.gguf"); }

}  // namespace hetero
