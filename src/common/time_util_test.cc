#include "common/time_util.h"

#include <gtest/gtest.h>

namespace steward {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

std::string H(seconds s) { return HumanDuration(s); }

TEST(HumanDurationTest, SecondsUpToTwoMinutes) {
  EXPECT_EQ(H(seconds(0)), "0s");
  EXPECT_EQ(H(seconds(5)), "5s");
  EXPECT_EQ(H(seconds(119)), "119s");
}

TEST(HumanDurationTest, NegativeSkewToleratedForOneSecondOnly) {
  EXPECT_EQ(H(seconds(-1)), "0s");
  EXPECT_EQ(H(seconds(-2)), "<invalid>");
  EXPECT_EQ(H(seconds(-3600)), "<invalid>");
}

TEST(HumanDurationTest, MinutesWithSecondsBelowTenMinutes) {
  EXPECT_EQ(H(seconds(120)), "2m");
  EXPECT_EQ(H(seconds(192)), "3m12s");
  EXPECT_EQ(H(seconds(599)), "9m59s");
  EXPECT_EQ(H(seconds(600)), "10m");
  EXPECT_EQ(H(seconds(659)), "10m");
}

TEST(HumanDurationTest, MinutesOnlyBelowThreeHours) {
  EXPECT_EQ(H(minutes(179) + seconds(59)), "179m");
  EXPECT_EQ(H(hours(3)), "3h");
}

TEST(HumanDurationTest, HoursWithMinutesBelowEightHours) {
  EXPECT_EQ(H(hours(5) + minutes(30)), "5h30m");
  EXPECT_EQ(H(hours(7) + minutes(59) + seconds(59)), "7h59m");
  EXPECT_EQ(H(hours(8)), "8h");
  EXPECT_EQ(H(hours(47) + minutes(59)), "47h");
}

TEST(HumanDurationTest, DaysWithHoursBelowEightDays) {
  EXPECT_EQ(H(hours(48)), "2d");
  EXPECT_EQ(H(hours(53)), "2d5h");
  EXPECT_EQ(H(hours(24 * 8 - 1)), "7d23h");
  EXPECT_EQ(H(hours(24 * 8)), "8d");
  EXPECT_EQ(H(hours(24 * 729)), "729d");
}

TEST(HumanDurationTest, YearsWithDaysBelowEightYears) {
  EXPECT_EQ(H(hours(24 * 730)), "2y");
  EXPECT_EQ(H(hours(24 * (730 + 20))), "2y20d");
  EXPECT_EQ(H(hours(24 * (365 * 8 - 1))), "7y364d");
  EXPECT_EQ(H(hours(24 * 365 * 8)), "8y");
  EXPECT_EQ(H(hours(24 * 365 * 12 + 24 * 100)), "12y");
}

TEST(Rfc3339Test, RoundTripsSecondsAndMicros) {
  SystemTime t = std::chrono::system_clock::from_time_t(1767225600) + std::chrono::microseconds(5);
  EXPECT_EQ(FormatRfc3339(t), "2026-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339Micro(t), "2026-01-01T00:00:00.000005Z");
  auto parsed = ParseRfc3339("2026-01-01T00:00:00.000005Z");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, t);
  EXPECT_FALSE(ParseRfc3339("yesterday").has_value());
}

}  // namespace
}  // namespace steward
