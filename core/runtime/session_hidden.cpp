// The hidden-state forward (embeddings): a sequence's tokens in chunks through
// the graph that ends at the output norm, the rows of every chunk gathered.
#include <hetero/runtime/trace.hpp>

#include "session_parts.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hetero {

const std::vector<float>& BatchEvaluator::hidden_states(int32_t, const std::vector<int32_t>&, int32_t) {
    throw Error("this evaluator gives no hidden states (embeddings need a session)");
}

const std::vector<float>& Session::hidden_states(int32_t seq, const std::vector<int32_t>& tokens, int32_t pos) {
    check_tokens(seq, tokens, pos);
    const size_t width = size_t(model_.hparams.n_embd);
    hidden_.resize(tokens.size() * width);
    for (size_t off = 0; off < tokens.size(); off += size_t(options_.max_batch)) {
        const int32_t n = int32_t(std::min<size_t>(size_t(options_.max_batch), tokens.size() - off));
        const int32_t at = pos + int32_t(off);
        const auto t0 = SessionClock::now();
        SessionProgram& P = hidden_program(n);
        bind_sequences(P, {seq});
        begin(P);
        for (int x : {P.schedule.tokens, P.schedule.positions}) {
            if (x < 0) continue;
            Exchange& e = *P.exchanges[size_t(x)];
            int32_t* v = reinterpret_cast<int32_t*>(e.host->data);
            for (int32_t i = 0; i < n; ++i) v[i] = x == P.schedule.tokens ? tokens[off + size_t(i)] : at + i;
            e.ready.store(P.generation, std::memory_order_release);
        }
        run(P, at);
        float* out = hidden_.data() + off * width;
        std::memcpy(out, P.exchanges[size_t(P.schedule.logits)]->host->data, size_t(n) * width * 4);
        // A NaN here would poison every pooled vector that includes the row.
        for (size_t i = 0; i < size_t(n) * width; ++i)
            if (!std::isfinite(out[i]))
                throw Error(fmt::format("non-finite hidden state ({}) at position {}: a weight of {} holds NaN/Inf, or its activations overflow",
                                        out[i], at + int32_t(i / width), model_.path));
        if (options_.trace) options_.trace->add({"host", fmt::format("hidden states of {} tokens at {}", n, at), "forward", t0, seconds_since(t0), -1});
    }
    return hidden_;
}

}  // namespace hetero
