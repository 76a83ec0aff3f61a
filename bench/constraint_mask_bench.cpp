// The cost of constrained sampling's token masks over a real vocabulary:
// random walks through the tokens a JSON schema or a grammar allows, timing
// every TokenConstraint::mask call (each walk's masks cached by state as in
// generation). Prints the mean, median and worst mask time per token.
//
//   bench_constraint_mask VOCAB.gguf [--walks N] [--steps N]
//
// VOCAB.gguf: any GGUF with a tokenizer (llama.cpp's vocabulary-only files,
// which tests/fetch_vocab.sh puts in .peer/vocab, or a model).
#include <hetero/chat/grammar.hpp>
#include <hetero/chat/grammar_matcher.hpp>
#include <hetero/chat/json_schema_matcher.hpp>
#include <hetero/chat/token_constraint.hpp>
#include <hetero/model/gguf.hpp>
#include <hetero/tokenizer/tokenizer.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using hetero::TokenConstraint;

constexpr const char* kSchema = R"({"type":"object","properties":{
  "name":{"type":"string"},"age":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},
  "role":{"enum":["admin","user"]}},"required":["name","age","tags","role"],"additionalProperties":false})";
constexpr const char* kGrammar = R"(root ::= item ("," item){0,7}
item ::= word "=" number
word ::= [a-z]{1,12}
number ::= "-"? [0-9]{1,6} ("." [0-9]{1,3})?)";

struct Times {
    std::vector<double> ms;
    void report(const char* what) {
        if (ms.empty()) return std::printf("%-8s no masks\n", what), void();
        std::sort(ms.begin(), ms.end());
        double sum = 0;
        for (double m : ms) sum += m;
        std::printf("%-8s masks %6zu  mean %.3f ms  median %.3f ms  p99 %.3f ms  worst %.3f ms\n", what, ms.size(), sum / double(ms.size()),
                    ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back());
    }
};

// One walk: mask, pick an allowed token at random (structural ones half the
// time, so values end), accept it; until an end token or `steps`.
void walk(const std::function<TokenConstraint()>& make, const hetero::TokenTrie& trie, int32_t eos, size_t n_vocab, uint32_t seed,
          int steps, Times& t) {
    std::mt19937 rng(seed);
    TokenConstraint c = make();
    std::vector<float> logits(n_vocab);
    for (int step = 0; step < steps; ++step) {
        std::fill(logits.begin(), logits.end(), 0.f);
        const auto t0 = std::chrono::steady_clock::now();
        c.mask(logits, {eos});
        t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        std::vector<int32_t> allowed, structural;
        for (size_t i = 0; i < logits.size(); ++i)
            if (std::isfinite(logits[i])) allowed.push_back(int32_t(i));
        if (allowed.empty()) return;
        for (int32_t a : allowed)
            if (a != eos && trie.text(a).find_first_of("\"{}[],:=0123456789") != std::string::npos) structural.push_back(a);
        const std::vector<int32_t>& pool = structural.empty() || rng() % 2 ? allowed : structural;
        const int32_t tok = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
        if (tok == eos || !c.accept(tok)) return;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s VOCAB.gguf [--walks N] [--steps N]\n", argv[0]);
        return 2;
    }
    int walks = 20, steps = 200;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--walks")) walks = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    }
    try {
        const hetero::GgufFile gguf = hetero::GgufFile::open(argv[1]);
        const auto tok = hetero::Tokenizer::create(hetero::vocab_from_gguf(gguf));
        const auto t0 = std::chrono::steady_clock::now();
        const auto trie = std::make_shared<const hetero::TokenTrie>(*tok);
        std::printf("vocabulary %d tokens, trie built in %.1f ms\n", tok->n_vocab(),
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        const auto schema = hetero::JsonSchema::compile(kSchema);
        const auto grammar = hetero::Grammar::parse(kGrammar);
        Times json_times, grammar_times;
        for (int w = 0; w < walks; ++w) {
            walk([&] { return TokenConstraint(schema, trie); }, *trie, tok->eos(), size_t(tok->n_vocab()), uint32_t(w + 1), steps, json_times);
            walk([&] { return TokenConstraint(std::make_unique<hetero::GrammarMatcher>(grammar), trie); }, *trie, tok->eos(),
                 size_t(tok->n_vocab()), uint32_t(w + 1), steps, grammar_times);
        }
        json_times.report("schema");
        grammar_times.report("grammar");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_constraint_mask: %s\n", e.what());
        return 1;
    }
}
