// What one render may spend: steps, wall time, output bytes, the size of any
// value and the nesting depth, plus a cancel flag. A hostile template fails
// with a BudgetExceeded naming the limit instead of hanging or exhausting
// memory.
#pragma once

#include "errors.hpp"

#include <hetero/chat/jinja_chat_template.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace hetero::jinja {

class Budget {
public:
    Budget(const JinjaLimits& limits, const std::atomic<bool>* cancel);

    // One unit of work: a statement, an expression, a loop iteration, a
    // call. Every 256 steps also checks the clock and the cancel flag.
    void step() {
        if (++steps_ > limits_.max_steps) exceeded_steps();
        if ((steps_ & 255) == 0) check_clock();
    }
    // Before building a string of `bytes` or a collection of `items`.
    void check_string_size(uint64_t bytes) const {
        if (bytes > limits_.max_value_bytes) exceeded_value(bytes);
    }
    void check_items(uint64_t items) const {
        if (items > limits_.max_items) exceeded_items(items);
    }
    void check_output(uint64_t bytes) const {
        if (bytes > limits_.max_output_bytes) exceeded_output();
    }
    const JinjaLimits& limits() const { return limits_; }

    // Counts nesting (expressions, statements, macro calls) for its lifetime.
    class Depth {
    public:
        explicit Depth(Budget& b) : b_(b) {
            if (++b_.depth_ > b_.limits_.max_depth) b_.exceeded_depth();
        }
        ~Depth() { --b_.depth_; }
        Depth(const Depth&) = delete;
        Depth& operator=(const Depth&) = delete;

    private:
        Budget& b_;
    };

private:
    [[noreturn]] void exceeded_steps() const;
    [[noreturn]] void exceeded_value(uint64_t bytes) const;
    [[noreturn]] void exceeded_items(uint64_t items) const;
    [[noreturn]] void exceeded_output() const;
    [[noreturn]] void exceeded_depth() const;
    void check_clock() const;

    JinjaLimits limits_;
    const std::atomic<bool>* cancel_;
    std::chrono::steady_clock::time_point deadline_;
    uint64_t steps_ = 0;
    int depth_ = 0;
};

}  // namespace hetero::jinja
