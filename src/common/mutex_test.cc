#include "common/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace steward {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

// Generous: reached only when a test is about to fail.
constexpr auto kDeadline = seconds(30);

// True when another thread can take `mu` now (it releases it again at once).
bool FreeForAnotherThread(Mutex& mu) {
  bool taken = false;
  std::thread([&] {
    if (mu.TryLock()) {
      taken = true;
      mu.Unlock();
    }
  }).join();
  return taken;
}

class Counter {
 public:
  void Add() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    // Not atomic: a lost update shows a missing exclusion.
    int v = value_;
    value_ = v + 1;
    cv_.NotifyAll();
  }
  // True when the value reached `n` before the deadline.
  bool AwaitAtLeast(int n) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return cv_.WaitUntil(mu_, steady_clock::now() + kDeadline,
                         [&]() REQUIRES(mu_) { return value_ >= n; });
  }
  int value() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return value_;
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  int value_ GUARDED_BY(mu_) = 0;
};

TEST(MutexTest, ExcludesOtherThreads) {
  Counter counter;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) counter.Add();
    });
  }
  EXPECT_TRUE(counter.AwaitAtLeast(kThreads * kPerThread));
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter.value(), kThreads * kPerThread);
}

TEST(MutexTest, TryLockFailsWhileAnotherThreadHoldsIt) {
  Mutex mu;
  mu.Lock();
  EXPECT_FALSE(FreeForAnotherThread(mu));
  mu.Unlock();
  EXPECT_TRUE(FreeForAnotherThread(mu));
}

TEST(MutexTest, ReleasableLockUnlocksEarlyAndReacquires) {
  Mutex mu;
  ReleasableMutexLock lock(mu);
  lock.Release();
  EXPECT_TRUE(FreeForAnotherThread(mu));
  lock.Reacquire();
  EXPECT_FALSE(FreeForAnotherThread(mu));
}

TEST(CondVarTest, WaitReturnsOnceThePredicateHolds) {
  Mutex mu;
  CondVar cv;
  bool ready = false;  // guarded by mu (a local cannot carry GUARDED_BY)
  std::thread setter([&] {
    MutexLock lock(mu);
    ready = true;
    cv.NotifyOne();
  });
  {
    MutexLock lock(mu);
    EXPECT_TRUE(cv.WaitFor(mu, kDeadline, [&] { return ready; }));
  }
  setter.join();
}

TEST(CondVarTest, WaitUntilTimesOutWithFalse) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  const auto start = steady_clock::now();
  EXPECT_FALSE(cv.WaitUntil(mu, start + milliseconds(20), [] { return false; }));
  EXPECT_GE(steady_clock::now() - start, milliseconds(20));
  // Without a predicate: false on timeout (a spurious wake-up returns true: try again), and
  // the lock is held again afterwards.
  while (cv.WaitUntil(mu, steady_clock::now() + milliseconds(1))) {
  }
  EXPECT_FALSE(FreeForAnotherThread(mu)) << "the lock must be held after a wait";
}

TEST(CondVarTest, WaitForTimesOutWithFalse) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  EXPECT_FALSE(cv.WaitFor(mu, milliseconds(5), [] { return false; }));
}

TEST(SharedMutexTest, ReadersShareWritersExclude) {
  SharedMutex mu;
  {
    ReaderMutexLock reader(mu);
    bool shared_taken = false;
    std::thread([&] {
      ReaderMutexLock other(mu);
      shared_taken = true;
    }).join();
    EXPECT_TRUE(shared_taken);
  }
  int value = 0;  // guarded by mu
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        WriterMutexLock lock(mu);
        int v = value;
        value = v + 1;
      }
    });
  }
  for (auto& t : writers) t.join();
  ReaderMutexLock reader(mu);
  EXPECT_EQ(value, 40000);
}

}  // namespace
}  // namespace steward
