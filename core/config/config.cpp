#include <hetero/config.hpp>

#include "../model/mapped_file.hpp"
#include "../util/json_strict.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hetero {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& source, const std::string& key, const std::string& what) {
    throw Error(fmt::format("config {}: '{}' {}", source, key, what));
}

std::string type_name(const json& j) { return j.type_name(); }

std::string scalar_to_string(const json& v, const std::string& source, const std::string& key) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_number_float()) return fmt::format("{}", v.get<double>());
    bad(source, key, "must be a string, number or boolean, not " + type_name(v));
}

std::vector<std::string> string_list(const json& v, const std::string& source, const std::string& key, bool allow_ints) {
    if (!v.is_array()) bad(source, key, "must be an array, not " + type_name(v));
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) {
        const std::string k = fmt::format("{}[{}]", key, i);
        if (v[i].is_string()) out.push_back(v[i].get<std::string>());
        else if (allow_ints && v[i].is_number_unsigned()) out.push_back(std::to_string(v[i].get<unsigned long long>()));
        else bad(source, k, allow_ints ? "must be a string or a device index" : "must be a string");
    }
    return out;
}

// "all", "head", "N" or "A-B" -> [first, last] (last -1 = through the head).
void parse_layers(const json& v, const std::string& source, const std::string& key, int& first, int& last) {
    if (!v.is_string()) bad(source, key, "must be a string (\"all\", \"head\", \"N\" or \"A-B\")");
    const std::string s = v.get<std::string>();
    if (s == "all") {
        first = 0;
        last = -1;
        return;
    }
    if (s == "head") {
        first = 1 << 30;
        last = -1;
        return;
    }
    unsigned a = 0, b = 0;
    char tail = 0;
    if (std::sscanf(s.c_str(), "%u-%u%c", &a, &b, &tail) == 2 && a <= b && b < (1u << 20)) {
        first = int(a);
        last = int(b);
        return;
    }
    if (std::sscanf(s.c_str(), "%u%c", &a, &tail) == 1 && a < (1u << 20)) {
        first = last = int(a);
        return;
    }
    bad(source, key, "must be \"all\", \"head\", \"N\" or \"A-B\", not '" + s + "'");
}

std::optional<Role> parse_op(const json& v, const std::string& source, const std::string& key) {
    Role r;
    if (!v.is_string() || !role_from_name(v.get<std::string>(), r) || !is_matmul_role(r))
        bad(source, key, "must name a matmul: attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down or output (a pin also takes \"matmuls\": all of them)");
    return r;
}

PlanConstraints parse_plan(const json& value, const std::string& source) {
    PlanConstraints c;
    if (!value.is_object()) bad(source, "plan", "must be an object, not " + type_name(value));
    for (const auto& [key, v] : value.items()) {
        const std::string k = "plan." + key;
        if (key == "splits") {
            if (!v.is_boolean()) bad(source, k, "must be true or false, not " + type_name(v));
            c.allow_splits = v.get<bool>();
        } else if (key == "pin" || key == "split") {
            if (!v.is_array()) bad(source, k, "must be an array of objects, not " + type_name(v));
            for (size_t i = 0; i < v.size(); ++i) {
                const std::string base = fmt::format("{}[{}]", k, i);
                if (!v[i].is_object()) bad(source, base, "must be an object");
                PlanConstraints::Pin pin;
                PlanConstraints::Split split;
                bool has_layers = false, has_device = false, all_matmuls = false;
                for (const auto& [ek, ev] : v[i].items()) {
                    const std::string ekey = base + "." + ek;
                    if (ek == "layers") {
                        parse_layers(ev, source, ekey, pin.first, pin.last);
                        split.first = pin.first;
                        split.last = pin.last;
                        has_layers = true;
                    } else if (ek == "op" && key == "pin" && ev.is_string() && ev.get<std::string>() == "matmuls") {
                        all_matmuls = true;
                    } else if (ek == "op") {
                        pin.role = split.role = parse_op(ev, source, ekey);
                    } else if (ek == "device" && key == "pin") {
                        if (!ev.is_string()) bad(source, ekey, "must be a device label such as \"cpu:0\"");
                        pin.device = ev.get<std::string>();
                        has_device = true;
                    } else if (ek == "devices" && key == "split") {
                        split.devices = string_list(ev, source, ekey, false);
                        has_device = split.devices.size() >= 2;
                        if (!has_device) bad(source, ekey, "must list at least two devices");
                    } else if (ek == "ratio" && key == "split") {
                        if (!ev.is_array()) bad(source, ekey, "must be an array of positive numbers");
                        for (const auto& r : ev) {
                            if (!r.is_number() || !(r.get<double>() > 0) || !std::isfinite(r.get<double>()))
                                bad(source, ekey, "must be an array of positive numbers");
                            split.ratio.push_back(r.get<double>());
                        }
                    } else {
                        bad(source, ekey, key == "pin" ? "is not a known key (known: layers, op, device)" : "is not a known key (known: layers, op, devices, ratio)");
                    }
                }
                if (!has_layers) bad(source, base + ".layers", "is required");
                if (!has_device) bad(source, base + (key == "pin" ? ".device" : ".devices"), "is required");
                if (key == "split" && !split.ratio.empty() && split.ratio.size() != split.devices.size())
                    bad(source, base + ".ratio", "must have one entry per device");
                if (key == "pin" && all_matmuls) c.pin_matmuls(pin.first, pin.last, pin.device);
                else if (key == "pin") c.pins.push_back(pin);
                else c.splits.push_back(split);
            }
        } else {
            bad(source, k, "is not a known key (known: pin, split, splits)");
        }
    }
    return c;
}

}  // namespace

Config Config::parse(const std::string& text, const std::string& source) {
    // Syntax errors, numbers out of range and repeated keys name the file.
    const json root = json_detail::parse_json_strict(text, "config " + source);
    if (!root.is_object()) throw Error(fmt::format("config {}: top level must be an object", source));
    Config c;
    c.source = source;
    for (const auto& [key, value] : root.items()) {
        if (key == "plugin_dirs") {
            c.plugin_dirs = string_list(value, source, key, false);
        } else if (key == "providers") {
            if (!value.is_array()) bad(source, key, "must be an array of provider objects, not " + type_name(value));
            for (size_t i = 0; i < value.size(); ++i) {
                const json& p = value[i];
                const std::string base = fmt::format("providers[{}]", i);
                if (!p.is_object()) bad(source, base, "must be an object");
                ProviderConfig pc;
                for (const auto& [pk, pv] : p.items()) {
                    const std::string k = base + "." + pk;
                    if (pk == "name") {
                        if (!pv.is_string() || pv.get<std::string>().empty()) bad(source, k, "must be a non-empty string");
                        pc.name = pv.get<std::string>();
                    } else if (pk == "enabled") {
                        if (!pv.is_boolean()) bad(source, k, "must be true or false, not " + type_name(pv));
                        pc.enabled = pv.get<bool>();
                    } else if (pk == "devices") {
                        pc.devices = string_list(pv, source, k, true);
                    } else if (pk == "options") {
                        if (!pv.is_object()) bad(source, k, "must be an object, not " + type_name(pv));
                        for (const auto& [ok, ov] : pv.items()) pc.options[ok] = scalar_to_string(ov, source, k + "." + ok);
                    } else {
                        bad(source, k, "is not a known key (known: name, enabled, devices, options)");
                    }
                }
                if (pc.name.empty()) bad(source, base + ".name", "is required");
                for (const auto& other : c.providers)
                    if (other.name == pc.name) bad(source, base + ".name", "repeats provider '" + pc.name + "'");
                c.providers.push_back(std::move(pc));
            }
        } else if (key == "plan") {
            c.plan = parse_plan(value, source);
        } else {
            bad(source, key, "is not a known key (known: plugin_dirs, providers, plan)");
        }
    }
    return c;
}

Config Config::load(const std::string& path) {
    // A regular file of bounded size: a FIFO or /dev/zero must not hang or
    // eat memory.
    constexpr uint64_t kMaxConfigBytes = 1u << 20;
    std::unique_ptr<model_detail::MappedFile> map;
    try {
        map = std::make_unique<model_detail::MappedFile>(path);
    } catch (const Error& e) {
        throw Error(fmt::format("config {}", e.what()));
    }
    if (map->size() > kMaxConfigBytes)
        throw Error(fmt::format("config {}: {} bytes; a config is at most {} bytes", path, map->size(), kMaxConfigBytes));
    return parse(std::string(reinterpret_cast<const char*>(map->data()), size_t(map->size())), path);
}

Config Config::load_default(const std::optional<std::string>& explicit_path) {
    if (explicit_path) return load(*explicit_path);
    std::filesystem::path p;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) p = std::filesystem::path(xdg) / "hetero" / "config.json";
    else if (const char* home = std::getenv("HOME"); home && *home) p = std::filesystem::path(home) / ".config" / "hetero" / "config.json";
    std::error_code ec;
    if (!p.empty() && std::filesystem::is_regular_file(p, ec)) return load(p.string());
    Config c;
    c.source = "(defaults)";
    return c;
}

RegistryOptions Config::registry_options() const {
    RegistryOptions o;
    o.plugin_dirs = plugin_dirs;
    for (const auto& p : providers) {
        if (!p.enabled) continue;
        o.enabled.push_back(p.name);
        if (!p.options.empty()) o.provider_options[p.name] = p.options;
    }
    // Every listed provider disabled: enable nothing rather than everything.
    if (!providers.empty() && o.enabled.empty()) o.enabled.push_back("");
    return o;
}

bool Config::device_allowed(const std::string& provider, uint32_t index, const std::string& device_name) const {
    for (const auto& p : providers) {
        if (p.name != provider) continue;
        if (p.devices.empty()) return true;
        for (const auto& d : p.devices)
            if (d == std::to_string(index) || (!d.empty() && device_name.find(d) != std::string::npos)) return true;
        return false;
    }
    return true;
}

void Config::select_providers(const std::vector<std::string>& names) {
    std::vector<ProviderConfig> next;
    for (const auto& n : names) {
        ProviderConfig pc;
        pc.name = n;
        for (const auto& p : providers)
            if (p.name == n) pc = p;
        pc.enabled = true;
        next.push_back(std::move(pc));
    }
    providers = std::move(next);
}

}  // namespace hetero
