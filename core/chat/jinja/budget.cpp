#include "budget.hpp"

namespace hetero::jinja {

Budget::Budget(const JinjaLimits& limits, const std::atomic<bool>* cancel)
    : limits_(limits), cancel_(cancel), deadline_(std::chrono::steady_clock::now() + limits.time_limit) {
    check_clock();
}

void Budget::exceeded_steps() const {
    throw BudgetExceeded("the template ran past its step budget (" + std::to_string(limits_.max_steps) + " steps)");
}

void Budget::exceeded_value(uint64_t bytes) const {
    throw BudgetExceeded("a string of " + std::to_string(bytes) + " bytes passes the value size budget (" +
                         std::to_string(limits_.max_value_bytes) + " bytes)");
}

void Budget::exceeded_items(uint64_t items) const {
    throw BudgetExceeded("a collection of " + std::to_string(items) + " items passes the collection size budget (" +
                         std::to_string(limits_.max_items) + " items)");
}

void Budget::exceeded_output() const {
    throw BudgetExceeded("the rendered text passes the output budget (" + std::to_string(limits_.max_output_bytes) + " bytes)");
}

void Budget::exceeded_depth() const {
    throw BudgetExceeded("the template nests deeper than the depth budget (" + std::to_string(limits_.max_depth) +
                         " levels of calls and expressions)");
}

void Budget::check_clock() const {
    if (cancel_ && cancel_->load(std::memory_order_relaxed)) throw BudgetExceeded("rendering was cancelled");
    if (std::chrono::steady_clock::now() > deadline_)
        throw BudgetExceeded("the template ran past its time budget (" + std::to_string(limits_.time_limit.count()) + " ms)");
}

}  // namespace hetero::jinja
