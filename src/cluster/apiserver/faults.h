// FaultInjector: decides, per API request, the injected latency and failure (429 with
// Retry-After, 500, 503, connection reset) and how long watch streams may live, from the
// profile's FaultSpec and a seeded Random.
//
// Thread-safe; the spec can be replaced at run time (tests switch faults on and off).
#pragma once

#include <chrono>
#include <string>

#include "cluster/profile/profile.h"
#include "common/mutex.h"
#include "common/random.h"

namespace steward::cluster {

class FaultInjector {
 public:
  enum class Action { kNone, kTooManyRequests, kInternalError, kUnavailable, kReset };
  struct Decision {
    std::chrono::milliseconds latency{0};
    Action action = Action::kNone;
    int retry_after_seconds = 0;
  };
  struct WatchLimits {
    int max_events = 0;                    // 0 = unlimited
    std::chrono::milliseconds max_age{0};  // 0 = unlimited
  };

  FaultInjector(FaultSpec spec, uint64_t seed) : spec_(std::move(spec)), random_(seed) {}

  // `verb` is one of get, list, watch, create, update, patch, delete, deletecollection.
  Decision Decide(const std::string& verb);
  WatchLimits ForWatch();
  void SetSpec(FaultSpec spec);
  FaultSpec spec() const;

 private:
  mutable Mutex mu_;
  FaultSpec spec_ GUARDED_BY(mu_);
  Random random_;  // thread-safe itself
};

}  // namespace steward::cluster
