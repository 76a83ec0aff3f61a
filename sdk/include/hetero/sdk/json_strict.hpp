// JSON as hand-written files should be read (configs, SoC profiles): like
// nlohmann::json::parse, but a key repeated within one object is an error
// rather than "the last one wins", so an edit that adds a second "threads"
// beside the first cannot be silently ignored. Header-only, so the core and
// providers read files by one rule; built in-tree only (it needs
// nlohmann-json, and installed SDK headers need nothing beyond the standard
// library).
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetero::sdk {

// "<source>: invalid JSON: ..." or "<source>: duplicate key '<path>' ...".
class JsonError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace json_strict_detail {

// One open object or array while parsing, with where it sits.
struct Frame {
    bool array = false;
    std::string path;            // "" at the top level
    std::set<std::string> keys;  // objects: the keys seen so far
    std::string key;             // objects: the key whose value comes next
    size_t next_index = 0;       // arrays: the index of the next element
};

// The path of the value that starts now in `top` (advancing an array's index).
inline std::string child_path(Frame& top) {
    if (top.array) return top.path + "[" + std::to_string(top.next_index++) + "]";
    return top.path.empty() ? top.key : top.path + "." + top.key;
}

// Thrown from the parser callback, turned into JsonError outside it.
struct DuplicateKey {
    std::string path;
};

}  // namespace json_strict_detail

// Parses `text`; `source` prefixes every error (e.g. "config /etc/x.json").
// A repeated key is named by its path from the top level, e.g.
// providers[0].options.threads.
inline nlohmann::json parse_json_strict(const std::string& text, const std::string& source) {
    using nlohmann::json;
    using json_strict_detail::Frame;
    std::vector<Frame> stack;
    const json::parser_callback_t track = [&stack](int, json::parse_event_t event, json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start:
            case json::parse_event_t::array_start: {
                Frame f;
                f.array = event == json::parse_event_t::array_start;
                if (!stack.empty()) f.path = json_strict_detail::child_path(stack.back());
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
                if (!top.keys.insert(top.key).second) throw json_strict_detail::DuplicateKey{json_strict_detail::child_path(top)};
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
    } catch (const json_strict_detail::DuplicateKey& d) {
        throw JsonError(source + ": duplicate key '" + d.path + "' (a key may appear only once in an object)");
    } catch (const json::exception& e) {
        throw JsonError(source + ": invalid JSON: " + e.what());
    }
}

}  // namespace hetero::sdk
