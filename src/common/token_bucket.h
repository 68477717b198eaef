// TokenBucket: client-side flow control. Refills at `qps` tokens per second up to `burst`;
// Reserve() takes one token and returns how long the caller must wait before using it (zero
// when a token was available), so callers wait outside the lock and in a cancellable way.
// Reservations borrow from the future: with the bucket empty, consecutive Reserve() calls
// return 1/qps, 2/qps, ... so that concurrent callers get distinct slots. The bucket starts
// full. Time comes from the injected Clock. Thread-safe.
#pragma once

#include <chrono>

#include "common/clock.h"
#include "common/mutex.h"

namespace steward {

class TokenBucket {
 public:
  // qps <= 0 disables limiting (Reserve always returns zero). A burst below 1 is taken as 1.
  TokenBucket(double qps, int burst, const Clock& clock);

  std::chrono::nanoseconds Reserve();
  // Takes a token only if one is available now.
  bool TryTake();

 private:
  void RefillLocked(SteadyTime now) REQUIRES(mu_);

  const double qps_;
  const double burst_;
  const Clock& clock_;
  Mutex mu_;
  double tokens_ GUARDED_BY(mu_);
  SteadyTime last_ GUARDED_BY(mu_);
};

}  // namespace steward
