#include "jinja_chat_template.hpp"

#include "embedded_python.hpp"
#include "jinja_script.hpp"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hetero {

namespace {

// Owns one reference; only touched with the interpreter lock held.
struct PyRef {
    PyObject* p = nullptr;
    explicit PyRef(PyObject* o = nullptr) : p(o) {}
    PyRef(const PyRef&) = delete;
    PyRef& operator=(const PyRef&) = delete;
    ~PyRef() { Py_XDECREF(p); }
    PyObject* release() {
        PyObject* o = p;
        p = nullptr;
        return o;
    }
};

// The current Python exception as text (and cleared).
std::string python_error() {
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    PyRef t(type), v(value), b(tb);
    if (!value) return "unknown Python error";
    PyRef s(PyObject_Str(value));
    const char* text = s.p ? PyUnicode_AsUTF8(s.p) : nullptr;
    if (!text) {
        PyErr_Clear();
        return "unprintable Python error";
    }
    return text;
}

std::string utf8(PyObject* o) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) throw Error("chat template: a result is not text: " + python_error());
    return std::string(s, size_t(n));
}

// The helper module, loaded once (with the interpreter lock held).
PyObject* script_module() {
    static PyObject* module = nullptr;
    if (module) return module;
    PyRef code(Py_CompileString(jinja_script::kSource, "<hetero-jinja>", Py_file_input));
    if (!code.p) throw Error("chat template engine: " + python_error());
    PyRef mod(PyImport_ExecCodeModule("hetero_jinja", code.p));
    if (!mod.p) throw Error("chat template engine: " + python_error());
    module = mod.release();
    return module;
}

// (kind, line, message) -> the error hetero reports.
[[noreturn]] void throw_template_error(const std::string& kind, long line, const std::string& message) {
    const std::string where = line > 0 ? fmt::format(" at line {}", line) : "";
    if (kind == "missing")
        throw Error("chat templates need Jinja2 for the system's Python 3 (Debian: apt-get install python3-jinja2): " + message);
    if (kind == "syntax") throw ChatTemplateError(fmt::format("chat template syntax error{}: {}", where, message));
    if (kind == "raised") throw ChatTemplateError(fmt::format("the chat template refused the conversation{}: {}", where, message));
    throw ChatTemplateError(fmt::format("chat template failed{}: {}", where, message));
}

}  // namespace

struct JinjaChatTemplate::Compiled {
    PyObject* template_object = nullptr;
};

JinjaChatTemplate::JinjaChatTemplate(const std::string& source) : compiled_(std::make_unique<Compiled>()) {
    python::with_interpreter([&] {
        PyRef result(PyObject_CallMethod(script_module(), "compile_template", "s#", source.data(), Py_ssize_t(source.size())));
        if (!result.p) throw Error("chat template engine: " + python_error());
        PyObject* tmpl = PyTuple_GetItem(result.p, 0);
        PyObject* err = PyTuple_GetItem(result.p, 1);
        if (err && err != Py_None) {
            throw_template_error(utf8(PyTuple_GetItem(err, 0)), PyLong_AsLong(PyTuple_GetItem(err, 1)), utf8(PyTuple_GetItem(err, 2)));
        }
        Py_INCREF(tmpl);
        compiled_->template_object = tmpl;
    });
}

JinjaChatTemplate::~JinjaChatTemplate() {
    if (!compiled_ || !compiled_->template_object) return;
    PyObject* tmpl = compiled_->template_object;
    python::with_interpreter([tmpl] { Py_DECREF(tmpl); });
}

std::string JinjaChatTemplate::render(const std::vector<ChatMessage>& messages, const ChatTemplateContext& context) const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : messages) list.push_back({{"role", m.role}, {"content", m.content}});
    // Invalid UTF-8 in a message becomes U+FFFD rather than failing the dump.
    const std::string messages_json = list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    python::with_interpreter([&] {
        PyRef result(PyObject_CallMethod(script_module(), "render", "Os#Os#s#", compiled_->template_object, messages_json.data(),
                                         Py_ssize_t(messages_json.size()), context.add_generation_prompt ? Py_True : Py_False,
                                         context.bos_token.data(), Py_ssize_t(context.bos_token.size()), context.eos_token.data(),
                                         Py_ssize_t(context.eos_token.size())));
        if (!result.p) throw Error("chat template engine: " + python_error());
        const std::string kind = utf8(PyTuple_GetItem(result.p, 0));
        const std::string text = utf8(PyTuple_GetItem(result.p, 2));
        if (kind != "ok") throw_template_error(kind, PyLong_AsLong(PyTuple_GetItem(result.p, 1)), text);
        out = text;
    });
    return out;
}

}  // namespace hetero
