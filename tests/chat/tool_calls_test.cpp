// Tool calling in the core: the format read from a template, replies parsed
// into calls and content in each format (malformed markers stay content),
// the streaming hold-back, and the grammar that holds a required call to
// the tools' schemas: texts it must take and texts it must refuse, and
// random walks over a real vocabulary's mask that always end in a valid call.
#include <hetero/chat/framed_json_matcher.hpp>
#include <hetero/chat/token_constraint.hpp>
#include <hetero/chat/tool_call_format.hpp>
#include <hetero/chat/tool_call_grammar.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

namespace hetero {
namespace {

using json = nlohmann::json;

std::string read_template(const char* name) {
    std::ifstream in(std::string(HETERO_SOURCE_DIR "/tests/chat/templates/") + name);
    std::stringstream s;
    s << in.rdbuf();
    EXPECT_FALSE(s.str().empty()) << name;
    return s.str();
}

TEST(ToolCallFormat, DetectedFromTheTemplate) {
    EXPECT_EQ(detect_tool_call_style(read_template("qwen2_5_tools.jinja")), ToolCallStyle::hermes);
    EXPECT_EQ(detect_tool_call_style(read_template("hermes_tools_macro.jinja")), ToolCallStyle::hermes);
    EXPECT_EQ(detect_tool_call_style(read_template("llama3_1_tools.jinja")), ToolCallStyle::llama3);
    EXPECT_EQ(detect_tool_call_style("{% if tools %}[AVAILABLE_TOOLS]{{ tools|tojson }}{% endif %}{{ '[TOOL_CALLS]' }}"), ToolCallStyle::mistral);
    for (const char* plain : {"mistral_v3_mixtral.jinja", "llama3.jinja", "qwen2.jinja", "chatml_hetero_fallback.jinja", "gemma.jinja"})
        EXPECT_EQ(detect_tool_call_style(read_template(plain)), ToolCallStyle::none) << plain;
}

TEST(ToolCallFormat, HermesCallsAndContent) {
    const ParsedReply r = parse_tool_calls(ToolCallStyle::hermes,
                                           "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bern\", \"a\": 1}}\n</tool_call>\n"
                                           "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>");
    ASSERT_EQ(r.calls.size(), 2u);
    EXPECT_EQ(r.calls[0].name, "get_weather");
    EXPECT_EQ(r.calls[0].arguments, R"({"city":"Bern","a":1})");  // the order written, compact
    EXPECT_EQ(r.calls[1].name, "get_time");
    EXPECT_EQ(r.calls[1].arguments, "{}");
    EXPECT_EQ(r.content, "Let me look.");
}

TEST(ToolCallFormat, HermesMalformedMarkersStayContent) {
    for (const char* text : {"<tool_call>\n{\"name\": \"f\", \"arguments\": {}}",              // never closed
                             "<tool_call>\n{\"name\": \"f\", \"arguments\": {}\n</tool_call>",  // JSON cut short
                             "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",                   // no arguments
                             "<tool_call>\n{\"arguments\": {}}\n</tool_call>",                 // no name
                             "<tool_call>\n{\"name\": \"f\", \"arguments\": [1]}\n</tool_call>",  // arguments not an object
                             "I use <tool_call> tags like </tool_call> this."}) {
        const ParsedReply r = parse_tool_calls(ToolCallStyle::hermes, text);
        EXPECT_TRUE(r.calls.empty()) << text;
        EXPECT_EQ(r.content, text);
    }
    // A malformed block stays as written beside a good one.
    const ParsedReply mixed = parse_tool_calls(ToolCallStyle::hermes, "<tool_call>oops</tool_call> <tool_call>{\"name\": \"g\", \"arguments\": \"{\\\"x\\\": 2}\"}</tool_call>");
    ASSERT_EQ(mixed.calls.size(), 1u);
    EXPECT_EQ(mixed.calls[0].name, "g");
    EXPECT_EQ(mixed.calls[0].arguments, R"({"x":2})");  // arguments written as a JSON string are read too
    EXPECT_EQ(mixed.content, "<tool_call>oops</tool_call>");
}

TEST(ToolCallFormat, Llama3WholeReplyIsTheCall) {
    ParsedReply r = parse_tool_calls(ToolCallStyle::llama3, " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}\n");
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0].name, "get_weather");
    EXPECT_EQ(r.calls[0].arguments, R"({"city":"Oslo"})");
    EXPECT_EQ(r.content, "");
    r = parse_tool_calls(ToolCallStyle::llama3, "<|python_tag|>{\"name\": \"f\", \"arguments\": {}}");
    ASSERT_EQ(r.calls.size(), 1u);
    for (const char* text : {"The answer is {\"name\": \"f\", \"parameters\": {}}", "{\"name\": \"f\", \"parameters\": {}} and more",
                             "{\"title\": \"f\", \"parameters\": {}}", "{\"name\": \"f\", \"parameters\": {}", "plain words"}) {
        r = parse_tool_calls(ToolCallStyle::llama3, text);
        EXPECT_TRUE(r.calls.empty()) << text;
        EXPECT_EQ(r.content, text);
    }
}

TEST(ToolCallFormat, MistralMarkerAndArray) {
    ParsedReply r = parse_tool_calls(ToolCallStyle::mistral,
                                     "Sure. [TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {\"n\": 1}}, {\"name\": \"b\", \"arguments\": {}}]");
    ASSERT_EQ(r.calls.size(), 2u);
    EXPECT_EQ(r.calls[0].name, "a");
    EXPECT_EQ(r.calls[0].arguments, R"({"n":1})");
    EXPECT_EQ(r.calls[1].name, "b");
    EXPECT_EQ(r.content, "Sure.");
    for (const char* text : {"[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {}}", "[TOOL_CALLS] []", "[TOOL_CALLS] {\"name\": \"a\", \"arguments\": {}}",
                             "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {}}, 3]", "no marker [{\"name\": \"a\", \"arguments\": {}}]"}) {
        r = parse_tool_calls(ToolCallStyle::mistral, text);
        EXPECT_TRUE(r.calls.empty()) << text;
        EXPECT_EQ(r.content, text);
    }
}

TEST(ToolCallFormat, SettledContentStopsWhereACallMayStart) {
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::hermes, "Hello <tool"), 6u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::hermes, "Hello <tool_call>\n{"), 6u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::hermes, "a <b"), 4u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::hermes, "x<"), 1u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::mistral, "ok [TOOL"), 3u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::mistral, "ok [x"), 5u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::llama3, "  {\"na"), 0u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::llama3, "\n"), 0u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::llama3, "<|py"), 0u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::llama3, "Hi {"), 4u);
    EXPECT_EQ(settled_content_bytes(ToolCallStyle::none, "<tool_call>"), 11u);
}

const std::vector<ToolSpec> kTools = {
    {"get_weather", R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}, "unit": {"enum": ["c", "f"]}},
                      "required": ["city", "unit"], "additionalProperties": false})"},
    {"get_time", ""},
};

bool takes(const ToolCallGrammar& g, std::string_view text) {
    FramedJsonMatcher m(g.schema, g.framing);
    return m.feed(text) && m.complete();
}

TEST(ToolCallGrammar, HermesHoldsCallsToTheSchemas) {
    const ToolCallGrammar one = tool_call_grammar(ToolCallStyle::hermes, kTools, false);
    const std::string weather = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bern\", \"unit\": \"c\"}}\n</tool_call>";
    const std::string time = "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{\"tz\":\"UTC\"}}\n</tool_call>";
    EXPECT_TRUE(takes(one, weather));
    EXPECT_TRUE(takes(one, time));
    EXPECT_FALSE(takes(one, weather + "\n" + time)) << "parallel_tool_calls false: exactly one call";
    EXPECT_FALSE(takes(one, "<tool_call>\n{\"name\": \"get_wether\", \"arguments\": {}}\n</tool_call>"));  // not a listed tool
    EXPECT_FALSE(takes(one, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bern\", \"unit\": \"k\"}}\n</tool_call>"));
    EXPECT_FALSE(takes(one, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bern\"}}\n</tool_call>"));  // unit required
    EXPECT_FALSE(takes(one, "<tool_call>\n{\"name\": \"get_time\"}\n</tool_call>"));                                      // no arguments
    EXPECT_FALSE(takes(one, "Sure! " + weather));
    EXPECT_FALSE(takes(one, weather.substr(0, weather.size() - 1)));  // not whole
    const ToolCallGrammar many = tool_call_grammar(ToolCallStyle::hermes, kTools, true);
    EXPECT_TRUE(takes(many, weather + "\n" + time));
    EXPECT_TRUE(takes(many, weather));
    EXPECT_FALSE(takes(many, weather + "\n"));
    // What the grammar takes, the parser reads back as the same calls.
    const ParsedReply r = parse_tool_calls(ToolCallStyle::hermes, weather + "\n" + time);
    ASSERT_EQ(r.calls.size(), 2u);
    EXPECT_EQ(r.calls[1].arguments, R"({"tz":"UTC"})");
}

TEST(ToolCallGrammar, Llama3AndMistral) {
    const ToolCallGrammar llama = tool_call_grammar(ToolCallStyle::llama3, kTools, true);
    EXPECT_TRUE(takes(llama, R"({"name": "get_weather", "parameters": {"city": "Oslo", "unit": "f"}})"));
    EXPECT_FALSE(takes(llama, R"({"name": "get_weather", "arguments": {"city": "Oslo", "unit": "f"}})"));
    const ToolCallGrammar mistral = tool_call_grammar(ToolCallStyle::mistral, kTools, false);
    EXPECT_EQ(mistral.implied_prefix, "[TOOL_CALLS]");
    EXPECT_TRUE(takes(mistral, R"([{"name": "get_time", "arguments": {}}])"));
    EXPECT_FALSE(takes(mistral, R"([{"name": "get_time", "arguments": {}}, {"name": "get_time", "arguments": {}}])"));
    EXPECT_FALSE(takes(mistral, "[]"));
    EXPECT_TRUE(takes(tool_call_grammar(ToolCallStyle::mistral, kTools, true), R"([{"name": "get_time", "arguments": {}}, {"name": "get_time", "arguments": {}}])"));
}

TEST(ToolCallGrammar, RefusesWhatItCannotEnforceNamingTheTool) {
    try {
        tool_call_grammar(ToolCallStyle::hermes, {{"a", "{}"}, {"b", R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}})"}}, false);
        FAIL() << "minimum is not enforced and must be refused";
    } catch (const JsonSchemaError& e) {
        EXPECT_NE(std::string(e.what()).find("tools[1]"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("minimum"), std::string::npos) << e.what();
    }
    EXPECT_THROW(tool_call_grammar(ToolCallStyle::none, kTools, false), JsonSchemaError);
    EXPECT_THROW(tool_call_grammar(ToolCallStyle::hermes, {}, false), JsonSchemaError);
}

TEST(FramedJsonMatcher, WithoutFramingItIsTheJsonMatcher) {
    const auto s = JsonSchema::compile(R"({"type": "integer"})");
    FramedJsonMatcher m(s);
    EXPECT_TRUE(m.feed("12"));
    EXPECT_TRUE(m.complete());
    EXPECT_TRUE(m.can_continue());  // more digits may follow
    EXPECT_FALSE(m.feed("x"));
    // A number ends where the suffix begins.
    FramedJsonMatcher framed(s, {"<n>", "</n>", ",", 2});
    EXPECT_TRUE(framed.feed("<n>12</n>,<n>3</n>"));
    EXPECT_TRUE(framed.complete());
    EXPECT_FALSE(framed.can_continue());
    EXPECT_FALSE(framed.feed(","));
}

size_t code_points(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

// Generation through stories260K's vocabulary held to the grammar: every walk
// that ends is a call the parser reads back, of a listed tool, whose
// arguments fit its schema.
TEST(ToolCallGrammar, RandomWalksEndInValidCalls) {
    const GgufFile gguf = GgufFile::open(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const std::unique_ptr<Tokenizer> tok = Tokenizer::create(vocab_from_gguf(gguf));
    const auto trie = std::make_shared<const TokenTrie>(*tok);
    const int32_t eos = tok->eos();
    int finished = 0;
    for (ToolCallStyle style : {ToolCallStyle::hermes, ToolCallStyle::llama3, ToolCallStyle::mistral}) {
        const ToolCallGrammar g = tool_call_grammar(style, kTools, false);
        for (uint32_t seed = 1; seed <= 12; ++seed) {
            std::mt19937 rng(seed);
            TokenConstraint c(g.schema, trie, g.framing);
            std::string text;
            bool ended = false;
            for (int step = 0; step < 400 && !ended; ++step) {
                std::vector<float> logits(size_t(tok->n_vocab()), 0.0f);
                c.mask(logits, {eos});
                std::vector<int32_t> allowed, structural;
                for (size_t i = 0; i < logits.size(); ++i)
                    if (std::isfinite(logits[i])) allowed.push_back(int32_t(i));
                ASSERT_FALSE(allowed.empty()) << "no token allowed after " << text;
                for (int32_t a : allowed)
                    if (a != eos && trie->text(a).find_first_of("\"{}[],:<>/") != std::string::npos) structural.push_back(a);
                const std::vector<int32_t>& pool = structural.empty() || rng() % 2 ? allowed : structural;
                const int32_t t = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
                if (t == eos) {
                    ASSERT_TRUE(c.complete()) << text;
                    break;
                }
                ASSERT_TRUE(c.accept(t)) << "an allowed token was refused: " << t << " after " << text;
                text += trie->text(t);
                ended = !c.can_continue();
            }
            if (!ended && !c.complete()) continue;  // a walk may wander in a free string
            ++finished;
            const ParsedReply r = parse_tool_calls(style, g.implied_prefix + text);
            ASSERT_EQ(r.calls.size(), 1u) << tool_call_style_name(style) << ": " << text;
            const json args = json::parse(r.calls[0].arguments);
            if (r.calls[0].name == "get_weather") {
                EXPECT_TRUE(args.size() == 2 && args["city"].is_string() && code_points(args["city"].get<std::string>()) <= 12 &&
                            (args["unit"] == "c" || args["unit"] == "f"))
                    << text;
            } else {
                EXPECT_EQ(r.calls[0].name, "get_time") << text;
                EXPECT_TRUE(args.is_object()) << text;
            }
        }
    }
    EXPECT_GE(finished, 18) << "too few walks ended to tell anything";
}

}  // namespace
}  // namespace hetero
