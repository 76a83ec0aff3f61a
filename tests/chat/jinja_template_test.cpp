// JinjaChatTemplate on real template styles: ChatML, a Llama-3-style one,
// templates that raise_exception, break the syntax or touch what the sandbox
// forbids, and hostile templates that must stop at a render budget.
// (tests/chat/jinja_differential.py compares the engine with Jinja2 itself.)
#include <hetero/chat/jinja_chat_template.hpp>

#include "../unit/error_message.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

using hetero::ChatMessage;
using hetero::ChatTemplateContext;
using hetero::ChatTemplateError;
using hetero::JinjaChatTemplate;

namespace {

const std::vector<ChatMessage> kTwoTurns = {
    {"system", "You are terse."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Café?"}};

ChatTemplateContext llama_context(bool generation_prompt = true) {
    ChatTemplateContext c;
    c.add_generation_prompt = generation_prompt;
    c.bos_token = "<|begin_of_text|>";
    c.eos_token = "<|end_of_text|>";
    return c;
}

// The ChatTemplateError message of rendering one user message; of compiling `source`.
std::string render_error(const JinjaChatTemplate& t, const std::atomic<bool>* cancel = nullptr) {
    return hetero::test::error_message<ChatTemplateError>([&] { t.render({{"user", "a"}}, {}, cancel); });
}
std::string compile_error(const std::string& source) {
    return hetero::test::error_message<ChatTemplateError>([&] { JinjaChatTemplate t(source); });
}

// The shape of Llama 3's template: BOS, a header per message, <|eot_id|>
// after each, contents trimmed.
const char* kLlama3Style =
    "{% set loop_messages = messages %}"
    "{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' %}"
    "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
    "{{ content }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

}  // namespace

TEST(JinjaChatTemplate, RendersChatML) {
    JinjaChatTemplate t(hetero::kChatMLTemplate);
    EXPECT_EQ(t.render(kTwoTurns, {}),
              "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
              "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nCafé?<|im_end|>\n<|im_start|>assistant\n");
    ChatTemplateContext no_prompt;
    no_prompt.add_generation_prompt = false;
    EXPECT_EQ(t.render({{"user", "x"}}, no_prompt), "<|im_start|>user\nx<|im_end|>\n");
}

TEST(JinjaChatTemplate, RendersLlama3Style) {
    JinjaChatTemplate t(kLlama3Style);
    EXPECT_EQ(t.render({{"user", "  Hi  "}, {"assistant", "Hello."}}, llama_context()),
              "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(JinjaChatTemplate, BlocksAreTrimmedAsTransformersDoes) {
    // trim_blocks drops the newline after a tag, lstrip_blocks the indentation before it.
    JinjaChatTemplate t("{% for m in messages %}\n    {% if m.role == 'user' %}\n[{{ m.content }}]\n    {% endif %}\n{% endfor %}");
    EXPECT_EQ(t.render({{"user", "a"}, {"assistant", "b"}, {"user", "c"}}, {}), "[a]\n[c]\n");
}

TEST(JinjaChatTemplate, RaiseExceptionBecomesAnErrorWithItsMessage) {
    JinjaChatTemplate t(
        "{% for message in messages %}\n"
        "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}\n"
        "{% endif %}\n"
        "{{ message['content'] }}\n"
        "{% endfor %}");
    EXPECT_EQ(t.render({{"user", "a"}, {"assistant", "b"}}, {}), "a\nb\n");
    try {
        t.render({{"user", "a"}, {"user", "b"}}, {});
        FAIL() << "no error";
    } catch (const ChatTemplateError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("refused"), std::string::npos) << what;
        EXPECT_NE(what.find("Conversation roles must alternate"), std::string::npos) << what;
        EXPECT_NE(what.find("line 3"), std::string::npos) << what;
    }
}

TEST(JinjaChatTemplate, SyntaxErrorNamesTheLine) {
    const std::string what = compile_error("{% for m in messages %}\n{{ m.content }\n{% endfor %}");
    EXPECT_NE(what.find("syntax error at line 2"), std::string::npos) << what;
    EXPECT_THROW(JinjaChatTemplate("{% if %}"), ChatTemplateError);
    EXPECT_THROW(JinjaChatTemplate("{% for m in messages %}never closed"), ChatTemplateError);
}

TEST(JinjaChatTemplate, SandboxRefusesUnsafeAttributes) {
    const std::string what = render_error(JinjaChatTemplate("{{ messages.__class__.__mro__ }}"));
    EXPECT_NE(what.find("unsafe"), std::string::npos) << what;
    // Immutable: the messages cannot be changed from inside.
    JinjaChatTemplate append("{{ messages.append({'role': 'x'}) }}");
    EXPECT_THROW(append.render({{"user", "a"}}, {}), ChatTemplateError);
}

TEST(JinjaChatTemplate, GlobalsTemplatesExpect) {
    char year[8];
    const std::time_t now = std::time(nullptr);
    std::strftime(year, sizeof year, "%Y", std::localtime(&now));
    JinjaChatTemplate t(
        "{{ strftime_now('%Y') }}|{{ tools is none }}|{{ bos_token }}{{ eos_token }}|"
        "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}{{ m.content | tojson }}{% endfor %}");
    const std::string out = t.render({{"user", "é\"x"}, {"user", "never"}}, llama_context());
    EXPECT_EQ(out, std::string(year) + "|True|<|begin_of_text|><|end_of_text|>|\"é\\\"x\"");
}

TEST(JinjaChatTemplate, UndefinedVariablesRenderEmptyAndErrorsAreReported) {
    JinjaChatTemplate t("[{{ no_such_thing }}]");
    EXPECT_EQ(t.render({}, {}), "[]");
    JinjaChatTemplate bad("{{ messages[0]['content'] + 1 }}");
    EXPECT_THROW(bad.render({{"user", "a"}}, {}), ChatTemplateError);
}

TEST(JinjaChatTemplate, RendersFromManyThreads) {
    JinjaChatTemplate t(hetero::kChatMLTemplate);
    const std::string expected = t.render(kTwoTurns, {});
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] {
            for (int j = 0; j < 50; ++j)
                if (t.render(kTwoTurns, {}) != expected) ++wrong;
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0);
}

TEST(JinjaChatTemplate, HugeStringRepetitionStopsAtTheValueBudget) {
    const auto start = std::chrono::steady_clock::now();
    const std::string what = render_error(JinjaChatTemplate("{{ 'x' * 2000000000 }}"));
    EXPECT_NE(what.find("value size budget"), std::string::npos) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
    // Doubling in a loop hits the same budget.
    const std::string doubling = render_error(JinjaChatTemplate(
        "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s | length }}"));
    EXPECT_NE(doubling.find("value size budget"), std::string::npos) << doubling;
    // replace() that would explode is refused before it allocates.
    const std::string replace = render_error(JinjaChatTemplate("{{ ('x' * 1000000) | replace('x', 'y' * 1000000) }}"));
    EXPECT_NE(replace.find("value size budget"), std::string::npos) << replace;
}

TEST(JinjaChatTemplate, NestedLoopsStopAtTheStepBudget) {
    const char* nested = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    // With the default limits: the step or the time budget, whichever comes first.
    const auto start = std::chrono::steady_clock::now();
    const std::string what = render_error(JinjaChatTemplate(nested));
    EXPECT_NE(what.find("budget"), std::string::npos) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    hetero::JinjaLimits limits;
    limits.time_limit = std::chrono::hours(1);
    limits.max_steps = 100'000;
    const std::string steps = render_error(JinjaChatTemplate(nested, limits));
    EXPECT_NE(steps.find("step budget (100000 steps)"), std::string::npos) << steps;
    // Jinja2's own sandbox limit on range() holds too.
    EXPECT_NE(render_error(JinjaChatTemplate("{{ range(100001) | length }}")).find("MAX_RANGE"), std::string::npos);
}

TEST(JinjaChatTemplate, TimeBudgetAndCancelStopARender) {
    hetero::JinjaLimits limits;
    limits.time_limit = std::chrono::milliseconds(50);
    limits.max_steps = UINT64_MAX;
    const char* forever = "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}";
    const auto start = std::chrono::steady_clock::now();
    const std::string what = render_error(JinjaChatTemplate(forever, limits));
    EXPECT_NE(what.find("time budget (50 ms)"), std::string::npos) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

    limits.time_limit = std::chrono::hours(1);
    JinjaChatTemplate t(forever, limits);
    std::atomic<bool> cancel{false};
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        cancel = true;
    });
    const std::string cancelled = render_error(t, &cancel);
    stopper.join();
    EXPECT_NE(cancelled.find("cancelled"), std::string::npos) << cancelled;
}

TEST(JinjaChatTemplate, OutputAndDepthBudgets) {
    hetero::JinjaLimits limits;
    limits.max_output_bytes = 1000;
    const std::string output = render_error(JinjaChatTemplate("{% for i in range(2000) %}x{% endfor %}", limits));
    EXPECT_NE(output.find("output budget (1000 bytes)"), std::string::npos) << output;
    // Unbounded macro recursion.
    const std::string depth = render_error(JinjaChatTemplate("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"));
    EXPECT_NE(depth.find("depth budget"), std::string::npos) << depth;
    // Deep nesting in the source is refused by the parser, not by the stack.
    const std::string parens = std::string(5000, '(') + "1" + std::string(5000, ')');
    const std::string deep = compile_error("{{ " + parens + " }}");
    EXPECT_NE(deep.find("nested too deeply"), std::string::npos) << deep;
}

TEST(JinjaChatTemplate, RendersJsonVariablesWithToolCalls) {
    JinjaChatTemplate t(
        "{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls %}"
        "<call>{{ c.function.name }}({{ c.function.arguments | tojson }})</call>{% endfor %}"
        "{% else %}[{{ m.role }}:{{ m.content }}]{% endif %}{% endfor %}{{ tools | length if tools else 'no tools' }}");
    EXPECT_EQ(t.render_json(R"({"messages": [{"role": "user", "content": "Zürich?"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Zürich", "days": [1, 2.5]}}}]}]})"),
              "[user:Zürich?]<call>weather({\"city\": \"Zürich\", \"days\": [1, 2.5]})</call>no tools");
    EXPECT_THROW(t.render_json("[1, 2]"), ChatTemplateError);
    EXPECT_THROW(t.render_json("{not json"), ChatTemplateError);
}

TEST(JinjaChatTemplate, RuntimeErrorsNameTheLineAndTheKind) {
    const std::string what = render_error(JinjaChatTemplate("line one\n{% set x = 1 %}\n{{ x + 'a' }}"));
    EXPECT_NE(what.find("at line 3"), std::string::npos) << what;
    EXPECT_NE(what.find("TypeError"), std::string::npos) << what;
    const std::string undefined = render_error(JinjaChatTemplate("{{ nothing.attribute }}"));
    EXPECT_NE(undefined.find("UndefinedError: 'nothing' is undefined"), std::string::npos) << undefined;
    const std::string unknown = compile_error("ok\n{{ 'x' | no_such_filter }}");
    EXPECT_NE(unknown.find("syntax error at line 2: No filter named 'no_such_filter'"), std::string::npos) << unknown;
}

TEST(JinjaChatTemplate, PythonFormattingOfValues) {
    JinjaChatTemplate t(
        "{{ [1, 'a', \"it's\", none, true, 1.0, {'k': (1,)}] }}|{{ 1e16 }}|{{ 0.0001 }}|{{ 1 / 3 }}|{{ 10 / 2 }}|"
        "{{ messages[0] }}|{{ 'é' | tojson }}|{{ 7 // -2 }}|{{ -7 % 3 }}|{{ 2.5 | round }}");
    EXPECT_EQ(t.render({{"user", "a"}}, {}),
              "[1, 'a', \"it's\", None, True, 1.0, {'k': (1,)}]|1e+16|0.0001|0.3333333333333333|5.0|"
              "{'role': 'user', 'content': 'a'}|\"é\"|-4|2|2.0");
}

TEST(JinjaChatTemplate, DeepValuesFailOrFreeWithoutOverflowingTheStack) {
    // A list wrapped in a list on every iteration stops at the nesting limit.
    const std::string nested = render_error(JinjaChatTemplate(
        "{% set h = namespace(v=none) %}{% for i in range(100000) %}{% set h.v = [h.v] %}{% endfor %}{{ h.v | length }}"));
    EXPECT_NE(nested.find("nests deeper than 500"), std::string::npos) << nested;
    // A chain of 100000 namespaces renders and is freed (without recursing 100000 deep).
    hetero::JinjaLimits slow_builds_too;  // sanitizer builds run this several times slower
    slow_builds_too.time_limit = std::chrono::minutes(2);
    JinjaChatTemplate chain(
        "{% set h = namespace(tail=namespace(x=none)) %}{% set root = h.tail %}"
        "{% for i in range(100000) %}{% set t = h.tail %}{% set n = namespace(x=none) %}{% set t.x = n %}{% set h.tail = n %}{% endfor %}"
        "{{ root.x.x.x is defined }}",
        slow_builds_too);
    EXPECT_EQ(chain.render({{"user", "a"}}, {}), "True");
    // Deeply nested JSON variables are refused, not recursed into.
    std::string deep_json = "{\"messages\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    EXPECT_THROW(chain.render_json(deep_json), ChatTemplateError);
}
