#include <hetero/chat/jinja_chat_template.hpp>

#include "jinja/errors.hpp"
#include "jinja/globals.hpp"
#include "jinja/json.hpp"
#include "jinja/lexer.hpp"
#include "jinja/parser.hpp"
#include "jinja/renderer.hpp"
#include "jinja/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hetero {

struct JinjaChatTemplate::Parsed {
    jinja::Body body;
};

namespace {

std::string at_line(int line) { return line > 0 ? fmt::format(" at line {}", line) : ""; }

// Runs the template with `variables` under the limits, turning every engine
// failure into a ChatTemplateError that says what and where.
std::string run(const jinja::Body& body, jinja::Dict variables, const JinjaLimits& limits, const std::atomic<bool>* cancel) {
    auto root = std::make_shared<jinja::Scope>();
    jinja::add_globals(*root);
    root->set("tools", jinja::Value::none());
    for (auto& [key, value] : variables.items()) root->set(key.as_string(), value);
    jinja::Budget budget(limits, cancel);
    jinja::Renderer renderer(budget);
    try {
        return renderer.render(body, root);
    } catch (const jinja::TemplateRaised& e) {
        throw ChatTemplateError(fmt::format("the chat template refused the conversation{}: {}", at_line(renderer.line()), e.what()));
    } catch (const jinja::RenderError& e) {
        throw ChatTemplateError(fmt::format("chat template failed{}: {}: {}", at_line(renderer.line()), e.kind(), e.what()));
    } catch (const jinja::BudgetExceeded& e) {
        throw ChatTemplateError(fmt::format("chat template stopped{}: {}", at_line(renderer.line()), e.what()));
    }
}

}  // namespace

JinjaChatTemplate::JinjaChatTemplate(const std::string& source, JinjaLimits limits)
    : parsed_(std::make_unique<Parsed>()), limits_(limits) {
    try {
        parsed_->body = jinja::parse(jinja::tokenize(jinja::sanitize_utf8(source)), limits_.max_depth);
    } catch (const jinja::SyntaxError& e) {
        throw ChatTemplateError(fmt::format("chat template syntax error{}: {}", at_line(e.line()), e.what()));
    }
}

JinjaChatTemplate::~JinjaChatTemplate() = default;

std::string JinjaChatTemplate::render(const std::vector<ChatMessage>& messages, const ChatTemplateContext& context) const {
    return render(messages, context, nullptr);
}

std::string JinjaChatTemplate::render(const std::vector<ChatMessage>& messages, const ChatTemplateContext& context,
                                      const std::atomic<bool>* cancel) const {
    jinja::List list;
    list.reserve(messages.size());
    for (const auto& m : messages) {
        jinja::Dict d;
        d.set("role", jinja::Value::string(jinja::sanitize_utf8(m.role)));
        d.set("content", jinja::Value::string(jinja::sanitize_utf8(m.content)));
        list.push_back(jinja::Value::dict(std::move(d)));
    }
    jinja::Dict variables;
    variables.set("messages", jinja::Value::list(std::move(list)));
    variables.set("add_generation_prompt", jinja::Value::boolean(context.add_generation_prompt));
    variables.set("bos_token", jinja::Value::string(jinja::sanitize_utf8(context.bos_token)));
    variables.set("eos_token", jinja::Value::string(jinja::sanitize_utf8(context.eos_token)));
    return run(parsed_->body, std::move(variables), limits_, cancel);
}

std::string JinjaChatTemplate::render_json(const std::string& variables_json, const std::atomic<bool>* cancel) const {
    nlohmann::ordered_json j;
    try {
        j = nlohmann::ordered_json::parse(variables_json);
    } catch (const nlohmann::json::exception& e) {
        throw ChatTemplateError(std::string("chat template variables are not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw ChatTemplateError("chat template variables must be a JSON object");
    jinja::Value variables;
    try {
        variables = jinja::from_json(j);
    } catch (const jinja::BudgetExceeded& e) {
        throw ChatTemplateError(std::string("chat template variables: ") + e.what());
    }
    return run(parsed_->body, variables.as_dict(), limits_, cancel);
}

}  // namespace hetero
