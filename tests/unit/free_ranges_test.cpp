// The free-range bookkeeping providers carve pooled device buffers with.
#include <hetero/sdk/free_ranges.hpp>

#include <gtest/gtest.h>

#include <random>
#include <vector>

using hetero::sdk::FreeRanges;

TEST(FreeRanges, TakesAlignedRangesAndMergesWhatComesBack) {
    FreeRanges r(1024);
    uint64_t a = 0, b = 0, c = 0;
    ASSERT_TRUE(r.take(100, 256, a));
    ASSERT_TRUE(r.take(100, 256, b));
    EXPECT_EQ(a, 0u);
    EXPECT_EQ(b, 256u);  // aligned past a's end
    EXPECT_FALSE(r.take(1024, 16, c));
    r.give_back(a, 100);
    r.give_back(b, 100);
    EXPECT_TRUE(r.all_free());  // the pieces and the alignment gap merged back
    ASSERT_TRUE(r.take(1024, 16, c));
    EXPECT_EQ(c, 0u);
}

TEST(FreeRanges, BestFitKeepsLargeHolesWhole) {
    FreeRanges r(1000);
    uint64_t x[4];
    for (uint64_t& o : x) ASSERT_TRUE(r.take(100, 1, o));  // 0, 100, 200, 300; 400..999 free
    r.give_back(x[1], 100);                                // a 100-byte hole
    uint64_t small = 0;
    ASSERT_TRUE(r.take(80, 1, small));
    EXPECT_EQ(small, 100u);  // into the hole, not the large tail
    uint64_t big = 0;
    ASSERT_TRUE(r.take(600, 1, big));
    EXPECT_EQ(big, 400u);
}

TEST(FreeRanges, RandomTakesNeverOverlapAndAllComeBack) {
    std::mt19937 rng(3);
    FreeRanges r(1 << 20);
    std::vector<std::pair<uint64_t, uint64_t>> live;
    for (int step = 0; step < 2000; ++step) {
        if (!live.empty() && rng() % 3 == 0) {
            const size_t i = rng() % live.size();
            r.give_back(live[i].first, live[i].second);
            live.erase(live.begin() + long(i));
            continue;
        }
        const uint64_t size = 1 + rng() % 5000;
        uint64_t off = 0;
        if (!r.take(size, 256, off)) continue;
        EXPECT_EQ(off % 256, 0u);
        EXPECT_LE(off + size, uint64_t(1) << 20);
        for (const auto& [o, s] : live) EXPECT_TRUE(off + size <= o || o + s <= off) << "overlap at " << off;
        live.emplace_back(off, size);
    }
    for (const auto& [o, s] : live) r.give_back(o, s);
    EXPECT_TRUE(r.all_free());
}
