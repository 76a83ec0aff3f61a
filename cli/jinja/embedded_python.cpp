#include "embedded_python.hpp"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <string>

namespace hetero::python {

namespace {

std::mutex g_mutex;
bool g_started = false;

void start() {
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.install_signal_handlers = 0;
    config.write_bytecode = 0;
    // The home of the Python the program was built against: a different
    // python3 earlier on PATH (a virtualenv, pyenv) must not supply the
    // standard library.
    PyStatus status = PyConfig_SetBytesString(&config, &config.home, HETERO_PYTHON_HOME);
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status))
        throw Error(fmt::format("cannot start the embedded Python (home {}): {}", HETERO_PYTHON_HOME,
                                status.err_msg ? status.err_msg : "unknown error"));
    // Other threads take the lock through PyGILState_Ensure.
    PyEval_SaveThread();
    g_started = true;
}

}  // namespace

void with_interpreter(const std::function<void()>& fn) {
    std::lock_guard lock(g_mutex);
    if (!g_started) start();
    const PyGILState_STATE gil = PyGILState_Ensure();
    try {
        fn();
    } catch (...) {
        PyGILState_Release(gil);
        throw;
    }
    PyGILState_Release(gil);
}

}  // namespace hetero::python
