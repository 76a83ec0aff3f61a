#include "json_strict.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <set>
#include <vector>

namespace hetero::json_detail {

namespace {

// One open object or array while parsing, with where it sits.
struct Frame {
    bool array = false;
    std::string path;           // "" at the top level
    std::set<std::string> keys; // objects: the keys seen so far
    std::string key;            // objects: the key whose value comes next
    size_t next_index = 0;      // arrays: the index of the next element
};

// The path of the value that starts now in `top` (advancing an array's index).
std::string child_path(Frame& top) {
    if (top.array) return fmt::format("{}[{}]", top.path, top.next_index++);
    return top.path.empty() ? top.key : top.path + "." + top.key;
}

// Thrown from the parser callback, turned into hetero::Error outside it.
struct DuplicateKey {
    std::string path;
};

}  // namespace

nlohmann::json parse_json_strict(const std::string& text, const std::string& source) {
    using nlohmann::json;
    std::vector<Frame> stack;
    const json::parser_callback_t track = [&stack](int, json::parse_event_t event, json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start:
            case json::parse_event_t::array_start: {
                Frame f;
                f.array = event == json::parse_event_t::array_start;
                if (!stack.empty()) f.path = child_path(stack.back());
                stack.push_back(std::move(f));
                break;
            }
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end:
                if (!stack.empty()) stack.pop_back();
                break;
            case json::parse_event_t::key: {
                Frame& top = stack.back();
                top.key = parsed.get<std::string>();
                if (!top.keys.insert(top.key).second) throw DuplicateKey{child_path(top)};
                break;
            }
            case json::parse_event_t::value:
                if (!stack.empty() && stack.back().array) ++stack.back().next_index;
                break;
        }
        return true;
    };
    try {
        return json::parse(text, track);
    } catch (const DuplicateKey& d) {
        throw Error(fmt::format("{}: duplicate key '{}' (a key may appear only once in an object)", source, d.path));
    } catch (const json::exception& e) {
        throw Error(fmt::format("{}: invalid JSON: {}", source, e.what()));
    }
}

}  // namespace hetero::json_detail
