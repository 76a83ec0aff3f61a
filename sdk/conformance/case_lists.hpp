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

// Rows of d elements, n of them: the shapes of the elementwise ops' cases.
struct RowShape {
    int64_t n, d;
};
inline constexpr RowShape kElementwiseShapes[] = {{1, 1}, {3, 7}, {17, 33}, {64, 257}, {2, 4096}, {5, 100}, {1, 63}};
// A gated activation (`op`, swiglu or geglu) of gate [n, d] and up [n, d],
// one case of each elementwise shape, named NAME/f32/nN_dD.
void add_gated_cases(std::vector<Case>& out, const char* name, uint32_t op);

void add_op_cases(std::vector<Case>& out);     // one op per graph
void add_op_cases_1_2(std::vector<Case>& out); // one op per graph, the ops ABI 1.2 added
void add_op_cases_1_3(std::vector<Case>& out); // one op per graph, the op ABI 1.3 added
void add_attention_long_cases(std::vector<Case>& out); // attention over caches of up to 4,097 rows
void add_graph_cases(std::vector<Case>& out);  // chains with internal and constant tensors
void add_error_cases(std::vector<Case>& out);  // malformed graphs, bad bindings, bad data, buffers

}  // namespace hetero::conformance
