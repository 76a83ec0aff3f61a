// Structured output: the schema compiler's refusals, the byte-level matcher
// on texts a schema allows and texts it does not, and generation through a
// real vocabulary's mask: random walks over the allowed tokens always end in
// text that parses and fits the schema.
#include <hetero/chat/json_schema_matcher.hpp>
#include <hetero/chat/token_constraint.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <random>

namespace hetero {
namespace {

using json = nlohmann::json;

std::shared_ptr<const JsonSchema> schema(const char* text) { return JsonSchema::compile(text); }

// Whether the whole text is accepted and complete; else the byte offset where it failed (or its size: not complete).
std::pair<bool, size_t> match(const std::shared_ptr<const JsonSchema>& s, std::string_view text) {
    JsonMatcher m(s);
    for (size_t i = 0; i < text.size(); ++i)
        if (!m.feed(text[i])) return {false, i};
    return {m.complete(), text.size()};
}

const char* kPerson = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 8},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "role": {"enum": ["admin", "user", 7]},
    "note": {"anyOf": [{"type": "string"}, {"type": "null"}]}
  },
  "required": ["name", "age"],
  "additionalProperties": false
})";

TEST(JsonSchemaMatcher, AcceptsWhatTheSchemaAllows) {
    const auto s = schema(kPerson);
    for (const char* ok : {R"({"name":"Al","age":3})", R"({ "name": "Al", "age": -3, "tags": ["a", "b"] })",
                           "{\n  \"age\": 0,\n  \"name\": \"\\u00e9t\\u00e9\",\n  \"role\": 7\n}", R"({"name":"Zoë","age":1,"note":null})",
                           R"({"name":"x","age":1,"note":"a \"quoted\" word","role":"admin","tags":[]})"})
        EXPECT_TRUE(match(s, ok).first) << ok << " failed at " << match(s, ok).second;
}

TEST(JsonSchemaMatcher, RefusesWhatItDoesNot) {
    const auto s = schema(kPerson);
    struct Case {
        const char* text;
        size_t fails_at;  // the byte refused; text size: accepted but not complete
    };
    for (const Case& c : std::initializer_list<Case>{
             {R"({"name":"Al"})", 12},                    // age is required
             {R"({"name":"Al","age":3.5})", 20},          // an integer
             {R"({"nam":1})", 5},                         // no such property
             {R"({"name":"Al","name")", 15},              // twice: no unseen property starts with "n"
             {R"({"name":"","age":1})", 9},               // minLength 1
             {R"({"name":"123456789","age":1})", 17},     // maxLength 8
             {R"({"name":"a","age":1,"tags":["a","b","c"]})", 35},
             {R"({"name":"a","age":1,"role":"root"})", 28},
             {R"({"name":"a","age":1,"note":5})", 27},
             {R"({"name":"a","age":01})", 19},           // no leading zeros
             {R"({"name":"a\x","age":1})", 11},          // not an escape
             {R"({"name":"a","age":1} x)", 20},          // nothing after the value
             {R"({"name":"a","age":1,})", 20},           // no trailing comma
             {R"({"name":"a","age":1)", 19},             // not closed
         }) {
        const auto [ok, at] = match(s, c.text);
        EXPECT_FALSE(ok) << c.text;
        EXPECT_EQ(at, c.fails_at) << c.text;
    }
}

TEST(JsonSchemaMatcher, NumbersLiteralsAndReferences) {
    const auto n = schema(R"({"type": "number"})");
    for (const char* ok : {"0", "-0.5e+3", "12.25", "1E9", "9e99"}) EXPECT_TRUE(match(n, ok).first) << ok;
    for (const char* bad : {"-", "1.", ".5", "1e", "+1", "0x1", "12345678901234567", "1.12345678901234567", "1e1234", "5E+352"})
        EXPECT_FALSE(match(n, bad).first) << bad;
    EXPECT_TRUE(match(n, "1234567890123456.1234567890123456e99").first);
    const auto e = schema(R"({"enum": [1, 12, "1"]})");
    for (const char* ok : {"1", "12", "\"1\""}) EXPECT_TRUE(match(e, ok).first) << ok;
    EXPECT_FALSE(match(e, "123").first);
    // A recursive tree through $defs.
    const auto tree = schema(R"({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "properties": {
        "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["v"], "additionalProperties": false}}})");
    EXPECT_TRUE(match(tree, R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4,"kids":[]}]}]})").first);
    EXPECT_FALSE(match(tree, R"({"v":1,"kids":[{"w":2}]})").first);
    // Any object, with anything inside.
    const auto any = JsonSchema::any_object();
    EXPECT_TRUE(match(any, R"({"a":[1,{"b":null},true,"x"],"c":{}})").first);
    EXPECT_FALSE(match(any, R"([1])").first);
    EXPECT_FALSE(match(any, R"("text")").first);
}

TEST(JsonSchemaMatcher, WhitespaceIsOneSpaceOrANewlineAndIndent) {
    const auto any = JsonSchema::any_object();
    for (const char* ok : {"{}", "{ }", "{\n  \"a\": [1, 2],\n\t\"b\": {}\n}", " {\"a\" : 1}"})
        EXPECT_TRUE(match(any, ok).first) << ok;
    for (const char* bad : {"{  }", "{\n\n}", "{ \n}", "\r{}"}) EXPECT_FALSE(match(any, bad).first) << bad;
    EXPECT_TRUE(match(any, "{\n" + std::string(20, ' ') + "}").first);
    EXPECT_FALSE(match(any, "{\n" + std::string(21, ' ') + "}").first);
}

TEST(JsonSchemaCompile, RefusesWhatItCannotEnforceNamingThePath) {
    const auto refused = [](const char* text, const char* expect) {
        try {
            JsonSchema::compile(text);
            ADD_FAILURE() << "accepted: " << text;
        } catch (const JsonSchemaError& e) {
            EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
        }
    };
    refused(R"({"type":"object","properties":{"x":{"type":"string","pattern":"^a"}}})", "properties.x.pattern");
    refused(R"({"type":"integer","minimum":3})", "minimum");
    refused(R"({"type":"objekt"})", "\"objekt\" is not a JSON type");
    refused(R"({"requried":["a"]})", "requried");
    refused(R"({"$ref":"#/$defs/missing"})", "points nowhere");
    refused(R"({"type":"object","properties":{"a":{}},"required":["b"]})", "\"b\" is not one of the properties");
    refused(R"({"type":"string","anyOf":[{"type":"string"}]})", "beside anyOf");
    refused(R"({"$ref":"http://example.com/s.json"})", "only references inside this schema");
    refused(R"({"type":"array","items":[{"type":"string"}]})", "tuple");
    refused(R"({"type":"string","minLength":5,"maxLength":2})", "exceeds maxLength");
    refused(R"({"type":)", "not JSON");
    // Annotations pass.
    EXPECT_NO_THROW(JsonSchema::compile(R"({"title":"T","description":"d","type":"string","format":"date-time"})"));
}

// Checks a parsed value against the person schema, independently of the matcher.
bool fits_person(const json& v) {
    if (!v.is_object() || !v.contains("name") || !v.contains("age")) return false;
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string& k = it.key();
        const json& x = it.value();
        if (k == "name") {
            if (!x.is_string()) return false;
            size_t cps = 0;
            for (unsigned char c : x.get<std::string>()) cps += (c & 0xC0) != 0x80;
            if (cps < 1 || cps > 8) return false;
        } else if (k == "age") {
            if (!x.is_number_integer()) return false;
        } else if (k == "tags") {
            if (!x.is_array() || x.size() > 2) return false;
            for (const json& t : x)
                if (!t.is_string()) return false;
        } else if (k == "role") {
            if (!(x == "admin" || x == "user" || x == 7)) return false;
        } else if (k == "note") {
            if (!x.is_string() && !x.is_null()) return false;
        } else {
            return false;
        }
    }
    return true;
}

TEST(TokenConstraint, RandomWalksOverAllowedTokensEndInValidJson) {
    const GgufFile gguf = GgufFile::open(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    const std::unique_ptr<Tokenizer> tok = Tokenizer::create(vocab_from_gguf(gguf));
    const auto trie = std::make_shared<const TokenTrie>(*tok);
    const auto s = schema(kPerson);
    const int32_t eos = tok->eos();
    int finished = 0;
    for (uint32_t seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(seed);
        TokenConstraint c(s, trie);
        std::string text;
        bool ended = false;
        for (int step = 0; step < 400 && !ended; ++step) {
            std::vector<float> logits(size_t(tok->n_vocab()), 0.0f);
            c.mask(logits, {eos});
            std::vector<int32_t> allowed;
            for (size_t i = 0; i < logits.size(); ++i)
                if (std::isfinite(logits[i])) allowed.push_back(int32_t(i));
            ASSERT_FALSE(allowed.empty()) << "no token allowed after " << text;
            // Half the steps pick among tokens with punctuation or digits, so strings close and walks finish.
            std::vector<int32_t> structural;
            for (int32_t a : allowed)
                if (a != eos && trie->text(a).find_first_of("\"{}[],:0123456789-tfn") != std::string::npos) structural.push_back(a);
            const std::vector<int32_t>& pool = structural.empty() || rng() % 2 ? allowed : structural;
            int32_t t = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
            if (c.complete() && step > 40) t = eos;
            if (t == eos) {
                ASSERT_TRUE(c.complete()) << text;
                ended = true;
                break;
            }
            ASSERT_TRUE(c.accept(t)) << "an allowed token was refused: " << t << " after " << text;
            text += trie->text(t);
        }
        if (!ended) continue;  // a walk may wander (long strings); those that end must be valid
        ++finished;
        json v;
        ASSERT_NO_THROW(v = json::parse(text)) << text;
        EXPECT_TRUE(fits_person(v)) << text;
    }
    EXPECT_GE(finished, 10) << "too few walks reached the end of a value";
}

}  // namespace
}  // namespace hetero
