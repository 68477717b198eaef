// Mutex, SharedMutex, the scoped locks over them and CondVar: thin wrappers over std::mutex,
// std::shared_mutex and std::condition_variable that carry clang's thread-safety
// annotations (common/thread_annotations.h), so members can be marked GUARDED_BY(mu_) and clang
// (-Wthread-safety, on in every clang build) rejects an access without the lock. Same
// behaviour and cost as the std types; none is copyable or movable.
//
// Waiting: a predicate passed to CondVar reads guarded state, so annotate the lambda with the
// mutex it runs under — clang then checks its body (the wait itself calls it with the lock
// held):
//   MutexLock lock(mu_);
//   cv_.Wait(mu_, [&]() REQUIRES(mu_) { return !queue_.empty(); });
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "common/thread_annotations.h"

namespace steward {

// An exclusive, non-recursive mutex. Any thread may lock it; only the holder may unlock it.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Takes the lock if it is free now; true when taken.
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the calling thread holds the lock (for code it cannot follow, such as
  // a callback documented to run under it). Checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// A reader/writer mutex: Lock for exclusive (writer) access, LockShared for shared (reader)
// access. Not recursive.
class CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  void LockShared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void UnlockShared() RELEASE_SHARED() { mu_.unlock_shared(); }
  void AssertHeld() const ASSERT_CAPABILITY(this) {}
  void AssertReaderHeld() const ASSERT_SHARED_CAPABILITY(this) {}

 private:
  std::shared_mutex mu_;
};

// Holds a Mutex for its scope, like std::lock_guard.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Holds a Mutex from construction until Release() or the end of its scope, like a
// std::unique_lock that is unlocked early; Reacquire() takes it again after a Release().
class SCOPED_CAPABILITY ReleasableMutexLock {
 public:
  explicit ReleasableMutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~ReleasableMutexLock() RELEASE() {
    if (held_) mu_.Unlock();
  }
  ReleasableMutexLock(const ReleasableMutexLock&) = delete;
  ReleasableMutexLock& operator=(const ReleasableMutexLock&) = delete;

  // Unlocks now; the lock must be held.
  void Release() RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  // Locks again; the lock must have been released.
  void Reacquire() ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~WriterMutexLock() RELEASE() { mu_.Unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds a SharedMutex shared for its scope, like std::shared_lock.
class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.LockShared(); }
  ~ReaderMutexLock() RELEASE() { mu_.UnlockShared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// A condition variable used with a Mutex (a std::condition_variable underneath). Every wait
// needs the Mutex held by the caller; it is released while blocked and held again on return.
// Waits without a predicate may wake spuriously. Notify* may be called with or without the
// Mutex held. Thread-safe.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void NotifyOne() noexcept { cv_.notify_one(); }
  void NotifyAll() noexcept { cv_.notify_all(); }

  // Blocks until notified (or a spurious wake-up).
  void Wait(Mutex& mu) REQUIRES(mu) {
    Adopted lock(mu);
    cv_.wait(lock.lock);
  }
  // Blocks until pred() is true (it is called with `mu` held).
  template <typename Pred>
  void Wait(Mutex& mu, Pred pred) REQUIRES(mu) {
    Adopted lock(mu);
    cv_.wait(lock.lock, std::move(pred));
  }

  // Blocks until notified, a spurious wake-up or `deadline`; false when the deadline passed.
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline) REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_until(lock.lock, deadline) == std::cv_status::no_timeout;
  }
  // Blocks until pred() or `deadline`; returns pred() (false: timed out with it still false).
  template <typename Clock, typename Duration, typename Pred>
  bool WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline, Pred pred)
      REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_until(lock.lock, deadline, std::move(pred));
  }

  // Blocks until notified, a spurious wake-up or `timeout` elapsed; false when it elapsed.
  template <typename Rep, typename Period>
  bool WaitFor(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout) REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_for(lock.lock, timeout) == std::cv_status::no_timeout;
  }
  // Blocks until pred() or `timeout` elapsed; returns pred().
  template <typename Rep, typename Period, typename Pred>
  bool WaitFor(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout, Pred pred)
      REQUIRES(mu) {
    Adopted lock(mu);
    return cv_.wait_for(lock.lock, timeout, std::move(pred));
  }

 private:
  // A std::unique_lock over the already-held Mutex that leaves it held when destroyed.
  struct Adopted {
    explicit Adopted(Mutex& mu) : lock(mu.mu_, std::adopt_lock) {}
    ~Adopted() { lock.release(); }
    std::unique_lock<std::mutex> lock;
  };

  std::condition_variable cv_;
};

}  // namespace steward
