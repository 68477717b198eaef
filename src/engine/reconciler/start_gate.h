// StartGate: admission for project starts (issue 18). At most `cap` starts are under way at
// once — a start runs from the run that would create a project's Deployment until the project is
// Running, Failed or no longer to run — so that a burst of 1,000 starts does not hand the cluster
// 1,000 half-made projects at once and the first of them finish first. Starts beyond the cap
// wait in team order (teams take turns, each team's in the order they asked), and a slot that
// frees is handed to the next waiting start at once (End returns it, to be woken), so a start
// admitted later cannot overtake one that waited. A start under way for longer than `ttl`
// (stuck: an image that never pulls) gives its slot up on the next call; it is admitted again
// without waiting when it runs next.
//
// Thread-safety: every method may be called from any thread (one mutex). Time from the Clock,
// borrowed.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"

namespace steward::engine {

class StartGate {
 public:
  // cap 0: no limit (every start is admitted, nothing is tracked).
  StartGate(size_t cap, std::chrono::nanoseconds ttl, const Clock& clock)
      : cap_(cap), ttl_(ttl), clock_(clock) {}

  struct Admission {
    bool admitted = false;
    size_t under_way = 0;  // starts under way (after this call)
    size_t waiting = 0;    // starts waiting (after this call)
    // Starts whose slots this call handed over (stuck ones gave theirs up): wake them.
    std::vector<std::string> wake;
  };
  // Whether project `id` (of `team`) may take its first step now; if not, it waits its turn.
  Admission Admit(const std::string& id, const std::string& team) EXCLUDES(mu_);
  // The start of `id` is over (Running, Failed, suspended, deleted) or never began: its slot, if
  // it held one, goes to the next waiting start, which is returned to be woken; a waiting `id`
  // stops waiting.
  std::vector<std::string> End(const std::string& id) EXCLUDES(mu_);

  size_t under_way() const EXCLUDES(mu_);
  size_t waiting() const EXCLUDES(mu_);
  size_t cap() const { return cap_; }

 private:
  // Frees the slots of stuck starts and hands every free slot to a waiting start (appended to
  // `wake`).
  void RefillLocked(SteadyTime now, std::vector<std::string>* wake) REQUIRES(mu_);
  void RemoveWaitingLocked(const std::string& id) REQUIRES(mu_);

  const size_t cap_;
  const std::chrono::nanoseconds ttl_;
  const Clock& clock_;
  mutable Mutex mu_;
  std::map<std::string, SteadyTime> under_way_ GUARDED_BY(mu_);             // id → since
  std::map<std::string, std::deque<std::string>> waiting_ GUARDED_BY(mu_);  // team → ids
  std::deque<std::string> turns_ GUARDED_BY(mu_);  // teams with waiting starts, next first
  std::map<std::string, std::string> waiting_team_ GUARDED_BY(mu_);  // id → its team
};

}  // namespace steward::engine
