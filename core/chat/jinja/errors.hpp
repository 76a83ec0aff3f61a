// What goes wrong inside the engine. JinjaChatTemplate turns these into
// hetero::ChatTemplateError with the template line.
#pragma once

#include <stdexcept>
#include <string>

namespace hetero::jinja {

// The template does not parse (Jinja2's TemplateSyntaxError, and its
// compile-time checks such as an unknown filter).
class SyntaxError : public std::runtime_error {
public:
    SyntaxError(int line, const std::string& message) : std::runtime_error(message), line_(line) {}
    int line() const { return line_; }

private:
    int line_;
};

// A failure while rendering. `kind` is the name Python would give it
// (TypeError, UndefinedError, SecurityError, ...), so messages read like the
// ones template authors know from Jinja2.
class RenderError : public std::runtime_error {
public:
    RenderError(std::string kind, const std::string& message) : std::runtime_error(message), kind_(std::move(kind)) {}
    const std::string& kind() const { return kind_; }

private:
    std::string kind_;
};

// raise_exception(message) called by the template.
class TemplateRaised : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A render budget ran out (time, steps, output, value size, depth) or the
// caller cancelled.
class BudgetExceeded : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void type_error(const std::string& message) { throw RenderError("TypeError", message); }

}  // namespace hetero::jinja
