// WaitUntil: a condition-variable wait against an injectable Clock. Internal to kube/informer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/clock.h"

namespace steward::kube::internal {

// Waits (with `lock` held on entry and exit) until `done()` or the clock reaches `deadline`;
// returns done(). A RealClock is waited on directly; any other clock (a FakeClock in tests) is
// polled every few milliseconds of real time, so advancing it wakes the waiter.
template <typename Pred>
bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, const Clock& clock,
               SteadyTime deadline, Pred done) {
  if (dynamic_cast<const RealClock*>(&clock) != nullptr) {
    return cv.wait_until(lock, deadline, done);
  }
  while (!done()) {
    if (clock.Now() >= deadline) return false;
    cv.wait_for(lock, std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace steward::kube::internal
