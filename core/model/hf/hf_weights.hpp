// The weights of a Hugging Face model folder: model.safetensors, or the
// shards model.safetensors.index.json names, opened and cross-checked (every
// tensor the index lists is in the shard it names, and no shard holds a
// tensor the index does not list or another shard holds too).
#pragma once

#include "safetensors.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hetero::model_detail {

struct HfWeights {
    std::vector<std::unique_ptr<SafetensorsFile>> files;
    // Every tensor by its Hugging Face name, in shard and file order.
    std::vector<std::pair<std::string, const SafetensorsTensor*>> tensors;
    std::map<std::string, const SafetensorsFile*> file_of;
};

HfWeights open_hf_weights(const std::string& dir);

}  // namespace hetero::model_detail
