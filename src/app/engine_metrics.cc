#include "app/engine_metrics.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
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

namespace {

// The label values of the status metrics, each from a fixed set (anything else is "other"), so
// that no record's data can grow the series.
std::string PhaseLabel(const std::string& phase) {
  if (phase.empty()) return "None";
  return engine::ParsePhase(phase) ? phase : "other";
}

std::string OperationLabel(const std::string& operation) {
  static const std::set<std::string> kKnown = {
      "create",  "create+start", "update", "update+start", "start", "suspend", "stop",
      "restart", "rotate",       "rename", "delete",       "move",  "unknown"};
  if (operation.empty()) return "unknown";
  return kKnown.count(operation) ? operation : "other";
}

constexpr size_t kReasonsPerPhase = 16;

// The scrape-time series read from the records not settled: steward_projects_unhealthy (Degraded
// and Failed, by kind and reason) and steward_projects_phase_age_max_seconds (for each phase on
// the way and Degraded, how long the record that entered it first has been in it; 0: none is).
// One list per phase serves both.
struct StoreGaugeSeries {
  std::map<LabelValues, double> unhealthy, ages;
};

StoreGaugeSeries ReadStoreGauges(store::Store& store, int64_t now_ms) {
  using engine::Phase;
  StoreGaugeSeries out;
  for (const Phase phase :
       {Phase::kPending, Phase::kProvisioning, Phase::kUpdating, Phase::kSuspending,
        Phase::kDeleting, Phase::kDegraded, Phase::kFailed}) {
    const std::string name(engine::ToString(phase));
    const bool aged = phase != Phase::kFailed;
    const bool unhealthy = phase == Phase::kDegraded || phase == Phase::kFailed;
    if (aged) out.ages[{"project", name}] = out.ages[{"agent", name}] = 0;
    store::ListFilter filter;
    filter.phase = name;
    auto records = store.ListProjects(filter);
    if (!records.ok()) continue;
    std::map<std::pair<std::string, std::string>, double> by_reason;  // (kind, reason)
    for (const store::ProjectRecord& r : *records) {
      const auto status = engine::ParseStoredStatus(r.status_json);
      const std::string kind = r.kind == store::RecordKind::kAgent ? "agent" : "project";
      if (aged) {
        const int64_t since = status && status->since_ms > 0 ? status->since_ms : r.updated_ms;
        double& age = out.ages[{kind, name}];
        age = std::max(age, static_cast<double>(std::max<int64_t>(0, now_ms - since)) / 1000.0);
      }
      if (unhealthy) {
        by_reason[{kind, status && !status->reason.empty() ? status->reason : "unknown"}] += 1;
      }
    }
    // The commonest reasons by name; the rest folded into "other".
    std::vector<std::pair<double, std::pair<std::string, std::string>>> ranked;
    for (const auto& [key, n] : by_reason) ranked.push_back({n, key});
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < ranked.size(); ++i) {
      const auto& [n, key] = ranked[i];
      out.unhealthy[{key.first, name, i < kReasonsPerPhase ? key.second : "other"}] += n;
    }
  }
  return out;
}

}  // namespace

std::vector<double> IntentDurationBuckets() {
  return {0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600};
}

EngineMetrics::EngineMetrics(MetricsRegistry& registry)
    : registry_(registry),
      reconcile_duration_(registry.Histogram("steward_reconcile_duration_seconds",
                                             "Time one reconcile run took, by cluster and result.",
                                             DefaultLatencyBuckets(), {"cluster", "result"})),
      reconciles_(registry.Counter("steward_reconciles_total",
                                   "Reconcile runs, by cluster and result.",
                                   {"cluster", "result"})),
      transitions_(registry.Counter(
          "steward_phase_transitions_total",
          "Phase changes the engine committed, by cluster, record kind and the phases before and "
          "after.",
          {"cluster", "kind", "from", "to"})),
      durations_(registry.Histogram(
          "steward_intent_duration_seconds",
          "Time from an accepted intent (its operation: create+start, start, update+start, "
          "suspend, ...) to its first status in a done phase (Running, Suspended or Failed), by "
          "cluster, record kind, operation and that phase. Intents accepted before this process "
          "started are not measured.",
          IntentDurationBuckets(), {"cluster", "kind", "operation", "phase"})),
      depth_(registry.Gauge("steward_workqueue_depth",
                            "Projects waiting in the work queue, by cluster.", {"cluster"})),
      writes_(registry.Counter("steward_kube_writes_total",
                               "Create, update and delete requests the engine sent, by cluster.",
                               {"cluster"})),
      orphans_(registry.Gauge(
          "steward_orphans",
          "Labelled objects in the namespace that belong to no project, by cluster.", {"cluster"})),
      refused_(registry.Counter(
          "steward_kube_writes_refused_total",
          "Create, update and delete requests of the engine the API server refused, by cluster "
          "and HTTP status (0: no answer). 409 is optimistic concurrency and retried; others mean "
          "the cluster refuses what Steward writes.",
          {"cluster", "code"})),
      reachable_(registry.Gauge(
          "steward_cluster_reachable",
          "1 while the cluster answers; 0 once every request to it has failed for longer than "
          "its unreachableGrace (its projects are then Unknown, reason ClusterUnreachable).",
          {"cluster"})),
      synced_(registry.Gauge(
          "steward_cluster_caches_synced",
          "1 while every cache of the cluster holds its first list; 0 while one does not (the "
          "cluster lists nothing, or refuses a kind's list): its projects' runs are put off.",
          {"cluster"})),
      auth_(registry.Counter("steward_kube_auth_failures_total",
                             "Reconcile runs Kubernetes refused for Steward's credentials (401 "
                             "Unauthorized, 403 Forbidden), by cluster and code.",
                             {"cluster", "code"})) {}

void EngineMetrics::Hook(engine::EngineOptions& options) {
  const std::string cluster = options.cluster;
  // Every result is exposed from the start (a zero is information too).
  for (auto k : {engine::WorkResult::Kind::kOk, engine::WorkResult::Kind::kRequeueAfter,
                 engine::WorkResult::Kind::kError, engine::WorkResult::Kind::kTerminal}) {
    reconciles_.Add({cluster, std::string(ResultName(k))}, 0);
  }
  auto previous_reconcile = std::move(options.on_reconcile);
  options.on_reconcile = [this, cluster, previous_reconcile](engine::WorkResult::Kind kind,
                                                             std::chrono::nanoseconds took) {
    const std::string result(ResultName(kind));
    reconcile_duration_.Observe({cluster, result}, std::chrono::duration<double>(took).count());
    reconciles_.Add({cluster, result});
    if (previous_reconcile) previous_reconcile(kind, took);
  };
  auto previous_status = std::move(options.on_status);
  options.on_status = [this, cluster, previous_status](const engine::StatusWritten& w) {
    const std::string kind = w.agent ? "agent" : "project";
    if (w.from != w.to) transitions_.Add({cluster, kind, PhaseLabel(w.from), PhaseLabel(w.to)});
    if (w.completes && w.accepted_ms > 0) {
      const double seconds =
          static_cast<double>(std::max<int64_t>(0, w.at_ms - w.accepted_ms)) / 1000.0;
      durations_.Observe({cluster, kind, OperationLabel(w.operation), PhaseLabel(w.to)}, seconds);
    }
    if (previous_status) previous_status(w);
  };
}

void EngineMetrics::Watch(engine::Engine& engine) {
  const std::string cluster = engine.options().cluster;
  // What the writes counter was last brought up to, between scrapes.
  struct LastWrites {
    Mutex mu;
    uint64_t value GUARDED_BY(mu) = 0;
  };
  auto last_writes = std::make_shared<LastWrites>();
  registry_.OnCollect([this, &engine, cluster, last_writes] {
    engine::EngineStats s = engine.stats();
    depth_.Set({cluster}, static_cast<double>(s.queue_depth));
    reachable_.Set({cluster}, s.unreachable_since_ms == 0 ? 1 : 0);
    synced_.Set({cluster}, s.caches_synced ? 1 : 0);
    orphans_.Set({cluster}, static_cast<double>(s.orphans.size()));
    {
      // The engine counts; the counter follows it by the difference since the last scrape.
      MutexLock lock(last_writes->mu);
      if (s.writes > last_writes->value) {
        writes_.Add({cluster}, static_cast<double>(s.writes - last_writes->value));
        last_writes->value = s.writes;
      } else if (last_writes->value == 0) {
        writes_.Add({cluster}, 0);
      }
      // The refusals likewise, from the counter's own value (0 from the start).
      for (const auto& [code, n] :
           {std::pair{"401", s.kube_unauthorized}, std::pair{"403", s.kube_forbidden}}) {
        const LabelValues labels = {cluster, code};
        auth_.Add(labels, static_cast<double>(n) - auth_.Value(labels));
      }
    }
    for (const auto& [code, n] : s.kube_refused_writes) {
      const LabelValues labels = {cluster, std::to_string(code)};
      refused_.Add(labels, static_cast<double>(n) - refused_.Value(labels));
    }
  });
}

void InstallStoreMetrics(MetricsRegistry& registry, store::Store& store) {
  auto& projects = registry.Gauge("steward_projects", "Stored projects, by phase.", {"phase"});
  auto& agents =
      registry.Gauge("steward_agents", "Stored MQTT schema agents, by phase.", {"phase"});
  auto& unhealthy = registry.Gauge(
      "steward_projects_unhealthy",
      "Stored records in phase Degraded or Failed, by kind, phase and status reason (the 16 "
      "commonest reasons of each phase; the rest as reason=\"other\").",
      {"kind", "phase", "reason"});
  auto& ages = registry.Gauge(
      "steward_projects_phase_age_max_seconds",
      "How long the oldest record in each phase on the way (Pending, Provisioning, Updating, "
      "Suspending, Deleting) and in Degraded has been in it, by kind and phase (0: none is).",
      {"kind", "phase"});
  registry.OnCollect([&] {
    StoreGaugeSeries series =
        ReadStoreGauges(store, std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
    unhealthy.Replace(std::move(series.unhealthy));
    ages.Replace(std::move(series.ages));
    for (auto [gauge, kind] : {std::pair{&projects, store::RecordKind::kProject},
                               std::pair{&agents, store::RecordKind::kAgent}}) {
      std::map<LabelValues, double> by_phase;
      for (int p = 0; p <= static_cast<int>(engine::Phase::kUnknown); ++p) {
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

void InstallClusterMetrics(MetricsRegistry& registry, store::Store& store,
                           std::vector<std::pair<std::string, int64_t>> capacities) {
  auto& records = registry.Gauge(
      "steward_cluster_records",
      "Stored records placed on each configured cluster, not being deleted (what placement "
      "weighs).",
      {"cluster"});
  auto& capacity = registry.Gauge(
      "steward_cluster_capacity",
      "The records each configured cluster takes at most (clusters[].capacity; 0: no limit).",
      {"cluster"});
  for (const auto& [name, cap] : capacities) capacity.Set({name}, static_cast<double>(cap));
  registry.OnCollect([&records, &store, capacities] {
    auto counts = store.CountByCluster();
    if (!counts.ok()) return;
    std::map<LabelValues, double> by_cluster;
    // Only configured clusters: the label's values are the configuration's.
    for (const auto& [name, cap] : capacities) {
      auto it = counts->find(name);
      by_cluster[{name}] = it == counts->end() ? 0 : static_cast<double>(it->second);
    }
    records.Replace(std::move(by_cluster));
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
