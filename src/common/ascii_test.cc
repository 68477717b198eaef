#include "common/ascii.h"

#include <gtest/gtest.h>

namespace steward {
namespace {

TEST(AsciiTest, LowerFoldsOnlyAsciiLetters) {
  EXPECT_EQ(AsciiLower("Content-TYPE: X9"), "content-type: x9");
  EXPECT_EQ(AsciiLower("\xC3\x84"), "\xC3\x84");  // UTF-8 'Ä' is left alone
  EXPECT_TRUE(AsciiEqualsIgnoreCase("Bearer", "bEARER"));
  EXPECT_FALSE(AsciiEqualsIgnoreCase("Bearer", "Bearer "));
}

TEST(AsciiTest, TrimAsciiWhitespaceStripsWhatIsspaceMatches) {
  EXPECT_EQ(TrimAsciiWhitespace(" \t\n\v\f\rvalue \t\n\v\f\r"), "value");
  EXPECT_EQ(TrimAsciiWhitespace("a b\tc"), "a b\tc");  // inner whitespace stays
  EXPECT_EQ(TrimAsciiWhitespace(" \r\n "), "");
  EXPECT_EQ(TrimAsciiWhitespace(""), "");
  EXPECT_EQ(TrimAsciiWhitespace("x"), "x");
}

TEST(AsciiTest, TrimHttpWhitespaceStripsOnlySpaceAndTab) {
  EXPECT_EQ(TrimHttpWhitespace(" \tapplication/json\t "), "application/json");
  EXPECT_EQ(TrimHttpWhitespace("\r\nvalue\r\n"), "\r\nvalue\r\n");
  EXPECT_EQ(TrimHttpWhitespace(" \t "), "");
}

TEST(AsciiTest, TrimLeftAndRightUseTheirOwnSets) {
  EXPECT_EQ(TrimLeft("--x--", "-"), "x--");
  EXPECT_EQ(TrimRight("--x--", "-"), "--x");
  EXPECT_EQ(TrimRight(TrimLeft(" \rline \r", " \t"), " \t\r"), "\rline");
  EXPECT_EQ(Trim("xyx", "xy"), "");
}

TEST(AsciiTest, TrimReturnsAViewIntoItsArgument) {
  std::string_view s = "  abc  ";
  std::string_view t = TrimAsciiWhitespace(s);
  EXPECT_EQ(t.data(), s.data() + 2);
  EXPECT_EQ(t.size(), 3u);
}

}  // namespace
}  // namespace steward
