#include "common/duration.h"

#include <gtest/gtest.h>

namespace steward {
namespace {

using std::chrono::milliseconds;

TEST(DurationTest, UnitsDecimalsAndBareSeconds) {
  EXPECT_EQ(ParseDuration("1500ms"), milliseconds(1500));
  EXPECT_EQ(ParseDuration("30s"), milliseconds(30000));
  EXPECT_EQ(ParseDuration("2m"), milliseconds(120000));
  EXPECT_EQ(ParseDuration("1h"), milliseconds(3600000));
  EXPECT_EQ(ParseDuration("12"), milliseconds(12000));
  EXPECT_EQ(ParseDuration("1.5"), milliseconds(1500));
  EXPECT_EQ(ParseDuration("0.5m"), milliseconds(30000));
  EXPECT_EQ(ParseDuration("0"), milliseconds(0));
  EXPECT_EQ(ParseDuration("0.0004s"), milliseconds(0));  // rounds to the millisecond
  EXPECT_EQ(ParseDuration("1000000000000ms"), milliseconds(1000000000000));
}

TEST(DurationTest, RefusesEverythingElse) {
  for (const char* bad : {"",
                          "s",
                          "ms",
                          "h",
                          "-1s",
                          "+1s",
                          "1.2.3s",
                          ".5s",
                          "5.s",
                          "abc",
                          "1e3",
                          " 1s",
                          "1s ",
                          "1 s",
                          "5x",
                          "1d",
                          "inf",
                          "nan",
                          "0x10",
                          "1000000000001ms",
                          "99999999999999999999999s",
                          "1e400"}) {
    EXPECT_EQ(ParseDuration(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace steward
