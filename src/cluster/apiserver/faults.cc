#include "cluster/apiserver/faults.h"

namespace steward::cluster {

FaultInjector::Decision FaultInjector::Decide(const std::string& verb) {
  FaultSpec spec = this->spec();
  Decision d;
  auto it = spec.latency.find(verb);
  if (it == spec.latency.end()) it = spec.latency.find("*");
  if (it != spec.latency.end()) d.latency = it->second.Sample(random_);
  if (random_.Chance(spec.reset_rate)) {
    d.action = Action::kReset;
  } else if (random_.Chance(spec.error_rate_429)) {
    d.action = Action::kTooManyRequests;
    d.retry_after_seconds = spec.retry_after_seconds;
  } else if (random_.Chance(spec.error_rate_500)) {
    d.action = Action::kInternalError;
  } else if (random_.Chance(spec.error_rate_503)) {
    d.action = Action::kUnavailable;
  }
  return d;
}

FaultInjector::WatchLimits FaultInjector::ForWatch() {
  FaultSpec spec = this->spec();
  WatchLimits limits;
  limits.max_events = spec.watch_cut_after_events;
  limits.max_age = spec.watch_cut_after.Sample(random_);
  return limits;
}

void FaultInjector::SetSpec(FaultSpec spec) {
  MutexLock lock(mu_);
  spec_ = std::move(spec);
}

FaultSpec FaultInjector::spec() const {
  MutexLock lock(mu_);
  return spec_;
}

}  // namespace steward::cluster
