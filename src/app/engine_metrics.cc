#include "app/engine_metrics.h"

#include <map>
#include <memory>
#include <utility>

#include "common/mutex.h"
#include "engine/model/project.h"

namespace steward::app {
namespace {

std::string_view ResultName(engine::WorkResult::Kind k) {
  switch (k) {
    case engine::WorkResult::Kind::kOk:
      return "ok";
    case engine::WorkResult::Kind::kRequeueAfter:
      return "requeue";
    case engine::WorkResult::Kind::kError:
      return "error";
    case engine::WorkResult::Kind::kTerminal:
      return "terminal";
  }
  return "error";
}

}  // namespace

void InstallReconcileMetrics(MetricsRegistry& registry, engine::EngineOptions& options) {
  auto& duration = registry.Histogram("steward_reconcile_duration_seconds",
                                      "Time one reconcile run took, by result.",
                                      DefaultLatencyBuckets(), {"result"});
  auto& total =
      registry.Counter("steward_reconciles_total", "Reconcile runs, by result.", {"result"});
  // Every result is exposed from the start (a zero is information too).
  for (auto k : {engine::WorkResult::Kind::kOk, engine::WorkResult::Kind::kRequeueAfter,
                 engine::WorkResult::Kind::kError, engine::WorkResult::Kind::kTerminal}) {
    total.Add({std::string(ResultName(k))}, 0);
  }
  auto previous = std::move(options.on_reconcile);
  options.on_reconcile = [&duration, &total, previous](engine::WorkResult::Kind kind,
                                                       std::chrono::nanoseconds took) {
    const std::string result(ResultName(kind));
    duration.Observe({result}, std::chrono::duration<double>(took).count());
    total.Add({result});
    if (previous) previous(kind, took);
  };
}

void InstallStateMetrics(MetricsRegistry& registry, engine::Engine& engine, store::Store& store) {
  auto& depth = registry.Gauge("steward_workqueue_depth", "Projects waiting in the work queue.");
  auto& writes = registry.Counter("steward_kube_writes_total",
                                  "Create, update and delete requests the engine sent.");
  auto& orphans = registry.Gauge("steward_orphans",
                                 "Labelled objects in the namespace that belong to no project.");
  auto& projects = registry.Gauge("steward_projects", "Stored projects, by phase.", {"phase"});
  auto& agents =
      registry.Gauge("steward_agents", "Stored MQTT schema agents, by phase.", {"phase"});
  auto& auth = registry.Counter("steward_kube_auth_failures_total",
                                "Reconcile runs Kubernetes refused for Steward's credentials "
                                "(401 Unauthorized, 403 Forbidden), by code.",
                                {"code"});
  // What the writes counter was last brought up to, between scrapes.
  struct LastWrites {
    Mutex mu;
    uint64_t value GUARDED_BY(mu) = 0;
  };
  auto last_writes = std::make_shared<LastWrites>();
  registry.OnCollect([&, last_writes] {
    engine::EngineStats s = engine.stats();
    depth.Set({}, static_cast<double>(s.queue_depth));
    orphans.Set({}, static_cast<double>(s.orphans.size()));
    {
      // The engine counts; the counter follows it by the difference since the last scrape.
      MutexLock lock(last_writes->mu);
      if (s.writes > last_writes->value) {
        writes.Add({}, static_cast<double>(s.writes - last_writes->value));
        last_writes->value = s.writes;
      } else if (last_writes->value == 0) {
        writes.Add({}, 0);
      }
      // The refusals likewise, from the counter's own value (0 from the start).
      for (const auto& [code, n] :
           {std::pair{"401", s.kube_unauthorized}, std::pair{"403", s.kube_forbidden}}) {
        auth.Add({code}, static_cast<double>(n) - auth.Value({code}));
      }
    }
    for (auto [gauge, kind] : {std::pair{&projects, store::RecordKind::kProject},
                               std::pair{&agents, store::RecordKind::kAgent}}) {
      std::map<LabelValues, double> by_phase;
      for (int p = 0; p <= static_cast<int>(engine::Phase::kFailed); ++p) {
        by_phase[{std::string(engine::ToString(static_cast<engine::Phase>(p)))}] = 0;
      }
      auto counts = store.CountByPhase(kind);
      if (!counts.ok()) continue;
      for (const auto& [phase, n] : *counts) {
        by_phase[{phase.empty() ? std::string("Pending") : phase}] += static_cast<double>(n);
      }
      gauge->Replace(std::move(by_phase));
    }
  });
}

void InstallReplicaMetrics(MetricsRegistry& registry, replica::Membership& membership) {
  auto& owned = registry.Gauge("steward_replica_shards_owned", "Shards this replica acts for.");
  auto& epochs =
      registry.Gauge("steward_replica_shard_epoch",
                     "The ownership epoch of each shard this replica acts for.", {"shard"});
  auto& renewing = registry.Gauge("steward_replica_lease_renewing",
                                  "1 while this replica renews its Lease within renewDeadline.");
  auto& failures =
      registry.Counter("steward_replica_lease_renew_failures_total", "Lease renewals that failed.");
  auto& handovers = registry.Counter("steward_replica_handovers_total",
                                     "Shards this replica acquired or released.", {"direction"});
  registry.OnCollect([&] {
    replica::MembershipStats s = membership.stats();
    owned.Set({}, static_cast<double>(s.owned.size()));
    std::map<LabelValues, double> by_shard;
    for (const auto& [shard, epoch] : s.owned) {
      by_shard[{std::to_string(shard)}] = static_cast<double>(epoch);
    }
    epochs.Replace(std::move(by_shard));
    renewing.Set({}, s.renewing ? 1 : 0);
    // Counters follow the membership's own counts.
    failures.Add({}, static_cast<double>(s.renew_failures) - failures.Value({}));
    for (const auto& [direction, n] :
         {std::pair{"acquired", s.acquired}, std::pair{"released", s.released}}) {
      handovers.Add({direction}, static_cast<double>(n) - handovers.Value({direction}));
    }
  });
}

}  // namespace steward::app
