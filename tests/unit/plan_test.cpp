#include <hetero/runtime/plan.hpp>

#include <gtest/gtest.h>

namespace {

std::vector<hetero::DeviceRef> fake_devices(int n) {
    std::vector<hetero::DeviceRef> d(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) d[static_cast<size_t>(i)].index = uint32_t(i);
    return d;
}

}  // namespace

TEST(Plan, EvenSplitCoversEveryLayerOnceInOrder) {
    for (int layers : {1, 2, 5, 22}) {
        for (int devices : {1, 2, 3, 7}) {
            const auto plan = hetero::plan_even_layers(layers, fake_devices(devices));
            ASSERT_EQ(plan.layers.size(), size_t(layers + 1));
            EXPECT_EQ(plan.used_devices().size(), size_t(std::min(layers, devices)));
            std::vector<int> count(size_t(devices), 0);
            for (int l = 0; l < layers; ++l) {
                if (l > 0) {
                    EXPECT_GE(plan.layers[size_t(l)].home, plan.layers[size_t(l - 1)].home) << "layers stay in device order";
                }
                count[plan.layers[size_t(l)].home] += 1;
            }
            int min_count = layers, max_count = 0;
            for (int d = 0; d < std::min(layers, devices); ++d) {
                min_count = std::min(min_count, count[size_t(d)]);
                max_count = std::max(max_count, count[size_t(d)]);
            }
            EXPECT_LE(max_count - min_count, 1) << layers << " layers on " << devices << " devices";
            EXPECT_EQ(plan.layers.back().home, plan.layers[size_t(layers - 1)].home) << "the head goes with the last layer";
        }
    }
}

TEST(Plan, SharesDefaultToTheHomeWhole) {
    auto plan = hetero::plan_single_device(3, fake_devices(2), 1);
    const auto s = plan.shares(2, hetero::Role::q, hetero::kDecode, 96);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0], (hetero::Share{1, 0, 96}));
    plan.layers[2].matmuls[hetero::kPrefill][hetero::Role::q] = {{0, 0, 32}, {1, 32, 96}};
    EXPECT_EQ(plan.shares(2, hetero::Role::q, hetero::kPrefill, 96).size(), 2u);
    EXPECT_EQ(plan.shares(2, hetero::Role::q, hetero::kDecode, 96).size(), 1u) << "phases are placed apart";
    EXPECT_EQ(plan.used_devices(), (std::vector<size_t>{0, 1}));
}

TEST(Plan, NoDeviceIsAnError) { EXPECT_THROW(hetero::plan_even_layers(5, {}), hetero::Error); }
