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
            ASSERT_EQ(plan.segments.size(), size_t(std::min(layers, devices)));
            int next = 0, min_count = layers, max_count = 0;
            for (const auto& s : plan.segments) {
                EXPECT_EQ(s.layer_begin, next);
                next = s.layer_end;
                min_count = std::min(min_count, s.layer_end - s.layer_begin);
                max_count = std::max(max_count, s.layer_end - s.layer_begin);
            }
            EXPECT_EQ(next, layers);
            EXPECT_LE(max_count - min_count, 1) << layers << " layers on " << devices << " devices";
            EXPECT_TRUE(plan.segments.front().embedding);
            EXPECT_TRUE(plan.segments.back().head);
        }
    }
}

TEST(Plan, NoDeviceIsAnError) { EXPECT_THROW(hetero::plan_even_layers(5, {}), hetero::Error); }
