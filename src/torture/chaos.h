// Chaos: the torture run's killer thread — SIGKILLs Steward replicas, the cluster and the
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

// Kills replicas, the cluster and the database at random moments until the configured counts
// are reached. With several replicas, every other kill keeps its replica down past the lease
// duration, so that the others must take its share over; the rest restart it at once (it then
// takes its own share back).
// `cluster_kills_us` gets, for each kill of the cluster, when its process was gone (wall µs).
std::vector<Kill> Chaos(Processes& procs, const TortureOptions& options, Record& rec,
                        std::atomic<bool>& failed, std::vector<int64_t>* cluster_kills_us);

}  // namespace steward::torture
