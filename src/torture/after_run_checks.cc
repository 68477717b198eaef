#include "torture/after_run_checks.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>

#include "cluster/profile/profile.h"
#include "common/time_util.h"
#include "engine/manifests/manifests.h"
#include "engine/model/shard.h"
#include "store/postgres_store.h"
#include "torture/creation_order.h"
#include "torture/plan.h"

namespace steward::torture {
namespace {

using std::chrono::milliseconds;

std::string ReadAuditLog(const Processes& procs, int cluster) {
  std::ifstream in(procs.audit_log(cluster));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The least time from a pod's creation to Ready in the run's cluster profile (the fixed parts
// of its stages; the kubelet only adds to them), 0 when it cannot be told: a profile that does
// not load here, or one with process pods (their readiness is their own probe's).
int64_t MinimumReadyMs(const TortureOptions& options, Record& rec) {
  auto profile = cluster::LoadProfile(options.profile);
  if (!profile.ok()) {
    rec.Log("order: profile " + options.profile + ": " + profile.error().message() +
            "; Running claims not timed against their Deployments' creates");
    return 0;
  }
  for (const std::string& set : options.profile_sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos ||
        !cluster::SetProfileField(*profile, set.substr(0, eq), set.substr(eq + 1)).ok()) {
      return 0;  // the cluster refused it too: the run did not start
    }
  }
  if (!profile->process_images.empty()) return 0;
  return (profile->pod_scheduling.fixed + profile->pod_start.fixed + profile->pod_ready.fixed)
      .count();
}

}  // namespace

ObjectOwners OwnersOf(const std::map<std::string, std::vector<Answer>>& all) {
  ObjectOwners owners;
  for (const auto& [name, answers] : all) {
    std::map<std::string, int64_t> created;  // id → its creation (ms), from the answers
    for (const Answer& a : answers) {
      auto at = ParseRfc3339(a.created_at);
      if (a.id.empty() || !at) continue;
      const int64_t ms = std::chrono::duration_cast<milliseconds>(at->time_since_epoch()).count();
      auto [it, fresh] = created.emplace(a.id, ms);
      if (!fresh) it->second = std::min(it->second, ms);
    }
    for (const auto& [id, ms] : created) {
      if (IsAgentName(name)) {
        owners.AddAgent(id, name, ms);
      } else {
        owners.AddProject(id, name, ms);
      }
    }
  }
  return owners;
}

// After every run, from the cluster's audit log: each Service and Ingress was created only once
// the object it depends on existed, and no Running was committed sooner after its Deployment's
// create than a pod of it could be ready (creation_order.h).
void CheckOrder(const Processes& procs, const TortureOptions& options,
                const std::vector<Claim>& running, const ClusterKills& cluster_kills_us,
                Record& rec) {
  const ObjectOwners owners = OwnersOf(rec.Answers());
  const int64_t min_ready_ms = MinimumReadyMs(options, rec);
  size_t writes_read = 0;
  OrderReport order;
  ReadinessReport timed;
  // Each cluster's audit log with its own kills and the claims of the projects placed on it.
  for (int cluster = 0; cluster < procs.clusters(); ++cluster) {
    const std::vector<AuditWrite> writes = ParseAuditWrites(ReadAuditLog(procs, cluster));
    writes_read += writes.size();
    const OrderReport one =
        CheckCreationOrder(writes, owners, cluster_kills_us[static_cast<size_t>(cluster)]);
    order.checked += one.checked;
    order.excused += one.excused;
    order.violations.insert(order.violations.end(), one.violations.begin(), one.violations.end());
    std::vector<RunningClaim> claims;
    for (const Claim& c : running) {
      if (c.cluster != procs.ClusterName(cluster)) continue;
      const std::string deployment = c.agent ? c.name : engine::NamesFor(c.id, c.name).deployment;
      claims.push_back({c.id, kNamespace, deployment, c.since_ms, c.Describe()});
    }
    const ReadinessReport t = CheckRunningAfterCreate(claims, writes, min_ready_ms);
    timed.checked += t.checked;
    timed.violations.insert(timed.violations.end(), t.violations.begin(), t.violations.end());
  }
  for (const std::string& v : order.violations) {
    rec.Violation("(order)", "creation order", "each object only once its dependency exists", v);
  }
  for (const std::string& v : timed.violations) {
    rec.Violation("(order)", "Running before ready", "Running only once every object is ready", v);
  }
  rec.Update([&](TortureReport& r) {
    r.ordered_creates_checked = order.checked;
    r.ordered_creates_excused = order.excused;
    r.running_claims_timed = timed.checked;
  });
  rec.Log("order: " + std::to_string(writes_read) + " writes in the audit log(s); " +
          std::to_string(order.checked) +
          " Service and Ingress creates checked against their "
          "dependencies (" +
          std::to_string(order.excused) + " excused across a cluster kill); " +
          std::to_string(timed.checked) +
          " Running claims timed against their Deployment's "
          "create (a pod is Ready " +
          std::to_string(min_ready_ms) +
          " ms after its creation at "
          "the soonest)");
}

// After a replicated run: from the store's shard history and the cluster's audit log, every
// shard a killed replica held was taken over within lease duration + 1.5 retry periods + 2 s, and
// no record was written by a replica outside its own tenure of the record's shard (epochs.h).
void CheckReplicas(const Processes& procs, const TortureOptions& options,
                   const std::vector<Kill>& kills, Record& rec) {
  store::PostgresOptions po;
  po.url = procs.database_url();
  auto store = store::OpenPostgresStore(po);
  if (!store.ok()) {
    rec.Violation("(replicas)", "shard history", "the store", store.error().ToString());
    return;
  }
  auto history = (*store)->ListShardHistory(0, 0);
  if (!history.ok()) {
    rec.Violation("(replicas)", "shard history", "the store", history.error().ToString());
    return;
  }
  std::vector<Death> deaths;
  for (const Kill& k : kills) deaths.push_back({procs.ReplicaName(k.replica), k.at_ms, k.back_ms});
  // The Lease protocol's own worst case (renewal seen a listing late, expiry a listing late, a
  // shard acquired since the last read waiting a view: lease + 1.5 retry periods), plus 2 s for
  // the reads and acquisitions on a loaded machine (docs/torture.md).
  const int64_t bound_ms = (milliseconds(options.lease_duration) +
                            milliseconds(options.retry_period) * 3 / 2 + milliseconds(2000))
                               .count();
  HandoverReport handovers = CheckHandovers(deaths, *history, bound_ms);
  for (const std::string& v : handovers.violations) {
    rec.Violation("(replicas)", "handover", "within " + std::to_string(bound_ms) + " ms", v);
  }
  const ObjectOwners owners = OwnersOf(rec.Answers());
  const int shards = options.shards;
  std::vector<AuditWrite> writes;
  for (int cluster = 0; cluster < procs.clusters(); ++cluster) {
    std::vector<AuditWrite> one = ParseAuditWrites(ReadAuditLog(procs, cluster));
    writes.insert(writes.end(), one.begin(), one.end());
  }
  EpochReport epochs = CheckWriteEpochs(writes, *history, owners, [shards](const std::string& id) {
    return engine::ShardOf(id, shards);
  });
  for (const std::string& v : epochs.violations) {
    rec.Violation("(replicas)", "fencing", "one replica per shard epoch", v);
  }
  rec.Update([&](TortureReport& r) {
    r.handovers_checked = handovers.shards;
    r.max_handover_ms = handovers.max_ms;
    r.fenced_writes_checked = epochs.attributed;
  });
  rec.Log("replicas: " + std::to_string(history->size()) + " shard events; " +
          std::to_string(handovers.shards) + " shards of killed replicas taken over (median " +
          std::to_string(handovers.median_ms) + " ms, max " + std::to_string(handovers.max_ms) +
          " ms, bound " + std::to_string(bound_ms) + " ms); " + std::to_string(epochs.attributed) +
          " of " + std::to_string(epochs.writes) + " replica writes checked against the epochs (" +
          std::to_string(epochs.exempt) + " supplied-credential Secrets exempt)");
}

}  // namespace steward::torture
