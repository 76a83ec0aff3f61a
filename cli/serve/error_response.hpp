// How a request handler answers a failure: an ApiError as OpenAI's error
// object with its status, a full queue as 503 with Retry-After, a shutdown as
// 503, anything else as 500.
#pragma once

#include "openai_request.hpp"

#include <httplib.h>

namespace hetero::serve {

void send_error(httplib::Response& res, const ApiError& e);
// Call inside a catch block: answers the exception being handled.
void send_current_exception(httplib::Response& res);

}  // namespace hetero::serve
