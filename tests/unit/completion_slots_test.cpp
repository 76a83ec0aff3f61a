// Completions run together in slots (CompletionSlots: what `serve
// --parallel` runs) end exactly as each ends alone through complete(); a
// new prompt goes in chunks between the decode steps of the others, to the
// slot whose cache holds its longest prefix; errors end only the
// completions they concern.
#include <hetero/chat/completion.hpp>
#include <hetero/chat/completion_slots.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/session.hpp>

#include "build_tree_registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>

namespace hetero {
namespace {

struct Model {
    OpenedModel m = open_model(HETERO_SOURCE_DIR "/models/stories260K.gguf");
    Plan plan() {
        Provider* cpu = test::build_tree_registry().find("cpu");
        return plan_single_device(int(m.file.hparams.n_layer), {{cpu, 0, cpu->device_props(0)}}, 0);
    }
    std::vector<int32_t> tokens(const std::string& text) const { return m.tokenizer->encode(text, true); }
};

SessionOptions options(int32_t n_seq) {
    SessionOptions so;
    so.n_ctx = 256;
    so.n_seq = n_seq;
    return so;
}

struct Ended {
    CompletionResult result;
    std::string error;
    bool done = false;
    std::string streamed;  // what on_text got
    int pieces = 0;
};

SlotRequest request(const std::vector<int32_t>& prompt, CompletionOptions o, Ended& out) {
    SlotRequest r;
    r.prompt = prompt;
    r.options = std::move(o);
    r.on_text = [&out](std::string_view piece) {
        out.streamed += piece;
        ++out.pieces;
        return true;
    };
    r.on_end = [&out](CompletionResult result, std::string error) {
        out.result = std::move(result);
        out.error = std::move(error);
        out.done = true;
    };
    return r;
}

CompletionOptions greedy(int32_t max_tokens, std::vector<std::string> stop = {}) {
    CompletionOptions o;
    o.max_tokens = max_tokens;
    o.sampling.temperature = 0.f;
    o.stop = std::move(stop);
    return o;
}

TEST(CompletionSlots, TogetherEachEndsAsItEndsAlone) {
    Model model;
    const Plan plan = model.plan();
    const std::vector<std::pair<std::string, CompletionOptions>> work = {
        {"Once upon a time", greedy(60)},
        {"The little dog", greedy(25)},
        {"Lily and Tom went to the park and they saw a big", greedy(80, {"park"})},
        {"One day", greedy(0)},  // to the end of the context
        {"A cat", greedy(40)},
    };
    // Alone: each through complete() on a fresh cache.
    std::vector<CompletionResult> alone;
    for (const auto& [prompt, o] : work) {
        Session s(model.m.file, plan, options(1));
        PrefixCache cache(s);
        alone.push_back(complete(cache, *model.m.tokenizer, model.tokens(prompt), o));
    }
    // Together: five completions over three slots, the last two waiting for a free one.
    Session session(model.m.file, plan, options(3));
    CompletionSlots slots(session, *model.m.tokenizer, 3);
    std::vector<Ended> ended(work.size());
    size_t next = 0;
    for (int rounds = 0; rounds < 10000; ++rounds) {
        while (next < work.size() && slots.idle() > 0) {
            slots.start(request(model.tokens(work[next].first), work[next].second, ended[next]));
            ++next;
        }
        if (!slots.busy() && next == work.size()) break;
        slots.step();
    }
    for (size_t i = 0; i < work.size(); ++i) {
        ASSERT_TRUE(ended[i].done) << i;
        EXPECT_EQ(ended[i].error, "") << i;
        EXPECT_EQ(ended[i].result.text, alone[i].text) << i;
        EXPECT_EQ(ended[i].streamed, alone[i].text) << i;
        EXPECT_EQ(ended[i].result.finish, alone[i].finish) << i;
        EXPECT_EQ(ended[i].result.n_generated, alone[i].n_generated) << i;
    }
    EXPECT_EQ(ended[3].result.finish, FinishReason::context_full);
}

// A fake evaluator: token t at position p is followed by (t + p) % 7 + 10;
// it counts what it evaluates and fails where told to.
class FakeEvaluator : public BatchEvaluator {
public:
    FakeEvaluator(int32_t n_seq, int32_t n_vocab) : n_seq_(n_seq), n_vocab_(n_vocab) {}
    int32_t n_seq() const override { return n_seq_; }
    int32_t n_ctx() const override { return 64; }
    const std::vector<float>& forward_seq(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) override {
        prefill_chunks[seq].push_back(int32_t(tokens.size()));
        if (std::find(tokens.begin(), tokens.end(), fail_prefill_token) != tokens.end()) throw Error("prefill failed");
        logits_.assign(size_t(n_vocab_), 0.f);
        logits_[size_t(follow(tokens.back(), pos + int32_t(tokens.size()) - 1))] = 1.f;
        return logits_;
    }
    const std::vector<float>& decode_batch(const std::vector<SeqToken>& steps) override {
        batches.push_back(int32_t(steps.size()));
        if (fail_decode) throw Error("device lost");
        logits_.assign(steps.size() * size_t(n_vocab_), 0.f);
        for (size_t i = 0; i < steps.size(); ++i) logits_[i * size_t(n_vocab_) + size_t(follow(steps[i].token, steps[i].pos))] = 1.f;
        return logits_;
    }
    static int32_t follow(int32_t token, int32_t pos) { return (token + pos) % 7 + 10; }

    std::map<int32_t, std::vector<int32_t>> prefill_chunks;  // per sequence, the sizes of its forwards
    std::vector<int32_t> batches;                            // sequences per decode step
    int32_t fail_prefill_token = -1;  // a prompt holding it fails
    bool fail_decode = false;

private:
    int32_t n_seq_, n_vocab_;
    std::vector<float> logits_;
};

TEST(CompletionSlots, APromptGoesInChunksBetweenTheOthersDecodeSteps) {
    Model model;
    FakeEvaluator fake(2, 512);
    CompletionSlots slots(fake, *model.m.tokenizer, 4);
    Ended a, b;
    slots.start(request({1, 50, 51}, greedy(30), a));
    slots.step();  // a's prompt goes in whole: nobody decodes yet
    EXPECT_EQ(fake.prefill_chunks[0], std::vector<int32_t>({3}));
    std::vector<int32_t> long_prompt(19, 60);
    long_prompt[0] = 1;
    slots.start(request(long_prompt, greedy(5), b));
    const int pieces_before = a.pieces;
    for (int i = 0; i < 5; ++i) slots.step();
    // b's 19 tokens went in as 4 + 4 + 4 + 4 + 3, a decoded a token in each of those rounds.
    EXPECT_EQ(fake.prefill_chunks[1], std::vector<int32_t>({4, 4, 4, 4, 3}));
    EXPECT_GE(a.pieces - pieces_before, 4);
    for (int i = 0; i < 100 && slots.busy(); ++i) slots.step();
    EXPECT_TRUE(a.done && b.done);
    EXPECT_EQ(b.result.n_generated, 5);
    // Both decoded in one batch once b's prompt was in.
    EXPECT_NE(std::find(fake.batches.begin(), fake.batches.end(), 2), fake.batches.end());
}

// Several prompts waiting share one step's chunk, in arrival order: short
// ones all go in between two decode steps, not one a step.
TEST(CompletionSlots, WaitingPromptsShareTheChunkOfAStep) {
    Model model;
    FakeEvaluator fake(4, 512);
    CompletionSlots slots(fake, *model.m.tokenizer, 8);
    Ended a, b, c, d;
    slots.start(request({1, 50, 51}, greedy(30), a));
    slots.step();  // a goes in whole and decodes from now on
    slots.start(request({1, 60, 61}, greedy(3), b));
    slots.start(request({1, 62, 63}, greedy(3), c));
    slots.start(request({1, 64, 65, 66, 67}, greedy(3), d));
    slots.step();
    // b's 3 and c's 3 tokens whole, then the 2 left of the chunk of 8 for d.
    EXPECT_EQ(fake.prefill_chunks[1], std::vector<int32_t>({3}));
    EXPECT_EQ(fake.prefill_chunks[2], std::vector<int32_t>({3}));
    EXPECT_EQ(fake.prefill_chunks[3], std::vector<int32_t>({2}));
    slots.step();
    EXPECT_EQ(fake.prefill_chunks[3], std::vector<int32_t>({2, 3}));
    // b and c decoded beside a in that step: a batch of three.
    EXPECT_NE(std::find(fake.batches.begin(), fake.batches.end(), 3), fake.batches.end());
    for (int i = 0; i < 100 && slots.busy(); ++i) slots.step();
    EXPECT_TRUE(a.done && b.done && c.done && d.done);
}

TEST(CompletionSlots, ANewPromptGoesToTheSlotHoldingItsLongestPrefix) {
    Model model;
    FakeEvaluator fake(3, 512);
    CompletionSlots slots(fake, *model.m.tokenizer, 64);
    Ended first, second;
    slots.start(request({1, 20, 21, 22, 23}, greedy(3), first));
    while (slots.busy()) slots.step();
    // The slot that ran `first` holds its prompt and reply; the other two are empty.
    int32_t held = -1;
    for (int32_t i = 0; i < slots.size(); ++i)
        if (!slots.cached(i).empty()) held = i;
    ASSERT_GE(held, 0);
    std::vector<int32_t> longer = slots.cached(held);
    longer.push_back(30);
    slots.start(request(longer, greedy(2), second));
    while (slots.busy()) slots.step();
    EXPECT_EQ(second.result.n_reused, int32_t(longer.size()) - 1);
    EXPECT_EQ(fake.prefill_chunks[held].back(), 1);  // only the new token went in
}

TEST(CompletionSlots, ErrorsEndOnlyTheCompletionsTheyConcern) {
    Model model;
    FakeEvaluator fake(3, 512);
    CompletionSlots slots(fake, *model.m.tokenizer, 64);
    // A prompt longer than the context ends at once, with the reason.
    Ended too_long;
    slots.start(request(std::vector<int32_t>(70, 5), greedy(3), too_long));
    EXPECT_TRUE(too_long.done);
    EXPECT_NE(too_long.error.find("context holds 64"), std::string::npos) << too_long.error;
    EXPECT_FALSE(slots.busy());
    // A failing prompt ends its own completion; one decoding beside it goes on.
    Ended decoding, failing;
    slots.start(request({1, 9}, greedy(6), decoding));
    slots.step();
    fake.fail_prefill_token = 8;
    slots.start(request({1, 8, 8}, greedy(6), failing));
    while (slots.busy()) slots.step();
    EXPECT_EQ(failing.error, "prefill failed");
    EXPECT_EQ(decoding.error, "");
    EXPECT_EQ(decoding.result.n_generated, 6);
    // A failed decode step ends every completion in it.
    Ended x, y;
    slots.start(request({1, 4}, greedy(6), x));
    slots.start(request({1, 3}, greedy(6), y));
    slots.step();
    slots.step();
    fake.fail_decode = true;
    for (int i = 0; i < 10 && slots.busy(); ++i) slots.step();
    EXPECT_EQ(x.error, "device lost");
    EXPECT_EQ(y.error, "device lost");
    EXPECT_FALSE(slots.busy());
}

TEST(CompletionSlots, AnInterruptEndsAPromptBeforeItIsIn) {
    Model model;
    FakeEvaluator fake(2, 512);
    CompletionSlots slots(fake, *model.m.tokenizer, 2);
    Ended running, left;
    slots.start(request({1, 9}, greedy(50), running));
    slots.step();
    std::atomic<bool> gone{false};
    CompletionOptions o = greedy(5);
    o.interrupt = &gone;
    slots.start(request(std::vector<int32_t>(30, 7), o, left));
    slots.step();  // one chunk of two tokens
    gone = true;
    slots.step();
    EXPECT_TRUE(left.done);
    EXPECT_EQ(left.result.finish, FinishReason::interrupted);
    EXPECT_EQ(left.result.n_generated, 0);
    EXPECT_FALSE(running.done);
}

}  // namespace
}  // namespace hetero
