// compare_logits, the spot check's verdict: what counts as agreeing.
#include <hetero/runtime/spot_check.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using hetero::compare_logits;

std::vector<float> ramp(size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = float(std::sin(double(i) * 0.7) * 3.0);
    return v;
}

TEST(SpotCheck, EqualAndShiftedLogitsAgree) {
    const std::vector<float> ref = ramp(512);
    EXPECT_EQ(compare_logits(ref, ref), "");
    std::vector<float> shifted = ref;
    for (float& x : shifted) x += 7.5f;  // the same probabilities
    EXPECT_EQ(compare_logits(shifted, ref), "");
    std::vector<float> noisy = ref;
    for (size_t i = 0; i < noisy.size(); ++i) noisy[i] += 0.01f * float((i * 37) % 11) - 0.05f;  // a few % of the spread
    EXPECT_EQ(compare_logits(noisy, ref), "");
}

TEST(SpotCheck, AFarWorseTopTokenOrALargeDifferenceDisagrees) {
    const std::vector<float> ref = ramp(512);
    size_t top = 0, low = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        if (ref[i] > ref[top]) top = i;
        if (ref[i] < ref[low]) low = i;
    }
    std::vector<float> wrong_top = ref;
    wrong_top[low] = ref[top] + 1.0f;  // the device picks a token the reference ranks last
    EXPECT_NE(compare_logits(wrong_top, ref).find("below the reference's top token"), std::string::npos) << compare_logits(wrong_top, ref);
    std::vector<float> scaled = ref;
    for (float& x : scaled) x *= 1.5f;  // same order, different probabilities
    EXPECT_NE(compare_logits(scaled, ref).find("relative RMS"), std::string::npos) << compare_logits(scaled, ref);
    std::vector<float> nan = ref;
    nan[3] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_NE(compare_logits(nan, ref).find("logit 3"), std::string::npos);
    EXPECT_NE(compare_logits(std::vector<float>(3, 0.f), ref), "");
}

}  // namespace
