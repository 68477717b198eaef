// The engine's and the store's metrics (docs/api.md, /metrics): the app wires them between the
// engine and the registry the API serves, so that the API itself knows nothing of the engine.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/metrics.h"
#include "engine/reconciler/engine.h"
#include "engine/reconciler/engine_options.h"
#include "replica/membership.h"
#include "store/store.h"

namespace steward::app {

// The engines' metric families, registered once (a registry refuses a second family of a name);
// each engine (one per cluster) is hooked in under its label cluster=EngineOptions::cluster,
// whose values come from the configuration. Hook and Watch from the thread that builds the
// engines; the hooks then run on the engines' workers. Outlives no engine it watches.
class EngineMetrics {
 public:
  explicit EngineMetrics(MetricsRegistry& registry);

  // Before engine::Engine::Create: sets options.on_reconcile (keeping any set) to feed
  // steward_reconcile_duration_seconds and steward_reconciles_total{result}, and
  // options.on_status to feed steward_phase_transitions_total{kind,from,to} and the SLO histogram
  // steward_intent_duration_seconds{kind,operation,phase} (IntentDurationBuckets). Every label
  // takes values from a fixed set.
  void Hook(engine::EngineOptions& options);
  // After the engine started: scrape-time steward_workqueue_depth, steward_kube_writes_total,
  // steward_kube_writes_refused_total{code}, steward_kube_auth_failures_total{code},
  // steward_orphans, steward_cluster_reachable from engine.stats(). `engine` must outlive the
  // registry's use.
  void Watch(engine::Engine& engine);

 private:
  MetricsRegistry& registry_;
  HistogramFamily& reconcile_duration_;
  CounterFamily& reconciles_;
  CounterFamily& transitions_;
  HistogramFamily& durations_;
  GaugeFamily& depth_;
  CounterFamily& writes_;
  GaugeFamily& orphans_;
  CounterFamily& refused_;
  GaugeFamily& reachable_;
  GaugeFamily& synced_;
  CounterFamily& auth_;
};
std::vector<double> IntentDurationBuckets();

// Store-wide, scrape-time: steward_projects{phase}, steward_agents{phase},
// steward_projects_unhealthy{kind,phase,reason} (Degraded and Failed, at most 16 reasons a phase)
// and steward_projects_phase_age_max_seconds{kind,phase}. `store` must outlive the registry's
// use.
void InstallStoreMetrics(MetricsRegistry& registry, store::Store& store);
// Placement, scrape-time: steward_cluster_records{cluster} (CountByCluster) and
// steward_cluster_capacity{cluster}, for the configured clusters (name, capacity) only.
void InstallClusterMetrics(MetricsRegistry& registry, store::Store& store,
                           std::vector<std::pair<std::string, int64_t>> capacities);

// Sharded mode, scrape-time: steward_replica_shards_owned, steward_replica_shard_epoch{shard},
// steward_replica_lease_renewing, steward_replica_lease_renew_failures_total,
// steward_replica_handovers_total{direction="acquired"|"released"}. `membership` must outlive
// the registry's use.
void InstallReplicaMetrics(MetricsRegistry& registry, replica::Membership& membership);

}  // namespace steward::app
