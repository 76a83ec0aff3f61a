// The conversation layer over a scripted Evaluator: later turns evaluate only
// the new suffix and give what a fresh full evaluation gives; end-of-turn
// tokens, stop strings, token limits and a full context end replies.
#include <hetero/chat/jinja_chat_template.hpp>

#include <hetero/chat/conversation.hpp>

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace hetero;

namespace {

constexpr int32_t kImStart = 3, kImEnd = 4, kFirstByte = 5;

std::unique_ptr<Tokenizer> chat_tokenizer() {
    Vocab v;
    v.model = "llama";
    v.tokens = {"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"};
    v.types = {2, 3, 3, 3, 3};
    for (int b = 0; b < 256; ++b) {
        v.tokens.push_back(fmt::format("<0x{:02X}>", b));
        v.types.push_back(6);
    }
    v.scores.assign(v.tokens.size(), 0.f);
    v.unk = 0, v.bos = 1, v.eos = 2;
    return Tokenizer::create(std::move(v));
}

// A model whose next token is a function of everything in its KV cache, so
// that a cache holding the wrong tokens changes the reply. It answers with
// lowercase letters and ends a turn with <|im_end|> after `reply_len` of them.
class ScriptedModel : public Evaluator {
public:
    explicit ScriptedModel(int32_t n_ctx, int32_t reply_len = 6) : n_ctx_(n_ctx), reply_len_(reply_len) {}
    const std::vector<float>& forward(const std::vector<int32_t>& tokens, int32_t pos) override {
        if (pos < 0 || size_t(pos) > kv_.size()) throw Error(fmt::format("forward at {} with {} tokens cached", pos, kv_.size()));
        if (int64_t(pos) + int64_t(tokens.size()) > n_ctx_) throw Error("context is full");
        kv_.resize(size_t(pos));  // later positions are overwritten, as in a real cache
        kv_.insert(kv_.end(), tokens.begin(), tokens.end());
        forwarded += int64_t(tokens.size());
        uint64_t h = 1469598103934665603ull;
        int32_t letters = 0;  // trailing letters: the reply so far
        for (int32_t t : kv_) {
            h = (h ^ uint64_t(t)) * 1099511628211ull;
            letters = (t >= kFirstByte + 'a' && t <= kFirstByte + 'z') ? letters + 1 : 0;
        }
        logits_.assign(261, 0.f);
        const int32_t next = letters >= reply_len_ ? kImEnd : kFirstByte + 'a' + int32_t((h >> 33) % 26);
        logits_[size_t(next)] = 1.f;
        return logits_;
    }
    int32_t n_ctx() const override { return n_ctx_; }
    int64_t forwarded = 0;

private:
    int32_t n_ctx_, reply_len_;
    std::vector<int32_t> kv_;
    std::vector<float> logits_;
};

CompletionOptions greedy(int32_t max_tokens = 64) {
    CompletionOptions o;
    o.max_tokens = max_tokens;
    o.sampling.temperature = 0;
    return o;
}

struct ChatSetup {
    std::unique_ptr<Tokenizer> tokenizer = chat_tokenizer();
    JinjaChatTemplate tmpl{kChatMLTemplate};
    ChatPrompt prompt{tmpl, *tokenizer, nullptr};
};

}  // namespace

TEST(ChatPrompt, FindsEndOfTurnTokensAndParsesSpecialTokens) {
    ChatSetup s;
    const auto& stops = s.prompt.stop_tokens();
    EXPECT_NE(std::find(stops.begin(), stops.end(), kImEnd), stops.end());
    EXPECT_NE(std::find(stops.begin(), stops.end(), 2), stops.end());  // EOS
    const std::vector<int32_t> toks = s.prompt.tokens({{"user", "hi"}});
    ASSERT_GE(toks.size(), 3u);
    EXPECT_EQ(toks[0], 1);  // BOS
    EXPECT_EQ(toks[1], kImStart);
    EXPECT_EQ(std::count(toks.begin(), toks.end(), kImEnd), 1);
}

TEST(Conversation, LaterTurnsEvaluateOnlyTheNewSuffixAndMatchAFreshEvaluation) {
    ChatSetup s;
    ScriptedModel model(512);
    PrefixCache cache(model);
    Conversation conv(cache, *s.tokenizer, s.prompt);
    conv.set_system("be brief");

    const CompletionResult first = conv.say("hello", greedy());
    EXPECT_EQ(first.finish, FinishReason::stop);  // <|im_end|>
    EXPECT_EQ(first.text.size(), 6u);
    EXPECT_EQ(first.n_reused, 0);
    const int64_t after_first = model.forwarded;

    const CompletionResult second = conv.say("and again", greedy());
    const int64_t second_forwarded = model.forwarded - after_first;
    // The first turn's prompt and reply were reused; evaluated: the rest of
    // the prompt, then one forward per generated token but the stop token.
    EXPECT_GT(second.n_reused, first.n_prompt + first.n_generated - 2);
    EXPECT_EQ(second_forwarded, int64_t(second.n_prompt - second.n_reused) + second.n_generated);
    EXPECT_LT(second.n_prompt - second.n_reused, second.n_prompt / 2);

    // A fresh model and cache evaluating the whole conversation give the same reply.
    ScriptedModel fresh_model(512);
    PrefixCache fresh(fresh_model);
    std::vector<ChatMessage> history = conv.messages();
    history.pop_back();  // the second reply
    CompletionOptions o = greedy();
    o.stop_tokens = s.prompt.stop_tokens();
    const CompletionResult again = complete(fresh, *s.tokenizer, s.prompt.tokens(history), o);
    EXPECT_EQ(again.text, second.text);
    EXPECT_EQ(again.n_reused, 0);
    EXPECT_EQ(fresh_model.forwarded, int64_t(again.n_prompt) + again.n_generated);

    ASSERT_EQ(conv.messages().size(), 5u);
    EXPECT_EQ(conv.messages()[0].role, "system");
    EXPECT_EQ(conv.messages()[4].content, second.text);
}

TEST(Conversation, ResetForgetsMessagesAndCache) {
    ChatSetup s;
    ScriptedModel model(512);
    PrefixCache cache(model);
    Conversation conv(cache, *s.tokenizer, s.prompt);
    const CompletionResult a = conv.say("hello", greedy());
    conv.say("more", greedy());
    conv.reset();
    EXPECT_TRUE(conv.messages().empty());
    EXPECT_TRUE(cache.tokens().empty());
    const CompletionResult b = conv.say("hello", greedy());
    EXPECT_EQ(b.text, a.text);
    EXPECT_EQ(b.n_reused, 0);
}

TEST(Conversation, RepeatedPromptStillGetsItsLogits) {
    ChatSetup s;
    ScriptedModel model(512);
    PrefixCache cache(model);
    const std::vector<int32_t> prompt = s.prompt.tokens({{"user", "x"}});
    CompletionOptions o = greedy(3);
    const CompletionResult a = complete(cache, *s.tokenizer, prompt, o);
    const CompletionResult b = complete(cache, *s.tokenizer, prompt, o);
    EXPECT_EQ(a.text, b.text);
    EXPECT_EQ(b.n_reused, int32_t(prompt.size()) - 1);  // only the last prompt token again
}

TEST(Completion, LimitsStopStringsAndFullContext) {
    ChatSetup s;
    const std::vector<int32_t> prompt = s.prompt.tokens({{"user", "hello"}});
    {
        ScriptedModel model(512, 100);
        PrefixCache cache(model);
        const CompletionResult r = complete(cache, *s.tokenizer, prompt, greedy(5));
        EXPECT_EQ(r.finish, FinishReason::length);
        EXPECT_EQ(r.n_generated, 5);
        EXPECT_EQ(r.text.size(), 5u);

        // The same text cut by a stop string taken from its middle.
        ScriptedModel model2(512, 100);
        PrefixCache cache2(model2);
        CompletionOptions o = greedy(5);
        o.stop = {r.text.substr(2, 2)};
        const CompletionResult cut = complete(cache2, *s.tokenizer, prompt, o);
        EXPECT_EQ(cut.finish, FinishReason::stop);
        EXPECT_EQ(cut.text, r.text.substr(0, 2));
    }
    {
        const int32_t ctx = int32_t(prompt.size()) + 4;
        ScriptedModel model(ctx, 100);
        PrefixCache cache(model);
        const CompletionResult r = complete(cache, *s.tokenizer, prompt, greedy(0));
        EXPECT_EQ(r.finish, FinishReason::context_full);
        EXPECT_EQ(r.n_generated, 5);  // 4 cached after the prompt, the 5th sampled from the last logits
    }
    {
        ScriptedModel model(int32_t(prompt.size()), 100);
        PrefixCache cache(model);
        EXPECT_THROW(complete(cache, *s.tokenizer, prompt, greedy()), Error);  // no room for a reply
    }
    {
        ScriptedModel model(512, 100);
        PrefixCache cache(model);
        std::atomic<bool> stop{false};
        CompletionOptions o = greedy(50);
        o.interrupt = &stop;
        int pieces = 0;
        const CompletionResult r = complete(cache, *s.tokenizer, prompt, o, [&](std::string_view) {
            if (++pieces == 3) stop.store(true);
            return true;
        });
        EXPECT_EQ(r.finish, FinishReason::interrupted);
        EXPECT_EQ(r.n_generated, 3);
    }
}

TEST(Conversation, TemplateRefusalLeavesTheConversationUnchanged) {
    auto tokenizer = chat_tokenizer();
    JinjaChatTemplate strict("{% if messages | length > 1 %}{{ raise_exception('one message only') }}{% endif %}"
                             "<|im_start|>{{ messages[0].content }}<|im_end|>");
    ChatPrompt prompt(strict, *tokenizer, nullptr);
    ScriptedModel model(512);
    PrefixCache cache(model);
    Conversation conv(cache, *tokenizer, prompt);
    conv.say("first", greedy());
    ASSERT_EQ(conv.messages().size(), 2u);
    EXPECT_THROW(conv.say("second", greedy()), ChatTemplateError);
    EXPECT_EQ(conv.messages().size(), 2u);
}
