// JinjaChatTemplate on real template styles: ChatML, a Llama-3-style one,
// templates that raise_exception, break the syntax or touch what the sandbox forbids.
#include "jinja_chat_template.hpp"

#include <gtest/gtest.h>

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
    try {
        JinjaChatTemplate t("{% for m in messages %}\n{{ m.content }\n{% endfor %}");
        FAIL() << "no error";
    } catch (const ChatTemplateError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("syntax error at line 2"), std::string::npos) << what;
    }
    EXPECT_THROW(JinjaChatTemplate("{% if %}"), ChatTemplateError);
    EXPECT_THROW(JinjaChatTemplate("{% for m in messages %}never closed"), ChatTemplateError);
}

TEST(JinjaChatTemplate, SandboxRefusesUnsafeAttributes) {
    JinjaChatTemplate t("{{ messages.__class__.__mro__ }}");
    try {
        t.render({{"user", "a"}}, {});
        FAIL() << "no error";
    } catch (const ChatTemplateError& e) {
        EXPECT_NE(std::string(e.what()).find("unsafe"), std::string::npos) << e.what();
    }
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
