// The general.* and <arch>.* keys llama.cpp's converter writes for each
// architecture, from config.json (and generation_config.json's sampling
// defaults).
#pragma once

#include "hf_config.hpp"

#include <hetero/model/gguf_writer.hpp>

#include <cstdint>
#include <string>

namespace hetero::model_detail {

// general.architecture, general.type, general.name and the architecture's
// hyper-parameters; `file_type` is llama.cpp's llama_ftype of the output.
void add_hf_hparams(GgufWriter& w, const HfConfig& c, const std::string& name, uint32_t file_type);

// general.sampling.* from `dir`/generation_config.json, when it exists.
void add_generation_defaults(GgufWriter& w, const std::string& dir);

}  // namespace hetero::model_detail
