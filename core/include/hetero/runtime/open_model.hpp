// Opens a model file and its tokenizer in one step: a GGUF carries its own
// vocabulary; a llama2.c checkpoint needs a tokenizer.bin (given, or found
// beside the checkpoint as tokenizer.bin / tok<vocab>.bin).
#pragma once

#include <hetero/model/model.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <memory>
#include <string>

namespace hetero {

struct OpenedModel {
    std::string path;
    ModelFile file;
    std::unique_ptr<Tokenizer> tokenizer;
};

OpenedModel open_model(const std::string& path, const std::string& tokenizer_path = "");

}  // namespace hetero
