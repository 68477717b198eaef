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
// Sets options.on_status (keeping any already set) to feed
// steward_phase_transitions_total{kind,from,to} and the SLO histogram
// steward_intent_duration_seconds{kind,operation,phase} (IntentDurationBuckets). Every label
// takes values from a fixed set. Call before engine::Engine::Create.
void InstallStatusMetrics(MetricsRegistry& registry, engine::EngineOptions& options);
std::vector<double> IntentDurationBuckets();
// Scrape-time gauges: steward_workqueue_depth, steward_kube_writes_total,
// steward_kube_writes_refused_total{code}, steward_kube_auth_failures_total{code},
// steward_orphans from engine.stats(); steward_projects{phase}, steward_agents{phase},
// steward_projects_unhealthy{kind,phase,reason} (Degraded and Failed, at most 16 reasons a
// phase) and steward_projects_phase_age_max_seconds{kind,phase} from the store. `engine` and
// `store` must outlive the registry's use.
void InstallStateMetrics(MetricsRegistry& registry, engine::Engine& engine, store::Store& store);

// Sharded mode, scrape-time: steward_replica_shards_owned, steward_replica_shard_epoch{shard},
// steward_replica_lease_renewing, steward_replica_lease_renew_failures_total,
// steward_replica_handovers_total{direction="acquired"|"released"}. `membership` must outlive
// the registry's use.
void InstallReplicaMetrics(MetricsRegistry& registry, replica::Membership& membership);

}  // namespace steward::app
