// The C API's parameter structs read into the engine's options: a struct of
// an older (smaller) struct_size gets the defaults for the fields it lacks,
// and every value is checked before it reaches the engine.
#pragma once

#include <hetero/hetero.h>

#include <hetero/chat/completion.hpp>
#include <hetero/engine/loaded_model.hpp>
#include <hetero/engine/runtime.hpp>
#include <hetero/runtime/sampler.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

namespace hetero::api {

[[noreturn]] void throw_bad_struct_size(size_t size);

// The defaults from `init`, overlaid with the caller's first struct_size
// bytes (NULL = the defaults). Throws ArgumentError for a struct_size too
// small to hold struct_size itself.
template <class P>
P read_params(const P* given, void (*init)(P*)) {
    P p;
    init(&p);
    if (!given) return p;
    if (given->struct_size < sizeof(size_t)) throw_bad_struct_size(given->struct_size);
    std::memcpy(static_cast<void*>(&p), given, std::min(given->struct_size, sizeof p));
    p.struct_size = sizeof p;
    return p;
}
RuntimeOptions runtime_options(const hetero_runtime_params& p);
ModelLoadOptions load_options(const hetero_model_params& p);
// `n_vocab`: the model's vocabulary, which logit_bias token ids must be in.
SamplerOptions sampler_options(const hetero_generate_params& p, int64_t n_vocab);
CompletionOptions completion_options(const hetero_generate_params& p, int64_t n_vocab);
// The tokens a plain completion stops at: EOS, and BOS (which llama2.c-style
// models emit between stories), as `hetero run` stops.
std::vector<int32_t> end_tokens(const LoadedModel& model);

}  // namespace hetero::api
