// The checks after a torture run, from the cluster's audit log and the store: each Service and
// Ingress created only once its dependency existed and no Running committed sooner than a pod
// could be ready (creation_order.h); with replicas, every killed replica's shards taken over in
// time and no write outside its writer's tenure of the shard (epochs.h). Violations go to the
// run's Record.
//
// Functions of the finished run; called from the run's main thread once every other thread of
// the run has stopped. Internal to torture/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "torture/chaos.h"
#include "torture/epochs.h"
#include "torture/oracle.h"
#include "torture/run_processes.h"
#include "torture/run_record.h"
#include "torture/torture.h"

namespace steward::torture {

// Every record of the run (each incarnation from its first answer's createdAt on), for mapping
// the audit log's object names to records.
ObjectOwners OwnersOf(const std::map<std::string, std::vector<Answer>>& all);

// After every run, for each cluster from its own audit log: the creation order and Running
// claims timed against their Deployments' creates (`running`: every Running claim the monitor
// saw, each timed on the cluster it names; `cluster_kills_us`: when each kill of a cluster had
// its process gone).
void CheckOrder(const Processes& procs, const TortureOptions& options,
                const std::vector<Claim>& running, const ClusterKills& cluster_kills_us,
                Record& rec);

// After a replicated run: handovers within lease duration + 1.5 retry periods + 2 s, and writes
// within their writer's epochs.
void CheckReplicas(const Processes& procs, const TortureOptions& options,
                   const std::vector<Kill>& kills, Record& rec);

}  // namespace steward::torture
