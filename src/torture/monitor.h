// Monitor: watches Steward's claims while a torture run goes on and checks each against the
// cluster (the oracle); scans for orphans, duplicates and credentials Steward would not accept.
// The checks after the run use it to check the final claims the same way.
//
// With several clusters each claim is checked by its cluster's oracle, every scan covers every
// cluster (a project's objects exist only on the cluster it is placed on), and a Running claim
// of a project whose cluster has been down for longer than its grace plus kTellUnreachableMs is
// a violation (Steward cannot have seen it ready).
//
// Threads: Start() starts a watching thread, the claim checkers (one per 4 projects, 4..128)
// and a scanning thread; Stop() joins them. CheckClaim may be called from any thread (each call
// asks Steward on its own client). Ownership: borrows the processes, options, oracles and
// record, which must outlive it; owns its threads. Internal to torture/.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "torture/oracle.h"
#include "torture/run_processes.h"
#include "torture/run_record.h"
#include "torture/steward_reads.h"
#include "torture/torture.h"

namespace steward::torture {

// A claim checked later than this after the watch stream showed it is counted as late: a
// Running claimed before its pods were ready may have come true meanwhile (the hostile
// profile's pods are Ready 2.5 s after their creation at the soonest).
inline constexpr int64_t kLateCheckMs = 2000;

// How long an object of a project Steward does not know may stay: `grace`, and for a
// supplied-credentials Secret (written just before its project is committed; a Steward killed
// in between leaves it) also the engine's grace for those.
std::chrono::seconds OrphanGrace(std::string_view kind, std::chrono::seconds grace);

// How long after a cluster's unreachable grace its projects may still say what they said
// before it went: then each says Unknown (ClusterUnreachable), and none Running. (The
// benchmark's goal is 2 s; sanitizer builds on a loaded machine get more.)
inline constexpr int64_t kTellUnreachableMs = 5000;

// The oracle of each of the run's clusters, by the cluster's index (Processes::ClusterName).
using Oracles = std::vector<std::unique_ptr<Oracle>>;
// The oracle of the cluster named `cluster`; nullptr when the run has none of that name.
const Oracle* OracleOf(const Oracles& oracles, const std::string& cluster);

class Monitor {
 public:
  Monitor(const Processes& procs, const TortureOptions& options, const Oracles& oracles,
          Record& rec)
      : procs_(procs), options_(options), oracles_(oracles), rec_(rec) {}

  void Start();
  // Waits until every queued claim has been checked (bounded), then stops every thread;
  // `unblock` ends the watch stream the watching thread may be blocked in (stops Steward).
  void Stop(const std::function<void()>& unblock);

  // Every Running claim the watch stream showed (for the checks after the run).
  std::vector<Claim> RunningClaims();

  // Checks one claim; on failure decides violation or superseded by asking Steward again.
  void CheckClaim(const Claim& claim, bool allow_superseded);

 private:
  using Clock = std::chrono::steady_clock;

  bool stopping();
  void WatchLoop();
  void CheckLoop();
  void ScanLoop();
  // A sample of the Secrets: their token must be accepted by Steward's credential check.
  void CheckCredentials(const std::vector<LabelledObject>& objects,
                        const std::map<std::string, Listed>& projects, std::mt19937_64& rng);
  // A Running claim seen while its cluster is down past grace + kTellUnreachableMs.
  void CheckNotRunningWhileDown(const Claim& claim);

  const Processes& procs_;
  const TortureOptions& options_;
  const Oracles& oracles_;
  Record& rec_;
  Mutex mu_;
  CondVar cv_, idle_cv_;
  struct Queued {
    Claim claim;
    Clock::time_point seen;  // when the watch stream showed it
  };
  std::deque<Queued> queue_ GUARDED_BY(mu_);
  std::vector<Claim> running_claims_ GUARDED_BY(mu_);  // every Running claim seen, in order
  int busy_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // started by Start(), joined by Stop(): one thread
};

}  // namespace steward::torture
