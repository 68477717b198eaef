// Chaos: the torture run's killer thread — SIGKILLs Steward replicas, clusters and the
// database at random moments (seeded) until the configured counts are reached, and records each
// kill for the checks after the run.
//
// Threads: Chaos runs on its own thread, the only one that kills or starts the run's processes
// meanwhile. Internal to torture/.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "torture/run_processes.h"
#include "torture/run_record.h"
#include "torture/torture.h"

namespace steward::torture {

// A SIGKILL of one replica, for the handover check: when, and when it was back in time.
struct Kill {
  int replica = 0;
  int64_t at_ms = 0;    // wall clock
  int64_t back_ms = 0;  // ready again before its Lease could lapse (Death::back_ms); else 0
};

// By cluster index: when each kill of that cluster had its process gone (wall µs).
using ClusterKills = std::vector<std::vector<int64_t>>;

// Kills replicas, clusters and the database at random moments until the configured counts
// are reached. With several replicas, every other kill keeps its replica down past the lease
// duration, so that the others must take its share over; the rest restart it at once (it then
// takes its own share back). A cluster restart (restart_cluster) brings a random cluster back
// within 0.5–2 s; a cluster kill (kill_cluster) keeps it down past its unreachable grace and
// checks meanwhile that each project placed on it that existed before the kill says Unknown
// (ClusterUnreachable) within the grace + kTellUnreachableMs, and none says Running after.
// `cluster_kills_us` (sized by the caller to the clusters) gets every kill of either kind.
std::vector<Kill> Chaos(Processes& procs, const TortureOptions& options, Record& rec,
                        std::atomic<bool>& failed, ClusterKills* cluster_kills_us);

}  // namespace steward::torture
