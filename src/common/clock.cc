#include "common/clock.h"

namespace steward {

Clock& RealClock::Get() {
  static RealClock clock;
  return clock;
}

SteadyTime FakeClock::Now() const {
  MutexLock lock(mu_);
  return now_;
}

SystemTime FakeClock::WallNow() const {
  MutexLock lock(mu_);
  return wall_;
}

void FakeClock::Advance(std::chrono::nanoseconds d) {
  MutexLock lock(mu_);
  now_ += d;
  wall_ += std::chrono::duration_cast<SystemTime::duration>(d);
}

}  // namespace steward
