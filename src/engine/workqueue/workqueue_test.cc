#include "engine/workqueue/workqueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "engine/workqueue/workqueue_test_util.h"
#include "test_support/eventually.h"

namespace steward::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

using ::steward::test_support::Eventually;

using testing::MakeQueue;
using testing::NoLimits;

// Get() for single-threaded tests: fails instead of blocking forever when nothing is ready.
std::optional<std::string> Next(WorkQueue& q) {
  if (q.Len() == 0 && !q.ShuttingDown()) {
    ADD_FAILURE() << "Get() would block: no ready key";
    return "<would block>";
  }
  return q.Get();
}

// "<prefix><n>", built without operator+ (GCC 12 -Wrestrict false positives at -O3).
std::string Key(const char* prefix, int n) {
  std::string key(prefix);
  key += std::to_string(n);
  return key;
}

// Offset of `key`'s due time from now, or -1ns when it has no pending delayed entry.
nanoseconds DueIn(const WorkQueue& q, const Clock& clock, const std::string& key) {
  auto due = q.WaitingUntil(key);
  if (!due) return nanoseconds(-1);
  return *due - clock.Now();
}

TEST(WorkQueueOptionsTest, InvalidOptionsNameTheField) {
  FakeClock clock;
  struct Case {
    void (*mutate)(WorkQueueOptions&);
    const char* field;
  };
  const Case cases[] = {
      {[](WorkQueueOptions& o) { o.base_delay = nanoseconds(0); }, "workqueue.base_delay"},
      {[](WorkQueueOptions& o) { o.max_delay = milliseconds(1); }, "workqueue.max_delay"},
      {[](WorkQueueOptions& o) { o.jitter = 1.5; }, "workqueue.jitter"},
      {[](WorkQueueOptions& o) { o.jitter = -0.1; }, "workqueue.jitter"},
      {[](WorkQueueOptions& o) { o.retry_burst = 0; }, "workqueue.retry_burst"},
      {[](WorkQueueOptions& o) { o.max_timer_wait = nanoseconds(0); }, "workqueue.max_timer_wait"},
      {[](WorkQueueOptions& o) { o.resume_window = -seconds(1); }, "workqueue.resume_window"},
      {[](WorkQueueOptions& o) { o.resumed_run = 0; }, "workqueue.resumed_run"},
  };
  for (const auto& c : cases) {
    WorkQueueOptions o;
    c.mutate(o);
    auto q = WorkQueue::Create(o, clock);
    ASSERT_FALSE(q.ok()) << c.field;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find(c.field), std::string::npos) << q.status().message();
  }
  EXPECT_TRUE(WorkQueue::Create(WorkQueueOptions{}, clock).ok());
  // The global bucket may be disabled with any burst.
  WorkQueueOptions off;
  off.retry_qps = 0;
  off.retry_burst = 0;
  EXPECT_TRUE(WorkQueue::Create(off, clock).ok());
}

TEST(WorkQueueTest, AddDedupsQueuedKeysAndKeepsFifoOrder) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->Add("a");
  q->Add("b");
  q->Add("a");
  q->Add("c");
  q->Add("b");
  EXPECT_EQ(q->Len(), 3u);
  EXPECT_EQ(Next(*q), "a");
  EXPECT_EQ(Next(*q), "b");
  EXPECT_EQ(Next(*q), "c");
  EXPECT_EQ(q->Len(), 0u);
  auto s = q->Stats();
  EXPECT_EQ(s.adds, 3u);
  EXPECT_EQ(s.deduped, 2u);
  EXPECT_EQ(s.processing, 3u);
}

// Hands out every ready key, each Done at once; their order.
std::vector<std::string> Drain(WorkQueue& q) {
  std::vector<std::string> order;
  while (q.Len() > 0) {
    auto key = q.Get();
    if (!key) break;
    order.push_back(*key);
    q.Done(*key);
  }
  return order;
}

// Runs `key` once (Get, Done), so that it counts as handed out now.
void RunOnce(WorkQueue& q, const std::string& key) {
  q.Add(key);
  auto got = Next(q);
  ASSERT_EQ(got, key);
  q.Done(key);
}

TEST(WorkQueueOrderTest, GroupsTakeTurnsSoABurstDoesNotHoldBackAnotherGroupsKey) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  for (int i = 0; i < 4; ++i) q->Add(Key("a", i), "team-a");
  q->Add("b0", "team-b");
  q->Add("a4", "team-a");
  q->Add("c0", "team-c");
  EXPECT_EQ(q->Stats().ready_groups, 3u);
  EXPECT_EQ(Drain(*q), (std::vector<std::string>{"a0", "b0", "c0", "a1", "a2", "a3", "a4"}));
  EXPECT_EQ(q->Stats().ready_groups, 0u);
  // The group sticks to the key: a later Add without one files it under the same group.
  EXPECT_EQ(q->GroupOf("b0"), "team-b");
  q->Add("a5", "team-a");
  q->Add("a6", "team-a");
  q->Add("b0");
  EXPECT_EQ(Drain(*q), (std::vector<std::string>{"a5", "b0", "a6"}));
}

// Options with a resume window of 60 s.
WorkQueueOptions Resuming() {
  WorkQueueOptions o = NoLimits();
  o.resume_window = seconds(60);
  return o;
}

TEST(WorkQueueOrderTest, AResumedKeyGoesBeforeItsGroupsFreshKeys) {
  FakeClock clock;
  auto q = MakeQueue(clock, Resuming());
  RunOnce(*q, "started");
  for (int i = 0; i < 3; ++i) q->Add(Key("new", i));
  clock.Advance(seconds(30));
  q->Add("started");  // its next step, ready after the fresh keys
  EXPECT_EQ(Drain(*q), (std::vector<std::string>{"started", "new0", "new1", "new2"}));
  EXPECT_EQ(q->Stats().resumed, 1u);
  // Past the window a key is fresh again: it waits its turn.
  RunOnce(*q, "started");
  clock.Advance(seconds(60));
  q->Add("new3");
  q->Add("started");
  EXPECT_EQ(Drain(*q), (std::vector<std::string>{"new3", "started"}));
}

TEST(WorkQueueOrderTest, ResumedKeysGoAtMostResumedRunInARowWhileFreshOnesWait) {
  FakeClock clock;
  WorkQueueOptions o = Resuming();
  o.resumed_run = 2;
  auto q = MakeQueue(clock, o);
  for (int i = 0; i < 5; ++i) RunOnce(*q, Key("r", i));
  q->Add("f0");
  q->Add("f1");
  for (int i = 0; i < 5; ++i) q->Add(Key("r", i));
  EXPECT_EQ(Drain(*q), (std::vector<std::string>{"r0", "r1", "f0", "r2", "r3", "f1", "r4"}));
}

TEST(WorkQueueOrderTest, TheDefaultZeroWindowKeepsOneFifoPerGroup) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  RunOnce(*q, "started");
  q->Add("new0");
  q->Add("started");
  EXPECT_EQ(Drain(*q), (std::vector<std::string>{"new0", "started"}));
  EXPECT_EQ(q->Stats().resumed, 0u);
}

TEST(WorkQueueOrderTest, IdleKeysAreForgottenOnceTheirWindowHasPassed) {
  FakeClock clock;
  auto q = MakeQueue(clock, Resuming());  // pruned at most every 60 s
  q->Add("idle", "team-a");
  ASSERT_EQ(Next(*q), "idle");
  q->Done("idle");
  q->Add("busy", "team-b");
  ASSERT_EQ(Next(*q), "busy");  // still handed out when the prune comes
  q->Add("waiting", "team-c");
  ASSERT_EQ(Next(*q), "waiting");
  q->Done("waiting");
  q->AddAfter("waiting", seconds(600));
  EXPECT_EQ(q->Stats().known_keys, 3u);
  clock.Advance(seconds(61));
  q->Kick();
  EXPECT_EQ(q->Stats().known_keys, 2u);
  EXPECT_EQ(q->GroupOf("idle"), "");
  EXPECT_EQ(q->GroupOf("busy"), "team-b");
  EXPECT_EQ(q->GroupOf("waiting"), "team-c");
  q->Done("busy");
}

TEST(WorkQueueTest, ReAddWhileProcessingIsParkedThenDeliveredExactlyOnce) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->Add("a");
  ASSERT_EQ(Next(*q), "a");
  q->Add("a");
  q->Add("a");
  q->Add("a");
  // Parked: not handed out while "a" is being processed.
  EXPECT_EQ(q->Len(), 0u);
  q->Add("b");
  EXPECT_EQ(Next(*q), "b");  // the next Get skips the parked key
  q->Done("b");
  q->Done("a");
  EXPECT_EQ(q->Len(), 1u);
  EXPECT_EQ(Next(*q), "a");
  q->Done("a");
  EXPECT_EQ(q->Len(), 0u);
  auto s = q->Stats();
  EXPECT_EQ(s.adds, 3u);     // a, a (parked), b
  EXPECT_EQ(s.deduped, 2u);  // the two extra parked adds
  EXPECT_EQ(s.processing, 0u);
}

TEST(WorkQueueTest, SecondGetterWaitsUntilTheKeyIsDone) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->Add("a");
  ASSERT_EQ(Next(*q), "a");
  q->Add("a");
  auto second = std::async(std::launch::async, [&] { return q->Get(); });
  // The second getter is blocked: the only dirty key is being processed.
  ASSERT_TRUE(Eventually([&] { return q->Stats().blocked_getters == 1; }));
  EXPECT_EQ(q->Len(), 0u);
  q->Done("a");
  if (second.wait_for(seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "the parked key was not handed out after Done";
    q->ShutDown();  // releases the getter
  }
  EXPECT_EQ(second.get(), "a");
  EXPECT_EQ(q->Stats().processing, 1u);
}

TEST(WorkQueueTest, DoneForAKeyNotBeingProcessedChangesNothing) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->Add("a");
  q->Done("a");  // queued, not processing: must not queue a duplicate
  EXPECT_EQ(q->Len(), 1u);
  ASSERT_EQ(Next(*q), "a");
  q->Done("a");
  q->Done("a");
  q->Done("never-added");
  EXPECT_EQ(q->Len(), 0u);
  EXPECT_EQ(q->Stats().work_duration.count, 1u);
}

// 8 workers, 4 adders, 64 keys: no key is ever held by two workers at once, and the last add
// of every key is followed by a run that saw it (no add is lost).
TEST(WorkQueueTest, StressNeverTwoWorkersOnOneKeyAndNoAddIsLost) {
  constexpr int kKeys = 64, kWorkers = 8, kAdders = 4, kAddsPerAdder = 5000;
  FakeClock clock;
  auto q = MakeQueue(clock);
  std::vector<std::atomic<int>> in_flight(kKeys);
  std::vector<std::atomic<int>> version(kKeys);  // bumped before each Add
  std::vector<std::atomic<int>> seen(kKeys);     // version read at the start of a run
  std::vector<std::atomic<int>> runs(kKeys);
  std::atomic<int> violations{0};
  for (int k = 0; k < kKeys; ++k) in_flight[k] = version[k] = seen[k] = runs[k] = 0;

  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (auto key = q->Get()) {
        const int k = std::stoi(*key);
        if (in_flight[k].fetch_add(1) != 0) ++violations;
        seen[k] = version[k].load();
        ++runs[k];
        std::this_thread::yield();  // widen the window for a second worker to collide
        in_flight[k].fetch_sub(1);
        q->Done(*key);
      }
    });
  }
  std::vector<std::thread> adders;
  for (int a = 0; a < kAdders; ++a) {
    adders.emplace_back([&, a] {
      std::mt19937 gen(static_cast<unsigned>(a));
      std::uniform_int_distribution<int> pick(0, kKeys - 1);
      for (int i = 0; i < kAddsPerAdder; ++i) {
        const int k = pick(gen);
        ++version[k];
        q->Add(std::to_string(k));
      }
    });
  }
  for (auto& t : adders) t.join();
  ASSERT_TRUE(Eventually([&] {
    auto s = q->Stats();
    return s.depth == 0 && s.processing == 0;
  }));
  auto stats = q->Stats();
  q->ShutDown();
  for (auto& t : workers) t.join();

  EXPECT_EQ(violations.load(), 0);
  int total_runs = 0;
  for (int k = 0; k < kKeys; ++k) {
    if (version[k] > 0) {
      EXPECT_EQ(seen[k].load(), version[k].load()) << "key " << k << " lost its last add";
    }
    total_runs += runs[k];
  }
  // Every run was caused by an accepted add; dedup'd adds caused none.
  EXPECT_EQ(static_cast<uint64_t>(total_runs), stats.adds);
  EXPECT_EQ(stats.adds + stats.deduped, static_cast<uint64_t>(kAdders * kAddsPerAdder));
}

TEST(WorkQueueTest, DelayedAddsBecomeReadyInDueOrderWithAFakeClock) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->AddAfter("late", seconds(3));
  q->AddAfter("early", seconds(1));
  q->AddAfter("middle", seconds(2));
  q->AddAfter("middle-too", seconds(2));
  q->Kick();
  EXPECT_EQ(q->Len(), 0u);
  EXPECT_EQ(q->Stats().waiting, 4u);

  clock.Advance(milliseconds(999));
  q->Kick();
  EXPECT_EQ(q->Len(), 0u);
  clock.Advance(milliseconds(1));
  q->Kick();
  ASSERT_EQ(q->Len(), 1u);
  EXPECT_EQ(Next(*q), "early");

  clock.Advance(seconds(5));
  q->Kick();
  ASSERT_EQ(q->Len(), 3u);
  EXPECT_EQ(Next(*q), "middle");  // same due time: insertion order
  EXPECT_EQ(Next(*q), "middle-too");
  EXPECT_EQ(Next(*q), "late");
  EXPECT_EQ(q->Stats().waiting, 0u);
}

TEST(WorkQueueTest, TheEarliestPendingAddAfterWins) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->AddAfter("a", seconds(5));
  q->AddAfter("a", seconds(2));   // sooner: replaces
  q->AddAfter("a", seconds(10));  // later: ignored
  EXPECT_EQ(DueIn(*q, clock, "a"), seconds(2));
  EXPECT_EQ(q->Stats().waiting, 1u);
  clock.Advance(seconds(2));
  q->Kick();
  EXPECT_EQ(Next(*q), "a");
  q->Done("a");
  clock.Advance(seconds(10));
  q->Kick();
  EXPECT_EQ(q->Len(), 0u);  // the replaced entries do not fire
}

TEST(WorkQueueTest, ImmediateAddSupersedesAPendingDelay) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->AddAfter("a", seconds(5));
  q->Add("a");
  EXPECT_FALSE(q->WaitingUntil("a").has_value());
  EXPECT_EQ(Next(*q), "a");
  q->Done("a");
  clock.Advance(seconds(6));
  q->Kick();
  EXPECT_EQ(q->Len(), 0u);
  // A zero or negative delay is an immediate add, and also supersedes.
  q->AddAfter("b", seconds(5));
  q->AddAfter("b", nanoseconds(0));
  EXPECT_FALSE(q->WaitingUntil("b").has_value());
  q->AddAfter("c", milliseconds(-5));
  EXPECT_EQ(q->Len(), 2u);
}

TEST(WorkQueueTest, ADelayedKeyFallingDueWhileProcessingIsParked) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->Add("a");
  ASSERT_EQ(Next(*q), "a");
  q->AddAfter("a", seconds(1));
  clock.Advance(seconds(1));
  q->Kick();
  EXPECT_EQ(q->Len(), 0u);  // still being processed
  q->Done("a");
  EXPECT_EQ(q->Len(), 1u);
  EXPECT_EQ(Next(*q), "a");
}

TEST(WorkQueueTest, TimerThreadReleasesDelayedKeysOnARealClock) {
  auto q = MakeQueue(RealClock::Get());
  q->AddAfter("far", std::chrono::hours(1));
  // Once the timer thread has run an iteration it sleeps on "far" (or the 10 s heartbeat).
  ASSERT_TRUE(Eventually([&] { return q->Stats().timer_wakeups >= 1; }));
  // A new earliest entry must cut the timer thread's wait short.
  const auto start = std::chrono::steady_clock::now();
  q->AddAfter("soon", milliseconds(20));
  auto got = std::async(std::launch::async, [&] { return q->Get(); });
  if (got.wait_for(seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "the timer thread did not release the key";
    q->ShutDown();  // releases the getter
  }
  EXPECT_EQ(got.get(), "soon");
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, milliseconds(20));
  EXPECT_LT(waited, seconds(5));
  EXPECT_TRUE(q->WaitingUntil("far").has_value());
}

TEST(WorkQueueTest, BackoffDoublesPerKeyUpToTheCapAndForgetResets) {
  FakeClock clock;
  WorkQueueOptions o = NoLimits();
  o.base_delay = milliseconds(100);
  o.max_delay = seconds(1);
  auto q = MakeQueue(clock, o);
  const nanoseconds expected[] = {milliseconds(100), milliseconds(200), milliseconds(400),
                                  milliseconds(800), seconds(1),        seconds(1)};
  int n = 0;
  for (nanoseconds want : expected) {
    q->AddRateLimited("a");
    ++n;
    EXPECT_EQ(q->NumRequeues("a"), n);
    EXPECT_EQ(DueIn(*q, clock, "a"), want) << "failure " << n;
    clock.Advance(want - nanoseconds(1));
    q->Kick();
    EXPECT_EQ(q->Len(), 0u) << "released early at failure " << n;
    clock.Advance(nanoseconds(1));
    q->Kick();
    ASSERT_EQ(Next(*q), "a");
    q->Done("a");
  }
  // Keys are independent: "b" starts at the base delay.
  q->AddRateLimited("b");
  EXPECT_EQ(DueIn(*q, clock, "b"), milliseconds(100));
  EXPECT_EQ(q->NumRequeues("b"), 1);

  q->Forget("a");
  EXPECT_EQ(q->NumRequeues("a"), 0);
  q->AddRateLimited("a");
  EXPECT_EQ(DueIn(*q, clock, "a"), milliseconds(100));
  EXPECT_EQ(q->NumRequeues("unknown"), 0);
  EXPECT_EQ(q->Stats().retries, 8u);
}

TEST(WorkQueueTest, JitterStaysWithinBoundsAndVaries) {
  FakeClock clock;
  WorkQueueOptions o = NoLimits();
  o.base_delay = milliseconds(100);
  o.max_delay = milliseconds(500);
  o.jitter = 0.2;
  o.jitter_seed = 42;
  auto q = MakeQueue(clock, o);
  // failures → nominal delay: 0 → 100ms, 1 → 200ms, 2 → 400ms, 3 → 500ms (capped).
  const nanoseconds nominal[] = {milliseconds(100), milliseconds(200), milliseconds(400),
                                 milliseconds(500)};
  for (int failures = 0; failures < 4; ++failures) {
    std::set<nanoseconds> delays;
    for (int k = 0; k < 200; ++k) {
      const std::string key = Key("k", k);
      // Bring the key to `failures` recorded failures without a pending entry on it.
      q->Forget(key);
      for (int i = 0; i < failures; ++i) {
        q->AddRateLimited(key);
        q->Add(key);  // supersede the delayed entry so the next one is not "earliest wins"
      }
      q->AddRateLimited(key);
      const nanoseconds d = DueIn(*q, clock, key);
      ASSERT_GT(d, nanoseconds(0));
      const double lo = nominal[failures].count() * 0.8;
      const double hi = std::min(nominal[failures].count() * 1.2, 5e8);
      EXPECT_GE(static_cast<double>(d.count()), lo) << "failures " << failures;
      EXPECT_LE(static_cast<double>(d.count()), hi) << "failures " << failures;
      delays.insert(d);
    }
    EXPECT_GT(delays.size(), 50u) << "no jitter at failures " << failures;
  }
  // Same seed, same sequence: runs can be replayed.
  auto q1 = MakeQueue(clock, o);
  auto q2 = MakeQueue(clock, o);
  for (int i = 0; i < 5; ++i) {
    q1->AddRateLimited(Key("x", i));
    q2->AddRateLimited(Key("x", i));
    EXPECT_EQ(DueIn(*q1, clock, Key("x", i)), DueIn(*q2, clock, Key("x", i)));
  }
}

TEST(WorkQueueTest, GlobalBucketCapsTheRetryRate) {
  FakeClock clock;
  WorkQueueOptions o = NoLimits();
  o.base_delay = milliseconds(1);
  o.retry_qps = 10;
  o.retry_burst = 3;
  auto q = MakeQueue(clock, o);
  // Ten different keys fail at the same instant: the burst goes at the per-key delay, the rest
  // are spaced 1/qps apart.
  for (int k = 0; k < 10; ++k) q->AddRateLimited(Key("k", k));
  for (int k = 0; k < 10; ++k) {
    const nanoseconds want = k < 3 ? nanoseconds(milliseconds(1)) : milliseconds(100) * (k - 2);
    const nanoseconds got = DueIn(*q, clock, Key("k", k));
    EXPECT_NEAR(static_cast<double>(got.count()), static_cast<double>(want.count()), 1e3)
        << "key k" << k;
  }
  // The bucket refills at qps: after a quiet second a new failure goes at its own delay again.
  clock.Advance(seconds(1));
  q->Kick();
  EXPECT_EQ(q->Len(), 10u);
  q->AddRateLimited("later");
  EXPECT_EQ(DueIn(*q, clock, "later"), milliseconds(1));
}

TEST(WorkQueueTest, DelayIsTheLongerOfBackoffAndBucket) {
  FakeClock clock;
  WorkQueueOptions o = NoLimits();
  o.base_delay = milliseconds(500);
  o.max_delay = seconds(10);
  o.retry_qps = 10;
  o.retry_burst = 1;
  auto q = MakeQueue(clock, o);
  q->AddRateLimited("a");  // bucket: 0, backoff: 500ms
  EXPECT_EQ(DueIn(*q, clock, "a"), milliseconds(500));
  q->AddRateLimited("b");  // bucket: 100ms, backoff: 500ms
  EXPECT_EQ(DueIn(*q, clock, "b"), milliseconds(500));
  // Exhaust the bucket with other keys until it is the longer delay.
  for (int i = 0; i < 8; ++i) q->AddRateLimited(Key("x", i));
  q->AddRateLimited("c");  // bucket: 1000ms, backoff: 500ms
  EXPECT_NEAR(static_cast<double>(DueIn(*q, clock, "c").count()), 1e9, 1e3);
}

TEST(WorkQueueTest, ShutDownWakesEveryBlockedGetter) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  std::vector<std::future<std::optional<std::string>>> getters;
  for (int i = 0; i < 3; ++i) {
    getters.push_back(std::async(std::launch::async, [&] { return q->Get(); }));
  }
  ASSERT_TRUE(Eventually([&] { return q->Stats().blocked_getters == 3; }));
  q->ShutDown();
  for (auto& g : getters) {
    ASSERT_EQ(g.wait_for(seconds(5)), std::future_status::ready) << "a getter was not woken";
    EXPECT_EQ(g.get(), std::nullopt);
  }
  EXPECT_TRUE(q->ShuttingDown());
  EXPECT_EQ(Next(*q), std::nullopt);
}

TEST(WorkQueueTest, ShutDownDropsPendingWorkAndIgnoresLaterAdds) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->Add("a");
  q->Add("b");
  ASSERT_EQ(Next(*q), "a");
  q->Add("a");  // parked
  q->AddAfter("c", seconds(1));
  q->ShutDown();
  q->Add("d");
  q->AddAfter("e", seconds(1));
  q->AddRateLimited("f");
  EXPECT_EQ(q->Len(), 0u);
  EXPECT_EQ(q->Stats().waiting, 0u);
  q->Done("a");  // the parked re-add is not re-queued
  EXPECT_EQ(q->Len(), 0u);
  EXPECT_EQ(q->Stats().processing, 0u);
  clock.Advance(seconds(2));
  q->Kick();
  EXPECT_EQ(Next(*q), std::nullopt);
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForHandedOutKeys) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->Add("a");
  q->Add("b");
  ASSERT_EQ(Next(*q), "a");
  std::atomic<bool> drained{false};
  std::thread drainer([&] {
    q->ShutDownWithDrain();
    drained = true;
  });
  ASSERT_TRUE(Eventually([&] { return q->ShuttingDown(); }));
  EXPECT_EQ(Next(*q), std::nullopt);  // no new work while draining
  EXPECT_FALSE(drained.load());
  q->Done("a");
  drainer.join();
  EXPECT_TRUE(drained.load());
}

TEST(WorkQueueTest, StatsMeasureQueueLatencyWorkDurationAndLongestRunning) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  q->Add("a");
  clock.Advance(milliseconds(250));
  q->Add("b");
  ASSERT_EQ(Next(*q), "a");  // waited 250ms
  clock.Advance(milliseconds(50));
  ASSERT_EQ(Next(*q), "b");  // waited 50ms
  clock.Advance(seconds(3));
  auto s = q->Stats();
  EXPECT_EQ(s.longest_running, milliseconds(3050));
  EXPECT_EQ(s.unfinished_work, milliseconds(3050 + 3000));
  q->Done("a");
  q->Done("b");
  s = q->Stats();
  EXPECT_EQ(s.queue_latency.count, 2u);
  EXPECT_EQ(s.queue_latency.sum, milliseconds(300));
  EXPECT_EQ(s.queue_latency.max, milliseconds(250));
  EXPECT_EQ(s.work_duration.count, 2u);
  EXPECT_EQ(s.work_duration.sum, milliseconds(3050 + 3000));
  EXPECT_EQ(s.longest_running, nanoseconds(0));
  // A parked key's latency counts from Done (when it became ready), not from its add.
  q->Add("c");
  ASSERT_EQ(Next(*q), "c");
  q->Add("c");
  clock.Advance(seconds(7));
  q->Done("c");
  clock.Advance(milliseconds(5));
  ASSERT_EQ(Next(*q), "c");
  EXPECT_EQ(q->Stats().queue_latency.max, milliseconds(250));
  EXPECT_EQ(q->Stats().queue_latency.sum, milliseconds(305));
}

TEST(DurationHistogramTest, CountsIntoBoundedBuckets) {
  DurationHistogram h;
  h.Observe(nanoseconds(0));         // ≤ 1ms
  h.Observe(milliseconds(1));        // ≤ 1ms (bounds are inclusive)
  h.Observe(milliseconds(5));        // ≤ 10ms
  h.Observe(seconds(2));             // ≤ 10s
  h.Observe(std::chrono::hours(1));  // overflow bucket
  h.Observe(nanoseconds(-5));        // clamped to 0
  EXPECT_EQ(h.buckets[0], 3u);
  EXPECT_EQ(h.buckets[1], 1u);
  EXPECT_EQ(h.buckets[4], 1u);
  EXPECT_EQ(h.buckets.back(), 1u);
  EXPECT_EQ(h.count, 6u);
  EXPECT_EQ(h.max, std::chrono::hours(1));
  EXPECT_EQ(h.sum, std::chrono::hours(1) + seconds(2) + milliseconds(6));
}

}  // namespace
}  // namespace steward::engine
