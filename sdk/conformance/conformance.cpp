#include "conformance.hpp"

#include "case_lists.hpp"

namespace hetero::conformance {

std::vector<Case> all_cases() {
    std::vector<Case> cases;
    add_groups(cases, {add_op_cases, add_op_cases_1_2, add_op_cases_1_3, add_attention_long_cases, add_graph_cases, add_error_cases});
    return cases;
}

uint64_t seed_of(const std::string& name) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ull;
    return h;
}

std::string family_of(const std::string& case_name) { return case_name.substr(0, case_name.find('/')); }

std::string identifier(const std::string& name) {
    std::string id;
    for (char ch : name) {
        const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        id += keep ? ch : '_';
    }
    return id;
}

}  // namespace hetero::conformance
