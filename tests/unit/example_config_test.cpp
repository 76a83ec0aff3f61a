// The example configuration that ships with the package must stay valid.
#include <hetero/config.hpp>

#include <gtest/gtest.h>

TEST(Config, ShippedExampleParses) {
    const auto c = hetero::Config::load(HETERO_SOURCE_DIR "/packaging/config.example.json");
    EXPECT_EQ(c.providers.size(), 3u);
    EXPECT_EQ(c.registry_options().enabled, (std::vector<std::string>{"cpu", "vulkan"}));
}
