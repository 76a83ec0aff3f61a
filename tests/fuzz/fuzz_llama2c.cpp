// llama2.c checkpoint and tokenizer.bin readers: the first input byte picks
// which; the rest is the file.
#include "fuzz_file.hpp"

#include <hetero/error.hpp>
#include <hetero/model/llama2c.hpp>
#include <hetero/model/model.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::string& path = hetero::fuzz::write_scratch(data + 1, size - 1);
    try {
        if (data[0] & 1) {
            hetero::ModelFile m = hetero::load_llama2c_model(path);
            (void)m;
        } else {
            // Vocabulary sizes the checkpoints use, and odd ones.
            static const int32_t sizes[] = {1, 2, 3, 512, 32000};
            const int32_t n = sizes[(data[0] >> 1) % 5];
            auto tok = hetero::Tokenizer::create(hetero::vocab_from_llama2c(path, n));
            (void)tok->decode(tok->encode("Once upon a time", true));
        }
    } catch (const hetero::Error&) {
    }
    return 0;
}
