// Both tokenizers (SentencePiece-style from the shipped model, GPT-2 BPE from
// llama.cpp's vocabulary files when tests/fetch_vocab.sh fetched them):
// any bytes encode, and decoding gives the same bytes back. The first input
// byte picks the tokenizer and whether special-token texts are parsed.
#include <hetero/error.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

namespace {

std::vector<std::unique_ptr<hetero::Tokenizer>> load() {
    std::vector<std::unique_ptr<hetero::Tokenizer>> out;
    const std::string root = HETERO_SOURCE_DIR;
    for (const std::string& f : {root + "/models/stories260K.gguf", root + "/.peer/vocab/ggml-vocab-llama-bpe.gguf",
                                 root + "/.peer/vocab/ggml-vocab-qwen2.gguf", root + "/.peer/vocab/ggml-vocab-llama-spm.gguf"}) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(f, ec)) continue;
        out.push_back(hetero::Tokenizer::create(hetero::vocab_from_gguf(hetero::GgufFile::open(f))));
    }
    if (out.empty()) std::abort();
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const auto tokenizers = load();
    if (size < 1) return 0;
    const hetero::Tokenizer& tok = *tokenizers[data[0] % tokenizers.size()];
    const bool special = (data[0] / tokenizers.size()) & 1;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::vector<int32_t> ids = tok.encode(text, true, special);
    for (int32_t id : ids)
        if (id < 0 || id >= tok.n_vocab()) std::abort();
    // SentencePiece writes spaces as U+2581 and decodes U+2581 as a space:
    // a text holding that character itself cannot come back byte for byte.
    const bool spm_marker = tok.model() == "llama" && text.find("\xe2\x96\x81") != std::string_view::npos;
    if (!special && !spm_marker) {
        const std::string back = tok.decode(ids);
        if (back != text) {
            std::fprintf(stderr, "round trip differs (%s tokenizer, %d tokens):\n  in:  ", tok.model().c_str(), int(ids.size()));
            for (char c : text) std::fprintf(stderr, "%02x", uint8_t(c));
            std::fprintf(stderr, "\n  out: ");
            for (char c : back) std::fprintf(stderr, "%02x", uint8_t(c));
            std::fprintf(stderr, "\n");
            std::abort();
        }
    }
    return 0;
}
