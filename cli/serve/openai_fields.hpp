// Which top-level fields of an OpenAI request body `hetero serve` implements,
// which it accepts knowingly although they change nothing here, and which it
// refuses. A field hetero does not implement is never dropped in silence: it
// is answered with 400 naming it (`param`), so a client learns at once that
// it did not get what it asked for.
#pragma once

#include <nlohmann/json.hpp>

namespace hetero::serve {

// Throws ApiError 400 (param = the field) for a field of a chat completion
// (`chat`) or completion request body that hetero does not implement, or a
// value of one it implements only in part (tool_choice other than "none",
// response_format other than text, echo, best_of > 1, a suffix, ...).
void refuse_unimplemented_fields(const nlohmann::json& body, bool chat);

}  // namespace hetero::serve
