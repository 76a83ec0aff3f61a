// TextStream: stop strings across pieces, UTF-8 characters split over tokens.
#include <hetero/chat/text_stream.hpp>

#include <gtest/gtest.h>

using hetero::TextStream;

namespace {
struct Collected {
    std::vector<std::string> pieces;
    std::function<bool(std::string_view)> sink() {
        return [this](std::string_view s) {
            pieces.emplace_back(s);
            return true;
        };
    }
};
}  // namespace

TEST(TextStream, StopStringSplitOverPiecesEndsTheText) {
    Collected c;
    TextStream s({"END"}, c.sink());
    EXPECT_FALSE(s.push("abc E"));
    EXPECT_FALSE(s.push("N"));
    EXPECT_TRUE(s.push("Dxyz"));
    s.finish();
    EXPECT_TRUE(s.stopped());
    EXPECT_EQ(s.text(), "abc ");
    for (const auto& p : c.pieces) EXPECT_EQ(p.find('E'), std::string::npos) << p;
}

TEST(TextStream, HeldBackTextIsReleasedWhenItCannotBecomeAStop) {
    Collected c;
    TextStream s({"<stop>", "xy"}, c.sink());
    s.push("a<st");
    EXPECT_EQ(s.text(), "a");
    s.push("ay");
    EXPECT_EQ(s.text(), "a<stay");
    s.push("x");
    s.finish();
    EXPECT_EQ(s.text(), "a<stayx");  // a lone "x" at the end is text
    EXPECT_FALSE(s.stopped());
}

TEST(TextStream, IncompleteUtf8WaitsForItsLastByte) {
    Collected c;
    TextStream s({}, c.sink());
    const std::string euro = "\xe2\x82\xac";
    s.push("a" + euro.substr(0, 1));
    EXPECT_EQ(s.text(), "a");
    s.push(euro.substr(1, 1));
    EXPECT_EQ(s.text(), "a");
    s.push(euro.substr(2));
    EXPECT_EQ(s.text(), "a" + euro);
    EXPECT_EQ(hetero::incomplete_utf8_tail("\xf0\x9f\x98"), 3u);
    EXPECT_EQ(hetero::incomplete_utf8_tail("ok"), 0u);
}

TEST(TextStream, SinkCancelling) {
    int calls = 0;
    TextStream s({}, [&](std::string_view) { return ++calls < 2; });
    EXPECT_FALSE(s.push("a"));
    EXPECT_TRUE(s.push("b"));
    EXPECT_TRUE(s.cancelled());
    EXPECT_TRUE(s.push("c"));
    EXPECT_EQ(calls, 2);
}
