// The groups of cases that all_cases() concatenates.
#pragma once

#include "conformance.hpp"

#include <initializer_list>
#include <vector>

namespace hetero::conformance {

// A function that appends one group of cases, and the groups run in order.
using CaseGroup = void (*)(std::vector<Case>& out);
inline void add_groups(std::vector<Case>& out, std::initializer_list<CaseGroup> groups) {
    for (CaseGroup add : groups) add(out);
}

void add_op_cases(std::vector<Case>& out);     // one op per graph
void add_op_cases_1_2(std::vector<Case>& out); // one op per graph, the ops ABI 1.2 added
void add_op_cases_1_3(std::vector<Case>& out); // one op per graph, the op ABI 1.3 added
void add_attention_long_cases(std::vector<Case>& out); // attention over caches of up to 4,097 rows
void add_graph_cases(std::vector<Case>& out);  // chains with internal and constant tensors
void add_error_cases(std::vector<Case>& out);  // malformed graphs, bad bindings, bad data, buffers

}  // namespace hetero::conformance
