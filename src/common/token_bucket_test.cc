#include "common/token_bucket.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace steward {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

TEST(TokenBucketTest, BurstIsFreeThenEachTokenWaitsOneInterval) {
  FakeClock clock;
  TokenBucket bucket(10, 3, clock);  // one token per 100 ms
  EXPECT_EQ(bucket.Reserve(), nanoseconds(0));
  EXPECT_EQ(bucket.Reserve(), nanoseconds(0));
  EXPECT_EQ(bucket.Reserve(), nanoseconds(0));
  // Reservations queue up behind each other.
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
  EXPECT_EQ(bucket.Reserve(), milliseconds(200));
  EXPECT_EQ(bucket.Reserve(), milliseconds(300));
}

TEST(TokenBucketTest, RefillsAtTheRateAndTheWaitShrinksAsTimePasses) {
  FakeClock clock;
  TokenBucket bucket(10, 1, clock);
  EXPECT_EQ(bucket.Reserve(), nanoseconds(0));
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));  // one token owed
  // 150 ms refill 1.5 tokens: the debt is paid and half a token is left, so the next one
  // is 50 ms away.
  clock.Advance(milliseconds(150));
  EXPECT_EQ(bucket.Reserve(), milliseconds(50));
  clock.Advance(milliseconds(50));
  EXPECT_TRUE(!bucket.TryTake());  // that token was reserved
  clock.Advance(milliseconds(100));
  EXPECT_TRUE(bucket.TryTake());
}

TEST(TokenBucketTest, RefillNeverExceedsTheBurst) {
  FakeClock clock;
  TokenBucket bucket(100, 5, clock);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bucket.Reserve(), nanoseconds(0));
  clock.Advance(std::chrono::seconds(60));  // would be 6000 tokens without the cap
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bucket.Reserve(), nanoseconds(0)) << i;
  EXPECT_EQ(bucket.Reserve(), milliseconds(10));
}

TEST(TokenBucketTest, TryTakeTakesOnlyAvailableTokens) {
  FakeClock clock;
  TokenBucket bucket(4, 2, clock);  // one token per 250 ms
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
  clock.Advance(milliseconds(249));
  EXPECT_FALSE(bucket.TryTake());
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
  // A failed TryTake takes nothing: a Reserve right after waits only for the next token.
  EXPECT_EQ(bucket.Reserve(), milliseconds(250));
}

TEST(TokenBucketTest, NonPositiveQpsDisablesLimiting) {
  FakeClock clock;
  TokenBucket bucket(0, 1, clock);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(bucket.Reserve(), nanoseconds(0));
    ASSERT_TRUE(bucket.TryTake());
  }
}

TEST(TokenBucketTest, ABurstBelowOneStillAllowsOneToken) {
  FakeClock clock;
  TokenBucket bucket(2, 0, clock);
  EXPECT_EQ(bucket.Reserve(), nanoseconds(0));
  EXPECT_EQ(bucket.Reserve(), milliseconds(500));
}

TEST(TokenBucketTest, ConcurrentReservationsHandOutDistinctSlots) {
  FakeClock clock;
  TokenBucket bucket(1000, 10, clock);  // 1 ms per token
  std::vector<std::thread> threads;
  std::vector<std::vector<int64_t>> waits(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) waits[t].push_back(bucket.Reserve().count());
    });
  }
  for (auto& th : threads) th.join();
  std::vector<int64_t> all;
  for (const auto& w : waits) all.insert(all.end(), w.begin(), w.end());
  std::sort(all.begin(), all.end());
  // 10 free tokens, then one slot per millisecond: 1 ms, 2 ms, ... 90 ms.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(all[i], 0);
  for (int i = 10; i < 100; ++i) EXPECT_EQ(all[i], (i - 9) * 1'000'000) << i;
}

}  // namespace
}  // namespace steward
