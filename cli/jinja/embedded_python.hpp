// One Python interpreter for the whole process, started on first use with
// the system's Python home, without its signal handlers (Ctrl-C stays ours)
// and isolated from PYTHON* variables. Calls are serialised: a mutex, then
// the GIL.
#pragma once

#include <functional>
#include <mutex>

namespace hetero::python {

// Runs `fn` holding the interpreter lock; starts Python first if needed
// (throws hetero::Error when it cannot start).
void with_interpreter(const std::function<void()>& fn);

}  // namespace hetero::python
