#include "engine/workqueue/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "engine/workqueue/workqueue_test_util.h"
#include "test_support/eventually.h"

namespace steward::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

using ::steward::test_support::Eventually;

std::unique_ptr<WorkQueue> MakeQueue(const Clock& clock) {
  WorkQueueOptions o = testing::NoLimits("pool-test");
  o.base_delay = milliseconds(100);
  o.max_delay = seconds(10);
  return testing::MakeQueue(clock, std::move(o));
}

// A handler that returns scripted results per key, in order, and counts finished runs.
class Script {
 public:
  void Push(const std::string& key, std::function<WorkResult()> step) {
    MutexLock lock(mu_);
    steps_[key].push_back(std::move(step));
  }
  WorkerPool::Handler Handler() {
    return [this](const std::string& key) {
      std::function<WorkResult()> step;
      {
        MutexLock lock(mu_);
        auto& list = steps_[key];
        if (list.empty()) {
          step = [] { return WorkResult::Error(Internal("unscripted run")); };
        } else {
          step = std::move(list.front());
          list.erase(list.begin());
        }
      }
      return step();
    };
  }

 private:
  Mutex mu_;
  std::map<std::string, std::vector<std::function<WorkResult()>>> steps_ GUARDED_BY(mu_);
};

// Runs are counted by Done(): work_duration.count.
bool WaitRuns(const WorkQueue& q, uint64_t n) {
  return Eventually([&] { return q.Stats().work_duration.count >= n; });
}

TEST(WorkerPoolTest, RejectsBadArguments) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  auto none = WorkerPool::Start(*q, 0, [](const std::string&) { return WorkResult::Ok(); });
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("workers"), std::string::npos);
  auto empty = WorkerPool::Start(*q, 2, nullptr);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("handler"), std::string::npos);
}

TEST(WorkerPoolTest, ErrorRequeuesWithBackoffAndOkForgets) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  Script script;
  script.Push("a", [] { return WorkResult::Error(Unavailable("api down")); });
  script.Push("a", [] { return WorkResult::Error(Unavailable("api down")); });
  script.Push("a", [] { return WorkResult::Ok(); });
  auto pool = WorkerPool::Start(*q, 2, script.Handler());
  ASSERT_TRUE(pool.ok());

  q->Add("a");
  ASSERT_TRUE(WaitRuns(*q, 1));
  EXPECT_EQ(q->NumRequeues("a"), 1);
  ASSERT_TRUE(q->WaitingUntil("a").has_value());
  EXPECT_EQ(*q->WaitingUntil("a") - clock.Now(), milliseconds(100));

  clock.Advance(milliseconds(100));
  q->Kick();
  ASSERT_TRUE(WaitRuns(*q, 2));
  EXPECT_EQ(q->NumRequeues("a"), 2);
  ASSERT_TRUE(q->WaitingUntil("a").has_value());
  EXPECT_EQ(*q->WaitingUntil("a") - clock.Now(), milliseconds(200));

  clock.Advance(milliseconds(200));
  q->Kick();
  ASSERT_TRUE(WaitRuns(*q, 3));
  EXPECT_EQ(q->NumRequeues("a"), 0);  // success forgets the failures
  EXPECT_FALSE(q->WaitingUntil("a").has_value());
  auto s = (*pool)->stats();
  EXPECT_EQ(s.errors, 2u);
  EXPECT_EQ(s.ok, 1u);
}

TEST(WorkerPoolTest, RequeueAfterForgetsFailuresAndDelays) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  Script script;
  script.Push("a", [] { return WorkResult::Error(Unavailable("once")); });
  script.Push("a", [] { return WorkResult::RequeueAfter(seconds(30)); });
  script.Push("a", [] { return WorkResult::Ok(); });
  auto pool = WorkerPool::Start(*q, 1, script.Handler());
  ASSERT_TRUE(pool.ok());
  q->Add("a");
  ASSERT_TRUE(WaitRuns(*q, 1));
  clock.Advance(milliseconds(100));
  q->Kick();
  ASSERT_TRUE(WaitRuns(*q, 2));
  EXPECT_EQ(q->NumRequeues("a"), 0);
  ASSERT_TRUE(q->WaitingUntil("a").has_value());
  EXPECT_EQ(*q->WaitingUntil("a") - clock.Now(), seconds(30));
  clock.Advance(seconds(30));
  q->Kick();
  ASSERT_TRUE(WaitRuns(*q, 3));
  EXPECT_EQ((*pool)->stats().requeued_after, 1u);
  EXPECT_EQ((*pool)->stats().ok, 1u);
}

TEST(WorkerPoolTest, TerminalErrorIsNotRetriedUntilTheKeyIsAddedAgain) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  Script script;
  script.Push("a", [] { return WorkResult::Error(Unavailable("transient")); });
  script.Push("a", [] { return WorkResult::Terminal(InvalidArgument("bad image")); });
  script.Push("a", [] { return WorkResult::Ok(); });
  auto pool = WorkerPool::Start(*q, 1, script.Handler());
  ASSERT_TRUE(pool.ok());
  q->Add("a");
  ASSERT_TRUE(WaitRuns(*q, 1));
  clock.Advance(milliseconds(100));
  q->Kick();
  ASSERT_TRUE(WaitRuns(*q, 2));
  EXPECT_EQ(q->NumRequeues("a"), 0);
  EXPECT_FALSE(q->WaitingUntil("a").has_value());
  EXPECT_EQ(q->Len(), 0u);
  clock.Advance(std::chrono::hours(1));
  q->Kick();
  {
    auto s = q->Stats();  // Kick released synchronously: nothing brought the key back
    EXPECT_EQ(s.depth + s.processing + s.waiting, 0u);
    EXPECT_EQ(s.work_duration.count, 2u);
  }
  q->Add("a");  // the intent changed
  ASSERT_TRUE(WaitRuns(*q, 3));
  auto s = (*pool)->stats();
  EXPECT_EQ(s.terminal, 1u);
  EXPECT_EQ(s.ok, 1u);
}

TEST(WorkerPoolTest, ThrowingHandlerAndOkStatusErrorAreRetriedNotSuccess) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  Script script;
  script.Push("a", []() -> WorkResult { throw std::runtime_error("boom"); });
  script.Push("b", [] { return WorkResult::Error(Status::Ok()); });
  auto pool = WorkerPool::Start(*q, 2, script.Handler());
  ASSERT_TRUE(pool.ok());
  q->Add("a");
  q->Add("b");
  ASSERT_TRUE(WaitRuns(*q, 2));
  EXPECT_EQ(q->NumRequeues("a"), 1);
  EXPECT_EQ(q->NumRequeues("b"), 1);
  EXPECT_TRUE(q->WaitingUntil("a").has_value());
  EXPECT_TRUE(q->WaitingUntil("b").has_value());
  auto s = (*pool)->stats();
  EXPECT_EQ(s.exceptions, 1u);
  EXPECT_EQ(s.errors, 2u);
  EXPECT_EQ(s.ok, 0u);
}

TEST(WorkerPoolTest, StopWaitsForRunningHandlersAndEndsWorkers) {
  FakeClock clock;
  auto q = MakeQueue(clock);
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  auto pool = WorkerPool::Start(*q, 3, [&](const std::string&) {
    started = true;
    while (!release) std::this_thread::yield();
    finished = true;
    return WorkResult::Ok();
  });
  ASSERT_TRUE(pool.ok());
  q->Add("a");
  ASSERT_TRUE(Eventually([&] { return started.load(); }));
  std::thread stopper([&] { (*pool)->Stop(); });
  ASSERT_TRUE(Eventually([&] { return q->ShuttingDown(); }));
  release = true;
  stopper.join();
  EXPECT_TRUE(finished.load());  // Stop returned only after the running handler finished
  EXPECT_EQ(q->Stats().processing, 0u);
  (*pool)->Stop();  // idempotent
}

// Many keys, mixed results, 8 workers: a key is never in two handlers at once, and every
// key's last Add is seen by a later run.
TEST(WorkerPoolTest, StressExclusivityWithMixedResults) {
  constexpr int kKeys = 32, kAdds = 20000;
  auto q = WorkQueue::Create(
      [] {
        WorkQueueOptions o;
        o.base_delay = std::chrono::microseconds(50);
        o.max_delay = milliseconds(2);
        o.retry_qps = 0;
        return o;
      }(),
      RealClock::Get());
  ASSERT_TRUE(q.ok());
  WorkQueue& queue = **q;
  std::vector<std::atomic<int>> in_flight(kKeys), version(kKeys), seen(kKeys);
  for (int k = 0; k < kKeys; ++k) in_flight[k] = version[k] = seen[k] = 0;
  std::atomic<int> violations{0};
  std::atomic<uint64_t> runs{0};
  auto pool = WorkerPool::Start(queue, 8, [&](const std::string& key) {
    const int k = std::stoi(key);
    if (in_flight[k].fetch_add(1) != 0) ++violations;
    seen[k] = version[k].load();
    const uint64_t n = ++runs;
    std::this_thread::yield();
    in_flight[k].fetch_sub(1);
    switch (n % 4) {
      case 0:
        return WorkResult::Error(Unavailable("flaky"));
      case 1:
        return WorkResult::RequeueAfter(std::chrono::microseconds(100));
      default:
        return WorkResult::Ok();
    }
  });
  ASSERT_TRUE(pool.ok());
  std::thread adder([&] {
    for (int i = 0; i < kAdds; ++i) {
      const int k = (i * 7) % kKeys;
      ++version[k];
      queue.Add(std::to_string(k));
    }
  });
  adder.join();
  // Every key's last add has been seen by a run.
  ASSERT_TRUE(Eventually([&] {
    for (int k = 0; k < kKeys; ++k) {
      if (seen[k].load() != version[k].load()) return false;
    }
    return true;
  }));
  (*pool)->Stop();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GE(runs.load(), static_cast<uint64_t>(kKeys));
  auto s = (*pool)->stats();
  EXPECT_GT(s.errors, 0u);
  EXPECT_GT(s.requeued_after, 0u);
}

}  // namespace
}  // namespace steward::engine
