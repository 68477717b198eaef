#include "common/backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace steward {
namespace {

using std::chrono::milliseconds;

Backoff::Options Opts(int initial, int max, double factor, double jitter) {
  Backoff::Options o;
  o.initial = milliseconds(initial);
  o.max = milliseconds(max);
  o.factor = factor;
  o.jitter = jitter;
  return o;
}

std::vector<int64_t> Take(Backoff& b, int n) {
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(b.Next().count());
  return out;
}

TEST(BackoffTest, GrowsByTheFactorUpToTheCapWithoutRandom) {
  Backoff b(Opts(100, 1000, 2.0, 0.5), nullptr);
  EXPECT_EQ(Take(b, 7), (std::vector<int64_t>{100, 200, 400, 800, 1000, 1000, 1000}));
  EXPECT_EQ(b.attempts(), 7);
}

TEST(BackoffTest, OtherFactorsAndCapsThatAreNotPowersOfTheFactor) {
  Backoff b(Opts(30, 250, 3.0, 0), nullptr);
  EXPECT_EQ(Take(b, 4), (std::vector<int64_t>{30, 90, 250, 250}));
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff b(Opts(50, 10000, 2.0, 0), nullptr);
  EXPECT_EQ(Take(b, 3), (std::vector<int64_t>{50, 100, 200}));
  b.Reset();
  EXPECT_EQ(b.attempts(), 0);
  EXPECT_EQ(Take(b, 2), (std::vector<int64_t>{50, 100}));
  EXPECT_EQ(b.attempts(), 2);
}

TEST(BackoffTest, JitterStaysWithinItsBoundsAndIsApplied) {
  Random random(42);
  Backoff b(Opts(1000, 8000, 2.0, 0.25), &random);
  const std::vector<double> bases = {1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000};
  int differing = 0;
  for (int round = 0; round < 50; ++round) {
    b.Reset();
    for (double base : bases) {
      int64_t d = b.Next().count();
      EXPECT_GE(d, static_cast<int64_t>(base * 0.75)) << "base " << base;
      EXPECT_LE(d, static_cast<int64_t>(base * 1.25)) << "base " << base;
      if (d != static_cast<int64_t>(base)) ++differing;
    }
  }
  // With a 25% jitter on 400 draws, nearly all differ from the base.
  EXPECT_GT(differing, 350);
}

TEST(BackoffTest, TheSameSeedGivesTheSameSequence) {
  Random r1(7), r2(7);
  Backoff a(Opts(100, 5000, 2.0, 0.3), &r1);
  Backoff b(Opts(100, 5000, 2.0, 0.3), &r2);
  EXPECT_EQ(Take(a, 10), Take(b, 10));
}

TEST(BackoffTest, ZeroJitterWithRandomIsExact) {
  Random random(1);
  Backoff b(Opts(10, 40, 2.0, 0), &random);
  EXPECT_EQ(Take(b, 4), (std::vector<int64_t>{10, 20, 40, 40}));
}

}  // namespace
}  // namespace steward
