#include "hf_weights.hpp"

#include "hf_json.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace hetero::model_detail {

namespace {

namespace fs = std::filesystem;

// The shard file names the index lists (each a plain file name in `dir`).
std::map<std::string, std::string> read_index(const std::string& index_path) {
    const nlohmann::json j = read_json_file(index_path);
    const auto map = j.is_object() ? j.find("weight_map") : j.end();
    if (map == j.end() || !map->is_object()) throw Error(fmt::format("{}: no 'weight_map' object", index_path));
    std::map<std::string, std::string> out;
    for (const auto& [name, file] : map->items()) {
        if (!file.is_string()) throw Error(fmt::format("{}: weight_map['{}'] is not a file name", index_path, name));
        const std::string f = file.get<std::string>();
        // A shard is a file beside the index: no directories, no way out of the folder.
        if (f.empty() || f.find('/') != std::string::npos || f.find('\\') != std::string::npos || f == "." || f == ".." ||
            !f.ends_with(".safetensors"))
            throw Error(fmt::format("{}: weight_map['{}'] = '{}' is not the name of a .safetensors file in the model folder", index_path,
                                    name, f));
        out[name] = f;
    }
    if (out.empty()) throw Error(fmt::format("{}: weight_map is empty", index_path));
    return out;
}

}  // namespace

HfWeights open_hf_weights(const std::string& dir) {
    const fs::path d(dir);
    const fs::path index_path = d / "model.safetensors.index.json";
    std::map<std::string, std::string> index;
    std::vector<std::string> parts;
    if (fs::is_regular_file(index_path)) {
        index = read_index(index_path.string());
        std::set<std::string> unique;
        for (const auto& [name, f] : index) unique.insert(f);
        parts.assign(unique.begin(), unique.end());
    } else {
        for (const auto& e : fs::directory_iterator(d)) {
            const std::string f = e.path().filename().string();
            if (f.starts_with("model") && f.ends_with(".safetensors") && e.is_regular_file()) parts.push_back(f);
        }
        std::sort(parts.begin(), parts.end());
    }
    if (parts.empty()) {
        if (fs::exists(d / "pytorch_model.bin") || fs::exists(d / "pytorch_model.bin.index.json"))
            throw Error(fmt::format("{}: the weights are PyTorch pickles (pytorch_model.bin); hetero reads safetensors only", dir));
        throw Error(fmt::format("{}: no model.safetensors (or model.safetensors.index.json with its shards)", dir));
    }
    HfWeights w;
    for (const std::string& part : parts) {
        const fs::path p = d / part;
        if (!fs::is_regular_file(p))
            throw Error(fmt::format("{}: shard {} named by model.safetensors.index.json is missing", dir, part));
        w.files.push_back(std::make_unique<SafetensorsFile>(p.string()));
        const SafetensorsFile& f = *w.files.back();
        for (const SafetensorsTensor& t : f.tensors()) {
            if (const auto it = w.file_of.find(t.name); it != w.file_of.end())
                throw Error(fmt::format("{}: tensor '{}' is also in {}", f.path(), t.name, it->second->path()));
            if (!index.empty()) {
                const auto listed = index.find(t.name);
                if (listed == index.end())
                    throw Error(fmt::format("{}: tensor '{}' is not in model.safetensors.index.json", f.path(), t.name));
                if (listed->second != part)
                    throw Error(fmt::format("{}: tensor '{}' is here, but model.safetensors.index.json places it in {}", f.path(), t.name,
                                            listed->second));
            }
            w.file_of[t.name] = &f;
            w.tensors.emplace_back(t.name, &t);
        }
    }
    for (const auto& [name, part] : index)
        if (!w.file_of.count(name))
            throw Error(fmt::format("{}: tensor '{}' that model.safetensors.index.json places there is missing (incomplete download?)",
                                    (d / part).string(), name));
    return w;
}

}  // namespace hetero::model_detail
