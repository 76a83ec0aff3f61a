// The pieces of a SentencePiece model file (tokenizer.model: a protobuf
// ModelProto). Only what a GGUF vocabulary needs is read (each piece's text,
// score and type); every length and field is checked against the file, so
// a truncated or hostile file is a hetero::Error naming it and the offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetero::model_detail {

struct SentencePiece {
    // SentencePiece's piece types (sentencepiece_model.proto).
    enum Type : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };
    std::string text;
    float score = 0.f;
    int32_t type = kNormal;
};

struct SentencePieceModel {
    std::vector<SentencePiece> pieces;
    int32_t model_type = 1;  // TrainerSpec.model_type: 1 unigram, 2 BPE, 3 word, 4 char
};

SentencePieceModel read_sentencepiece_model(const std::string& path);

}  // namespace hetero::model_detail
