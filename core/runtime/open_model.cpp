#include <hetero/error.hpp>
#include <hetero/runtime/open_model.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace hetero {

OpenedModel open_model(const std::string& path, const std::string& tokenizer_path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (!fs::exists(st)) throw Error(fmt::format("model file {} does not exist", path));
    if (!fs::is_regular_file(st)) throw Error(fmt::format("model file {} is not a regular file", path));
    OpenedModel m{path, load_model(path), nullptr};
    if (m.file.gguf && tokenizer_path.empty()) {
        m.tokenizer = Tokenizer::create(vocab_from_gguf(*m.file.gguf));
    } else {
        std::string tok = tokenizer_path;
        if (tok.empty()) {
            const fs::path dir = fs::path(path).parent_path();
            for (const std::string& cand : {fmt::format("tok{}.bin", m.file.hparams.n_vocab), std::string("tokenizer.bin")})
                if (fs::is_regular_file(dir / cand, ec)) {
                    tok = (dir / cand).string();
                    break;
                }
            if (tok.empty())
                throw Error(fmt::format("{} is a llama2.c checkpoint: pass its tokenizer.bin with --tokenizer", path));
        }
        m.tokenizer = Tokenizer::create(vocab_from_llama2c(tok, int32_t(m.file.hparams.n_vocab)));
    }
    if (m.tokenizer->n_vocab() != m.file.hparams.n_vocab)
        throw Error(fmt::format("tokenizer has {} tokens but the model expects {}", m.tokenizer->n_vocab(), m.file.hparams.n_vocab));
    return m;
}

}  // namespace hetero
