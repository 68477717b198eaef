// Clock: the source of time for everything that schedules or stamps. Inject it; never call
// std::chrono::*::now() directly in code that tests need to control.
#pragma once

#include <chrono>

#include "common/mutex.h"

namespace steward {

using SteadyTime = std::chrono::steady_clock::time_point;
using SystemTime = std::chrono::system_clock::time_point;
using Millis = std::chrono::milliseconds;

// Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for deadlines and delays.
  virtual SteadyTime Now() const = 0;
  // Wall-clock time, for timestamps shown to users (creationTimestamp, audit log).
  virtual SystemTime WallNow() const = 0;
};

// The process clock. A single shared instance is returned by RealClock::Get().
class RealClock final : public Clock {
 public:
  static Clock& Get();
  SteadyTime Now() const override { return std::chrono::steady_clock::now(); }
  SystemTime WallNow() const override { return std::chrono::system_clock::now(); }
};

// A clock that moves only when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  SteadyTime Now() const override;
  SystemTime WallNow() const override;
  void Advance(std::chrono::nanoseconds d);

 private:
  mutable Mutex mu_;
  SteadyTime now_ GUARDED_BY(mu_){std::chrono::hours(1)};
  SystemTime wall_ GUARDED_BY(mu_){std::chrono::seconds(1767225600)};  // 2026-01-01T00:00:00Z
};

}  // namespace steward
