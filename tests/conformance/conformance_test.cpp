// Every conformance case on every device of every provider the registry
// loads, as one GoogleTest each: Providers/ProviderConformance.MatchesReference/cpu_0_matmul_q4_0_n1_m33_k64.
#include "conformance.hpp"

#include <hetero/registry.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace {

using hetero::conformance::Case;

hetero::Registry& registry() {
    static hetero::Registry r([] {
        hetero::RegistryOptions o;
        o.plugin_dirs = {HETERO_SELFTEST_PLUGIN_DIR};
        return o;
    }());
    return r;
}

const std::vector<Case>& cases() {
    static const std::vector<Case> c = hetero::conformance::all_cases();
    return c;
}

struct Param {
    hetero::Provider* provider = nullptr;
    uint32_t device = 0;
    size_t case_index = 0;
    std::string id;  // test name: <provider>_<device>_<case>
};

void PrintTo(const Param& p, std::ostream* os) { *os << p.provider->name() << " device " << p.device << " " << cases()[p.case_index].name; }

std::vector<Param> params() {
    std::vector<Param> out;
    for (hetero::Provider* p : registry().providers())
        for (uint32_t d = 0; d < p->device_count(); ++d)
            for (size_t i = 0; i < cases().size(); ++i)
                out.push_back({p, d, i, hetero::conformance::identifier(p->name() + "_" + std::to_string(d) + "_" + cases()[i].name)});
    return out;
}

class ProviderConformance : public testing::TestWithParam<Param> {};

TEST_P(ProviderConformance, MatchesReference) {
    const Param& p = GetParam();
    const Case& c = cases()[p.case_index];
    const auto r = hetero::conformance::run_case(p.provider->api(), p.provider->ep(), p.device, c);
    if (r.skipped) GTEST_SKIP() << c.name << ": " << r.message;
    EXPECT_TRUE(r.passed) << p.provider->name() << " device " << p.device << ", " << c.name << ": " << r.message;
}

INSTANTIATE_TEST_SUITE_P(Providers, ProviderConformance, testing::ValuesIn(params()),
                         [](const testing::TestParamInfo<Param>& info) { return info.param.id; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ProviderConformance);

TEST(ConformanceCases, NamesAreUniqueAsTestNames) {
    std::vector<std::string> ids;
    for (const auto& c : cases()) ids.push_back(hetero::conformance::identifier(c.name));
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
}

}  // namespace
