#include "common/token_bucket.h"

#include <algorithm>

namespace steward {

TokenBucket::TokenBucket(double qps, int burst, const Clock& clock)
    : qps_(qps),
      burst_(std::max(1, burst)),
      clock_(clock),
      tokens_(static_cast<double>(std::max(1, burst))),
      last_(clock.Now()) {}

void TokenBucket::RefillLocked(SteadyTime now) {
  if (now <= last_) return;
  std::chrono::duration<double> elapsed = now - last_;
  tokens_ = std::min(burst_, tokens_ + elapsed.count() * qps_);
  last_ = now;
}

std::chrono::nanoseconds TokenBucket::Reserve() {
  if (qps_ <= 0) return std::chrono::nanoseconds(0);
  MutexLock lock(mu_);
  RefillLocked(clock_.Now());
  tokens_ -= 1.0;
  if (tokens_ >= 0) return std::chrono::nanoseconds(0);
  // The token is borrowed from the future: it exists once the deficit has refilled.
  std::chrono::duration<double> wait(-tokens_ / qps_);
  return std::chrono::round<std::chrono::nanoseconds>(wait);
}

bool TokenBucket::TryTake() {
  if (qps_ <= 0) return true;
  MutexLock lock(mu_);
  RefillLocked(clock_.Now());
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

}  // namespace steward
