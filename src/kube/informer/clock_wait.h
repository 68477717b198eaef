// WaitUntil: a condition-variable wait against an injectable Clock. Internal to kube/informer.
#pragma once

#include <chrono>

#include "common/clock.h"
#include "common/mutex.h"

namespace steward::kube::internal {

// Waits (with `mu` held on entry and exit) until `done()` or the clock reaches `deadline`;
// returns done(). A RealClock is waited on directly; any other clock (a FakeClock in tests) is
// polled every few milliseconds of real time, so advancing it wakes the waiter.
// Not analysed: it calls done() with `mu` held, but the analysis cannot tell that the
// predicate's REQUIRES names the same mutex as `mu`; callers are checked against REQUIRES(mu).
template <typename Pred>
bool WaitUntil(CondVar& cv, Mutex& mu, const Clock& clock, SteadyTime deadline, Pred done)
    REQUIRES(mu) NO_THREAD_SAFETY_ANALYSIS {
  if (dynamic_cast<const RealClock*>(&clock) != nullptr) {
    return cv.WaitUntil(mu, deadline, done);
  }
  while (!done()) {
    if (clock.Now() >= deadline) return false;
    cv.WaitFor(mu, std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace steward::kube::internal
