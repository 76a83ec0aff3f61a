#include "error_response.hpp"

#include "generation_queue.hpp"
#include "openai_response.hpp"

namespace hetero::serve {

void send_error(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    res.set_content(to_text(error_body(e)), "application/json");
}

void send_current_exception(httplib::Response& res) {
    try {
        throw;
    } catch (const ApiError& e) {
        send_error(res, e);
    } catch (const QueueFull& e) {
        send_error(res, ApiError(503, "server_error", e.what(), "", "server_busy"));
        res.set_header("Retry-After", "1");
    } catch (const ShuttingDown& e) {
        send_error(res, ApiError(503, "server_error", e.what(), "", "server_shutting_down"));
    } catch (const std::exception& e) {
        send_error(res, ApiError(500, "server_error", e.what()));
    }
}

}  // namespace hetero::serve
