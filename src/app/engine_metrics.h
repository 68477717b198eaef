// The engine's and the store's metrics (docs/api.md, /metrics): the app wires them between the
// engine and the registry the API serves, so that the API itself knows nothing of the engine.
#pragma once

#include "common/metrics.h"
#include "engine/reconciler/engine.h"
#include "engine/reconciler/engine_options.h"
#include "replica/membership.h"
#include "store/store.h"

namespace steward::app {

// Sets options.on_reconcile (keeping any already set) to feed
// steward_reconcile_duration_seconds and steward_reconciles_total{result}. Call before
// engine::Engine::Create.
void InstallReconcileMetrics(MetricsRegistry& registry, engine::EngineOptions& options);
// Scrape-time gauges: steward_workqueue_depth, steward_kube_writes_total, steward_orphans from
// engine.stats(), steward_projects{phase} from the store. `engine` and `store` must outlive
// the registry's use.
void InstallStateMetrics(MetricsRegistry& registry, engine::Engine& engine, store::Store& store);

// Sharded mode, scrape-time: steward_replica_shards_owned, steward_replica_shard_epoch{shard},
// steward_replica_lease_renewing, steward_replica_lease_renew_failures_total,
// steward_replica_handovers_total{direction="acquired"|"released"}. `membership` must outlive
// the registry's use.
void InstallReplicaMetrics(MetricsRegistry& registry, replica::Membership& membership);

}  // namespace steward::app
