// GGUF reader, model loader and GGUF vocabulary: arbitrary bytes as a model
// file must give a model or a hetero::Error, nothing else.
#include "fuzz_file.hpp"

#include <hetero/error.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/model/model.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = hetero::fuzz::write_scratch(data, size);
    try {
        hetero::ModelFile m = hetero::load_model(path);
        (void)m;
    } catch (const hetero::Error&) {
    }
    try {
        const hetero::GgufFile g = hetero::GgufFile::open(path);
        auto tok = hetero::Tokenizer::create(hetero::vocab_from_gguf(g));
        const std::vector<int32_t> ids = tok->encode("Once upon a time <s> héllo\n", true);
        (void)tok->decode(ids);
    } catch (const hetero::Error&) {
    }
    return 0;
}
