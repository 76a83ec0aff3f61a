#include <hetero/chat/completion_slots.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace hetero {

struct CompletionSlots::Slot {
    SequenceEvaluator sequence;
    PrefixCache cache;
    std::optional<SlotRequest> request;
    std::optional<CompletionStream> stream;
    int32_t next_token = -1;  // decoding: the token to evaluate in the next step; -1 while the prompt goes in
    uint64_t started = 0;     // when its completion started (the order prompts go in)
    uint64_t last_used = 0;   // when its last completion ended

    Slot(BatchEvaluator& evaluator, int32_t seq) : sequence(evaluator, seq), cache(sequence) {}
    bool running() const { return request.has_value(); }
    bool decoding() const { return running() && next_token >= 0; }
};

CompletionSlots::CompletionSlots(BatchEvaluator& evaluator, const Tokenizer& tokenizer, int32_t prefill_chunk, int32_t n_slots)
    : evaluator_(evaluator), tokenizer_(tokenizer), prefill_chunk_(prefill_chunk) {
    if (prefill_chunk < 1) throw Error(fmt::format("the prefill chunk must be at least one token, not {}", prefill_chunk));
    if (n_slots < 0) n_slots = evaluator.n_seq();
    if (n_slots < 1 || n_slots > evaluator.n_seq())
        throw Error(fmt::format("{} completion slots, but the evaluator holds {} sequences", n_slots, evaluator.n_seq()));
    for (int32_t s = 0; s < n_slots; ++s) slots_.push_back(std::make_unique<Slot>(evaluator, s));
}

CompletionSlots::~CompletionSlots() = default;

int32_t CompletionSlots::idle() const {
    int32_t n = 0;
    for (const auto& s : slots_) n += s->running() ? 0 : 1;
    return n;
}

const std::vector<int32_t>& CompletionSlots::cached(int32_t i) const { return slots_.at(size_t(i))->cache.tokens(); }

void CompletionSlots::start(SlotRequest request) {
    Slot* best = nullptr;
    size_t best_prefix = 0;
    for (const auto& s : slots_) {
        if (s->running()) continue;
        const size_t prefix = s->cache.common_prefix(request.prompt);
        if (!best || prefix > best_prefix || (prefix == best_prefix && s->last_used < best->last_used)) {
            best = s.get();
            best_prefix = prefix;
        }
    }
    if (!best) throw Error("internal: a completion started with no slot idle");
    Slot& s = *best;
    s.started = ++clock_;
    s.next_token = -1;
    s.request = std::move(request);
    try {
        s.stream.emplace(tokenizer_, s.request->prompt, evaluator_.n_ctx(), s.request->options, s.request->on_text);
        s.cache.start(s.request->prompt);
    } catch (const std::exception& e) {
        end(s, e.what());
    }
}

void CompletionSlots::step() {
    decode();
    prefill();
}

void CompletionSlots::decode() {
    std::vector<Slot*> batch;
    std::vector<SeqToken> steps;
    for (const auto& s : slots_)
        if (s->decoding()) {
            batch.push_back(s.get());
            steps.push_back({s->sequence.seq(), s->next_token, int32_t(s->cache.tokens().size())});
        }
    if (batch.empty()) return;
    const std::vector<float>* logits = nullptr;
    try {
        logits = &evaluator_.decode_batch(steps);
    } catch (const std::exception& e) {
        // What the caches of the step's sequences hold now is unknown: they start afresh.
        for (Slot* s : batch) {
            s->cache.clear();
            end(*s, e.what());
        }
        return;
    }
    const size_t V = logits->size() / batch.size();
    for (size_t r = 0; r < batch.size(); ++r) {
        batch[r]->cache.appended(steps[r].token);
        take(*batch[r], logits->data() + r * V, V);
    }
}

void CompletionSlots::prefill() {
    std::vector<Slot*> waiting;
    bool others_decode = false;
    for (const auto& s : slots_) {
        others_decode = others_decode || s->decoding();
        if (s->running() && !s->decoding()) waiting.push_back(s.get());
    }
    std::sort(waiting.begin(), waiting.end(), [](const Slot* a, const Slot* b) { return a->started < b->started; });
    // Prompts in arrival order, up to prefill_chunk_ tokens in all while
    // others decode (their next tokens wait that long); a prompt with nobody
    // decoding goes in whole, and the ones after it share the chunk.
    bool whole = !others_decode;
    int32_t budget = prefill_chunk_;
    for (Slot* w : waiting) {
        if (budget <= 0) break;
        Slot& s = *w;
        const std::atomic<bool>* interrupt = s.request->options.interrupt;
        if (interrupt && interrupt->load()) {  // its client left while its prompt went in
            s.stream->end(FinishReason::interrupted);
            end(s);
            continue;
        }
        try {
            const int32_t n = whole ? s.cache.pending() : std::min(s.cache.pending(), budget);
            const std::vector<float>* logits = s.cache.advance(n);
            if (!whole) budget -= n;
            whole = false;
            if (!logits) continue;
            s.stream->prompt_done(s.cache.last_reused());
            take(s, logits->data(), logits->size());
        } catch (const std::exception& e) {
            s.cache.clear();
            end(s, e.what());
        }
    }
}

void CompletionSlots::take(Slot& s, const float* logits, size_t n_vocab) {
    std::optional<int32_t> next;
    try {
        next = s.stream->next(logits, n_vocab);
    } catch (const std::exception& e) {  // a consumer or sampler failing ends its own completion only
        end(s, e.what());
        return;
    }
    if (next) s.next_token = *next;
    else end(s);
}

void CompletionSlots::end(Slot& s, std::string error) {
    SlotRequest request = std::move(*s.request);
    CompletionResult result;
    if (error.empty() && s.stream) result = s.stream->take_result();
    s.request.reset();
    s.stream.reset();
    s.next_token = -1;
    s.last_used = ++clock_;
    if (!error.empty() && s.cache.pending() > 0) s.cache.clear();
    if (request.on_end) request.on_end(std::move(result), std::move(error));
}

}  // namespace hetero
