// The embedding C API (hetero.h) as an app uses it: result codes and
// messages for every kind of bad input, parameter structs of an older size,
// generation that matches the library's own loop, callbacks that stop, the
// prefix cache across completions, and chat through the model's template.
#include <hetero/hetero.h>
#include <hetero/hetero.hpp>

#include <hetero/engine/loaded_model.hpp>
#include <hetero/engine/runtime.hpp>
#include <hetero/engine/shipped_files.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/open_model.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

std::string plugin_dir() { return HETERO_BUILD_PLUGIN_DIR; }

// A runtime on the cpu provider of this build tree.
struct CpuRuntime {
    hetero_runtime* rt = nullptr;
    CpuRuntime() {
        hetero_runtime_params p;
        hetero_runtime_params_init(&p);
        p.providers = "cpu";
        p.threads = 2;
        p.plugin_dirs = HETERO_BUILD_PLUGIN_DIR;
        EXPECT_EQ(hetero_runtime_open(&p, &rt), HETERO_RESULT_OK) << hetero_last_error();
    }
    ~CpuRuntime() { hetero_runtime_close(rt); }
};

struct Collected {
    std::string text;
    int calls = 0;
    int stop_after = -1;  // return 0 on this call
};

int collect(const char* piece, size_t n, void* user) {
    auto& c = *static_cast<Collected*>(user);
    c.text.append(piece, n);
    ++c.calls;
    return c.calls == c.stop_after ? 0 : 1;
}

hetero_generate_params greedy(int32_t max_tokens) {
    hetero_generate_params g;
    hetero_generate_params_init(&g);
    g.max_tokens = max_tokens;
    g.temperature = 0;
    return g;
}

hetero_model* load_default(hetero_runtime* rt, int32_t n_ctx = 0) {
    hetero_model_params p;
    hetero_model_params_init(&p);
    p.n_ctx = n_ctx;
    hetero_model* m = nullptr;
    EXPECT_EQ(hetero_model_load(rt, &p, &m), HETERO_RESULT_OK) << hetero_last_error();
    return m;
}

}  // namespace

TEST(EmbedApi, VersionAndNames) {
    EXPECT_EQ(hetero_api_version(), HETERO_API_VERSION);
    EXPECT_STRNE(hetero_version_string(), "");
    EXPECT_STREQ(hetero_result_name(HETERO_RESULT_BAD_MODEL), "bad model");
    EXPECT_STREQ(hetero_result_name(hetero_result(15)), "unknown result");
}

TEST(EmbedApi, RuntimeListsTheNamedProvidersDevices) {
    CpuRuntime r;
    ASSERT_NE(r.rt, nullptr);
    ASSERT_GE(hetero_runtime_device_count(r.rt), 1u);
    EXPECT_STREQ(hetero_runtime_device_label(r.rt, 0), "cpu:0");
    EXPECT_NE(hetero_runtime_device_name(r.rt, 0), nullptr);
    EXPECT_EQ(hetero_runtime_device_label(r.rt, 1000), nullptr);
}

TEST(EmbedApi, BadRuntimeInputGetsACodeAndAMessage) {
    hetero_runtime* rt = reinterpret_cast<hetero_runtime*>(0x1);
    hetero_runtime_params p;
    hetero_runtime_params_init(&p);
    p.providers = "nosuch";
    p.plugin_dirs = HETERO_BUILD_PLUGIN_DIR;
    EXPECT_EQ(hetero_runtime_open(&p, &rt), HETERO_RESULT_NOT_FOUND);
    EXPECT_EQ(rt, nullptr);
    EXPECT_NE(std::string(hetero_last_error()).find("nosuch"), std::string::npos) << hetero_last_error();

    hetero_runtime_params_init(&p);
    p.config_json = "{\"providers\": 7}";
    EXPECT_EQ(hetero_runtime_open(&p, &rt), HETERO_RESULT_CONFIG);
    EXPECT_STRNE(hetero_last_error(), "");

    hetero_runtime_params_init(&p);
    p.providers = "cpu,cpu";
    EXPECT_EQ(hetero_runtime_open(&p, &rt), HETERO_RESULT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(hetero_last_error()).find("twice"), std::string::npos);

    hetero_runtime_params_init(&p);
    p.threads = -1;
    EXPECT_EQ(hetero_runtime_open(&p, &rt), HETERO_RESULT_INVALID_ARGUMENT);

    p.struct_size = 0;  // never initialised
    EXPECT_EQ(hetero_runtime_open(&p, &rt), HETERO_RESULT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(hetero_last_error()).find("struct_size"), std::string::npos);
    EXPECT_EQ(hetero_runtime_open(nullptr, nullptr), HETERO_RESULT_INVALID_ARGUMENT);
}

TEST(EmbedApi, BadModelInputGetsACodeAndAMessage) {
    CpuRuntime r;
    hetero_model_params p;
    hetero_model_params_init(&p);
    hetero_model* m = nullptr;
    p.path = "/nonexistent/model.gguf";
    EXPECT_EQ(hetero_model_load(r.rt, &p, &m), HETERO_RESULT_NOT_FOUND);
    EXPECT_NE(std::string(hetero_last_error()).find("/nonexistent/model.gguf"), std::string::npos);

    // A GGUF cut in half.
    const std::string cut = testing::TempDir() + "embed_cut.gguf";
    {
        std::ifstream in(hetero::default_model_path(), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        std::ofstream(cut, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 2));
    }
    p.path = cut.c_str();
    EXPECT_EQ(hetero_model_load(r.rt, &p, &m), HETERO_RESULT_BAD_MODEL);
    EXPECT_NE(std::string(hetero_last_error()).find(cut), std::string::npos) << hetero_last_error();
    std::remove(cut.c_str());

    hetero_model_params_init(&p);
    p.cache_type = 9;
    EXPECT_EQ(hetero_model_load(r.rt, &p, &m), HETERO_RESULT_INVALID_ARGUMENT);
    hetero_model_params_init(&p);
    p.n_ctx = -5;
    EXPECT_EQ(hetero_model_load(r.rt, &p, &m), HETERO_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(hetero_model_load(nullptr, &p, &m), HETERO_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(m, nullptr);

    hetero_model_params_init(&p);
    p.chat_template = "{% for m in messages %}{{ m.content ";  // never closed
    EXPECT_EQ(hetero_model_load(r.rt, &p, &m), HETERO_RESULT_TEMPLATE);
    EXPECT_NE(std::string(hetero_last_error()).find("the app's chat template"), std::string::npos) << hetero_last_error();
}

// The API's generation is the library's generate(): the same greedy text.
TEST(EmbedApi, GenerateMatchesTheLibrarysLoop) {
    CpuRuntime r;
    hetero_model* m = load_default(r.rt);
    ASSERT_NE(m, nullptr);
    EXPECT_GT(hetero_model_n_ctx(m), 0);
    EXPECT_NE(std::string(hetero_model_plan(m)).find("cpu:0"), std::string::npos);

    const hetero_generate_params g = greedy(24);
    Collected c;
    hetero_generate_stats s;
    s.struct_size = sizeof s;
    ASSERT_EQ(hetero_generate(m, "Once upon a time", &g, collect, &c, &s), HETERO_RESULT_OK) << hetero_last_error();
    EXPECT_EQ(s.n_generated, 24);
    EXPECT_EQ(s.finish, HETERO_FINISH_LENGTH);
    EXPECT_GT(s.n_prompt, 1);

    // The same through the library directly, on a runtime of its own.
    hetero::RuntimeOptions ro;
    ro.providers = {"cpu"};
    ro.threads = 2;
    ro.plugin_dirs = {plugin_dir()};
    hetero::Runtime rt = hetero::open_runtime(ro);
    hetero::ModelLoadOptions lo;
    lo.load_chat_template = false;
    hetero::LoadedModel direct(rt, lo);
    hetero::SamplerOptions so;
    so.temperature = 0;
    hetero::Sampler sampler(so);
    std::string text;  // the prompt's echo, then the generated pieces
    direct.generate("Once upon a time", 24, sampler, [&](const std::string& piece) { text += piece; });
    EXPECT_EQ("Once upon a time" + c.text, text);
    EXPECT_FALSE(c.text.empty());

    // A plain completion stops at the same end tokens: the same greedy text.
    Collected c2;
    ASSERT_EQ(hetero_complete(m, "Once upon a time", &g, collect, &c2, nullptr), HETERO_RESULT_OK) << hetero_last_error();
    EXPECT_EQ(c2.text, c.text);
    hetero_model_free(m);
}

TEST(EmbedApi, CallbackStopsAndStatsOfAnOlderSize) {
    CpuRuntime r;
    hetero_model* m = load_default(r.rt);
    ASSERT_NE(m, nullptr);
    const hetero_generate_params g = greedy(40);
    Collected c;
    c.stop_after = 3;
    // A caller whose stats struct ends before `finish`.
    struct {
        hetero_generate_stats s;
        char canary[8];
    } box;
    memset(&box, 0x5a, sizeof box);
    box.s.struct_size = offsetof(hetero_generate_stats, decode_seconds);
    ASSERT_EQ(hetero_complete(m, "Once upon a time", &g, collect, &c, &box.s), HETERO_RESULT_OK) << hetero_last_error();
    EXPECT_EQ(c.calls, 3);
    EXPECT_LE(box.s.n_generated, 4);
    // Nothing written past the caller's struct_size.
    const unsigned char* tail = reinterpret_cast<const unsigned char*>(&box.s) + box.s.struct_size;
    for (size_t i = box.s.struct_size; i < sizeof box; ++i, ++tail) ASSERT_EQ(*tail, 0x5a) << "byte " << i;

    // With the whole struct the finish is reported.
    c = Collected{};
    c.stop_after = 2;
    hetero_generate_stats s;
    s.struct_size = sizeof s;
    ASSERT_EQ(hetero_complete(m, "Once upon a time", &g, collect, &c, &s), HETERO_RESULT_OK);
    EXPECT_EQ(s.finish, HETERO_FINISH_CANCELLED);
    // The prompt was the previous call's: the cache held all of it but the last token.
    EXPECT_EQ(s.n_reused, s.n_prompt - 1);

    // Parameters of an older caller: only max_tokens and the sampling fields
    // up to temperature; the rest are the defaults.
    hetero_generate_params old = greedy(5);
    old.struct_size = offsetof(hetero_generate_params, top_k);
    Collected c3;
    ASSERT_EQ(hetero_complete(m, "Once upon a time", &old, collect, &c3, &s), HETERO_RESULT_OK) << hetero_last_error();
    EXPECT_EQ(s.n_generated, 5);

    hetero_generate_params bad = greedy(5);
    bad.top_p = 0;
    EXPECT_EQ(hetero_complete(m, "x", &bad, collect, &c3, nullptr), HETERO_RESULT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(hetero_last_error()).find("top_p"), std::string::npos);
    bad = greedy(5);
    bad.temperature = -1;
    EXPECT_EQ(hetero_generate(m, "x", &bad, collect, &c3, nullptr), HETERO_RESULT_INVALID_ARGUMENT);
    bad = greedy(5);
    bad.n_stop = 2;
    EXPECT_EQ(hetero_complete(m, "x", &bad, collect, &c3, nullptr), HETERO_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(hetero_generate(nullptr, "x", &bad, collect, &c3, nullptr), HETERO_RESULT_INVALID_ARGUMENT);
    hetero_model_free(m);
}

TEST(EmbedApi, StopStringsEndTheText) {
    CpuRuntime r;
    hetero_model* m = load_default(r.rt);
    ASSERT_NE(m, nullptr);
    hetero_generate_params g = greedy(40);
    Collected full;
    ASSERT_EQ(hetero_complete(m, "Once upon a time", &g, collect, &full, nullptr), HETERO_RESULT_OK);
    const size_t comma = full.text.find(',');
    ASSERT_NE(comma, std::string::npos) << full.text;
    const char* stops[] = {","};
    g.stop = stops;
    g.n_stop = 1;
    Collected cut;
    hetero_generate_stats s;
    s.struct_size = sizeof s;
    ASSERT_EQ(hetero_complete(m, "Once upon a time", &g, collect, &cut, &s), HETERO_RESULT_OK);
    EXPECT_EQ(cut.text, full.text.substr(0, comma));
    EXPECT_EQ(s.finish, HETERO_FINISH_STOP);
    hetero_model_free(m);
}

TEST(EmbedApi, APromptPastTheContextIsRefused) {
    CpuRuntime r;
    hetero_model* m = load_default(r.rt, 16);
    ASSERT_NE(m, nullptr);
    std::string prompt;
    for (int i = 0; i < 40; ++i) prompt += "Once upon a time ";
    const hetero_generate_params g = greedy(4);
    Collected c;
    EXPECT_EQ(hetero_complete(m, prompt.c_str(), &g, collect, &c, nullptr), HETERO_RESULT_CONTEXT_FULL);
    EXPECT_NE(std::string(hetero_last_error()).find("context of 16"), std::string::npos) << hetero_last_error();
    // The model still works afterwards.
    EXPECT_EQ(hetero_complete(m, "Once", &g, collect, &c, nullptr), HETERO_RESULT_OK) << hetero_last_error();
    hetero_model_free(m);
}

TEST(EmbedApi, ErrorsArePerThread) {
    hetero_runtime* rt = nullptr;
    EXPECT_EQ(hetero_runtime_open(nullptr, nullptr), HETERO_RESULT_INVALID_ARGUMENT);
    std::string other;
    std::thread([&] { other = hetero_last_error(); }).join();
    EXPECT_EQ(other, "");
    EXPECT_STRNE(hetero_last_error(), "");
    (void)rt;
}

// The shipped model has no template of its own: ChatML.
TEST(EmbedApi, ChatThroughTheModelsTemplate) {
    CpuRuntime r;
    hetero_model* m = load_default(r.rt);
    ASSERT_NE(m, nullptr);
    const hetero_chat_message msgs[] = {{"system", "Be brief."}, {"user", "Tell a story."}};
    char* text = nullptr;
    ASSERT_EQ(hetero_chat_render(m, msgs, 2, 1, &text), HETERO_RESULT_OK) << hetero_last_error();
    EXPECT_STREQ(text, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nTell a story.<|im_end|>\n<|im_start|>assistant\n");
    hetero_string_free(text);
    const hetero_generate_params g = greedy(12);
    Collected c;
    hetero_generate_stats s;
    s.struct_size = sizeof s;
    ASSERT_EQ(hetero_chat(m, msgs, 2, &g, collect, &c, &s), HETERO_RESULT_OK) << hetero_last_error();
    EXPECT_GT(s.n_prompt, 10);
    EXPECT_EQ(s.n_generated, int32_t(s.finish == HETERO_FINISH_LENGTH ? 12 : s.n_generated));
    const hetero_chat_message bad[] = {{"user", nullptr}};
    EXPECT_EQ(hetero_chat(m, bad, 1, &g, collect, &c, nullptr), HETERO_RESULT_INVALID_ARGUMENT);
    hetero_model_free(m);
}

// The C++ wrapper: the same text, errors as exceptions with the code.
TEST(EmbedApi, CppWrapper) {
    hetero::embed::RuntimeOptions ro;
    ro.providers = "cpu";
    ro.threads = 2;
    ro.plugin_dirs = HETERO_BUILD_PLUGIN_DIR;
    hetero::embed::Runtime rt(ro);
    EXPECT_EQ(rt.devices().at(0), "cpu:0");
    hetero::embed::Model model(rt);
    hetero::embed::GenerateOptions go;
    go.max_tokens = 16;
    go.temperature = 0;
    std::string streamed;
    const hetero::embed::Reply r = model.generate("Once upon a time", go, [&](std::string_view p) {
        streamed += p;
        return true;
    });
    EXPECT_EQ(r.text, streamed);
    EXPECT_EQ(r.stats.n_generated, 16);
    hetero::embed::ModelOptions bad;
    bad.path = "/nonexistent.gguf";
    try {
        hetero::embed::Model m2(rt, bad);
        FAIL() << "loaded a missing file";
    } catch (const hetero::embed::Error& e) {
        EXPECT_EQ(e.code(), HETERO_RESULT_NOT_FOUND);
        EXPECT_NE(std::string(e.what()).find("/nonexistent.gguf"), std::string::npos);
    }
}

// The sampling fields of 1.1 reach the sampler, and bad values are refused by name.
TEST(EmbedApi, PenaltiesBiasAndMinPReachTheSampler) {
    CpuRuntime r;
    hetero_model* m = load_default(r.rt);
    ASSERT_NE(m, nullptr);
    Collected plain_text;
    hetero_generate_params g = greedy(24);
    ASSERT_EQ(hetero_generate(m, "Once upon a time", &g, collect, &plain_text, nullptr), HETERO_RESULT_OK) << hetero_last_error();
    // The shipped model's end token (2) biased up: the generation ends at once.
    const hetero_logit_bias end_now{2, 100.f};
    g.logit_bias = &end_now;
    g.n_logit_bias = 1;
    hetero_generate_stats s{};
    s.struct_size = sizeof s;
    Collected c;
    ASSERT_EQ(hetero_generate(m, "Once upon a time", &g, collect, &c, &s), HETERO_RESULT_OK) << hetero_last_error();
    EXPECT_EQ(s.n_generated, 0);
    EXPECT_EQ(s.finish, HETERO_FINISH_STOP);
    // A strong repetition penalty over the whole context changes the greedy story.
    g = greedy(24);
    g.repetition_penalty = 3.f;
    g.repetition_window = -1;
    Collected penalised;
    ASSERT_EQ(hetero_complete(m, "Once upon a time", &g, collect, &penalised, nullptr), HETERO_RESULT_OK) << hetero_last_error();
    EXPECT_NE(penalised.text, plain_text.text);

    const auto refused = [&](hetero_generate_params bad, const char* named) {
        Collected ignored;
        EXPECT_EQ(hetero_complete(m, "x", &bad, collect, &ignored, nullptr), HETERO_RESULT_INVALID_ARGUMENT) << named;
        EXPECT_NE(std::string(hetero_last_error()).find(named), std::string::npos) << hetero_last_error();
    };
    const hetero_logit_bias outside{512, 1.f}, too_big{3, 101.f};
    const hetero_logit_bias twice[] = {{3, 1.f}, {3, 2.f}};
    g = greedy(4);
    g.logit_bias = &outside;
    g.n_logit_bias = 1;
    refused(g, "token 512");
    g.logit_bias = &too_big;
    refused(g, "logit_bias[0]");
    g.logit_bias = twice;
    g.n_logit_bias = 2;
    refused(g, "twice");
    g.logit_bias = nullptr;
    refused(g, "n_logit_bias");
    // One field out of its range at a time, refused naming the field.
    using Spoil = void (*)(hetero_generate_params&);
    const std::pair<Spoil, const char*> out_of_range[] = {
        {[](hetero_generate_params& p) { p.min_p = 2.f; }, "min_p"},
        {[](hetero_generate_params& p) { p.repetition_penalty = 0.f; }, "repetition_penalty"},
        {[](hetero_generate_params& p) { p.presence_penalty = -2.5f; }, "presence_penalty"},
        {[](hetero_generate_params& p) { p.frequency_penalty = 9.f; }, "frequency_penalty"},
        {[](hetero_generate_params& p) { p.repetition_window = -5; }, "repetition_window"},
    };
    for (const auto& [spoil, field] : out_of_range) {
        g = greedy(4);
        spoil(g);
        refused(g, field);
    }
    hetero_model_free(m);

    // The same through the C++ wrapper.
    hetero::embed::RuntimeOptions ro;
    ro.providers = "cpu";
    ro.threads = 2;
    ro.plugin_dirs = HETERO_BUILD_PLUGIN_DIR;
    hetero::embed::Runtime rt(ro);
    hetero::embed::Model model(rt);
    hetero::embed::GenerateOptions go;
    go.max_tokens = 8;
    go.temperature = 0;
    go.logit_bias = {{2, 100.f}};
    EXPECT_EQ(model.generate("Once upon a time", go).stats.n_generated, 0);
}
