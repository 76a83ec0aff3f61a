#include "conversation_file.hpp"

#include <hetero/error.hpp>
#include <hetero/sdk/atomic_file.hpp>
#include <hetero/sdk/json_strict.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace hetero::cli {

namespace {

constexpr const char* kFormat = "hetero-chat/1";
constexpr uintmax_t kMaxFileBytes = 64ull << 20;  // far above any context a model holds

}  // namespace

void save_conversation(const std::string& path, const std::string& model_name, const std::vector<ChatMessage>& messages) {
    nlohmann::json list = nlohmann::json::array();
    for (const ChatMessage& m : messages) list.push_back({{"role", m.role}, {"content", m.content}});
    const nlohmann::json doc = {{"format", kFormat}, {"model", model_name}, {"messages", std::move(list)}};
    // Invalid UTF-8 in a reply (a token cut mid-character) is replaced, not a reason to lose the file.
    const std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (const std::string why = sdk::write_file_atomically(path, text); !why.empty()) throw Error("saving the conversation: " + why);
}

std::vector<ChatMessage> load_conversation(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(fmt::format("{}: no such file (or not a regular file)", path));
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec || size > kMaxFileBytes) throw Error(fmt::format("{}: over {} MiB: not a saved conversation", path, kMaxFileBytes >> 20));
    std::ifstream in(path, std::ios::binary);
    std::string text(size_t(size), '\0');
    if (!in.read(text.data(), std::streamsize(size))) throw Error(fmt::format("cannot read {}", path));
    nlohmann::json doc;
    try {
        doc = sdk::parse_json_strict(text, path);
    } catch (const sdk::JsonError& e) {
        throw Error(e.what());
    }
    const auto bad = [&path](const std::string& where, const std::string& what) { return Error(fmt::format("{}: {}: {}", path, where, what)); };
    if (!doc.is_object()) throw bad("(top level)", "must be an object");
    if (!doc.contains("format") || doc["format"] != kFormat) throw bad("format", fmt::format("must be \"{}\"", kFormat));
    if (!doc.contains("messages") || !doc["messages"].is_array()) throw bad("messages", "missing or not an array");
    std::vector<ChatMessage> messages;
    for (size_t i = 0; i < doc["messages"].size(); ++i) {
        const nlohmann::json& m = doc["messages"][i];
        const std::string where = fmt::format("messages[{}]", i);
        if (!m.is_object()) throw bad(where, "must be an object {\"role\": ..., \"content\": ...}");
        if (!m.contains("role") || !m["role"].is_string()) throw bad(where + ".role", "missing or not a string");
        if (!m.contains("content") || !m["content"].is_string()) throw bad(where + ".content", "missing or not a string");
        const std::string role = m["role"].get<std::string>();
        if (role != "system" && role != "user" && role != "assistant")
            throw bad(where + ".role", fmt::format("\"{}\" is not one of system, user, assistant", role));
        if (role == "system" && i != 0) throw bad(where + ".role", "a system message may only open the conversation");
        messages.push_back({role, m["content"].get<std::string>()});
    }
    return messages;
}

}  // namespace hetero::cli
