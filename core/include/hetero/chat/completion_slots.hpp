// Several completions at once over one BatchEvaluator (`hetero serve
// --parallel N`): each slot holds one sequence of the KV cache and the
// completion running in it. A round of work is one decode step of every
// slot that decodes, batched (the weights are read once for all of them),
// then one chunk of one slot's prompt, so a new prompt never stalls the
// running streams for its whole length. A slot keeps its cache when its
// completion ends, and a new completion goes to the idle slot whose cache
// holds the longest prefix of its prompt.
#pragma once

#include <hetero/chat/completion_stream.hpp>
#include <hetero/chat/prefix_cache.hpp>
#include <hetero/runtime/session.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

struct SlotRequest {
    std::vector<int32_t> prompt;
    CompletionOptions options;  // options.interrupt: checked before every token (and every prompt chunk)
    // The text as it becomes final; false cancels.
    std::function<bool(std::string_view)> on_text;
    // Called once, when the completion ends: its result, or an error message
    // (the result is then empty). An interrupt ends it as FinishReason::interrupted.
    std::function<void(CompletionResult result, std::string error)> on_end;
};

class CompletionSlots {
public:
    // One slot per sequence of `evaluator`, or per sequence 0..n_slots-1
    // when n_slots >= 0 (the others left to other work, embeddings).
    // prefill_chunk: prompt tokens evaluated between two decode steps while
    // other slots decode, over the waiting prompts in arrival order (a
    // prompt with nobody decoding goes in whole).
    CompletionSlots(BatchEvaluator& evaluator, const Tokenizer& tokenizer, int32_t prefill_chunk, int32_t n_slots = -1);
    ~CompletionSlots();
    CompletionSlots(const CompletionSlots&) = delete;
    CompletionSlots& operator=(const CompletionSlots&) = delete;

    int32_t size() const { return int32_t(slots_.size()); }
    int32_t idle() const;
    bool busy() const { return idle() < size(); }
    // Starts `request` in an idle slot (throws hetero::Error when none is):
    // the one whose cache shares the longest prefix with its prompt, the
    // least recently used among equals. A request that cannot run (a prompt
    // longer than the context) ends at once through on_end.
    void start(SlotRequest request);
    // One round: a decode step of the slots that decode, then one chunk of
    // the prompt of the slot that started first among those prefilling.
    // Completions that end call their on_end here.
    void step();
    // The tokens slot `i`'s cache holds (tests, diagnostics).
    const std::vector<int32_t>& cached(int32_t i) const;

private:
    struct Slot;
    void decode();
    void prefill();
    void take(Slot& s, const float* logits, size_t n_vocab);  // the stream's next token, or its end
    void end(Slot& s, std::string error = {});

    BatchEvaluator& evaluator_;
    const Tokenizer& tokenizer_;
    int32_t prefill_chunk_;
    std::vector<std::unique_ptr<Slot>> slots_;
    uint64_t clock_ = 0;  // orders starts and ends
};

}  // namespace hetero
