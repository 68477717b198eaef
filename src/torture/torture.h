// A torture run (issue 6, docs/torture.md): P projects and A MQTT schema agents, each driven by a
// seeded random sequence of operations (plan.h) through Steward's REST API, against `steward
// cluster` with a hostile profile, both run as child processes of this one; an oracle (oracle.h)
// checks every claim Steward makes while it runs, then everything once more after the run quiesces.
// Optionally Steward is killed with SIGKILL at random moments and started again on the same data
// dir, and the cluster process is killed and restarted on its data dir while Steward keeps running.
// With several clusters (issue 37) Steward places the projects over them; one may be killed and
// kept down past its unreachable grace, while the oracle checks that each of its projects then
// says Unknown (ClusterUnreachable) and none Running, and every scan that a project's objects
// exist only on the cluster it is placed on.
//
// Every violation is printed to `out` as it is found: the time, the project, what Steward said,
// what the cluster showed, and the seed that replays the run.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "torture/plan.h"

namespace steward::torture {

struct TortureOptions {
  std::string steward_binary;  // the `steward` executable run as cluster and server
  std::string work_dir;        // data dirs and logs; created; "" = a new temp dir
  uint64_t seed = 1;
  int projects = 30;
  int agents = 4;  // MQTT schema agents driven beside the projects (plan.h PlanAgent)
  PlanOptions plan;
  int clients = 32;  // concurrent driver threads (projects run one per thread at a time)
  std::string profile = "hostile";
  std::vector<std::string> profile_sets;  // `--set FIELD=VALUE` for the cluster
  int kill_steward = 0;                   // times Steward is SIGKILLed and started again
  int restart_cluster = 0;                // times a cluster process is SIGKILLed and restarted
  // Clusters (`steward cluster` processes) Steward's `clusters:` lists; 1: no `clusters:`.
  int clusters = 1;
  // Times a cluster is SIGKILLed and kept down past its unreachable grace (then restarted).
  int kill_cluster = 0;
  std::chrono::seconds unreachable_grace{3};  // clusters[].unreachableGrace
  std::chrono::seconds quiesce_timeout{300};
  std::chrono::seconds orphan_grace{30};
  std::string steward_log_level = "info";
  int progress_deadline_seconds = 15;  // Steward's engine.progressDeadlineSeconds
  // Several replicas (issue 17): `replicas` steward serve processes share one database and the
  // projects (sharded over their Leases); every request goes to a random replica, and
  // kill_steward SIGKILLs random replicas (half of the time the owner of a project mid-step).
  // More than one needs database "postgres".
  int replicas = 1;
  std::string database = "sqlite";  // "sqlite" | "postgres" (a server the run starts itself)
  int restart_database = 0;         // times the PostgreSQL server is stopped and started again
  // The replicas' Lease timings (short, so that a handover fits in a small run).
  std::chrono::seconds lease_duration{6};
  std::chrono::seconds renew_deadline{4};
  std::chrono::seconds retry_period{1};
  int shards = 64;  // the replicas' shard count (their default)
};

struct TortureReport {
  std::string work_dir;
  int64_t ops_sent = 0;        // requests sent, retries included
  int64_t ops_answered = 0;    // 2xx answers
  int64_t ops_refused = 0;     // 404/409 answers (a restart of a suspended project, ...)
  int64_t ops_no_answer = 0;   // requests that got no answer (server killed) and were re-sent
  int64_t claims_checked = 0;  // Running/Suspended claims checked while the run went on
  int64_t claims_held = 0;
  int64_t agent_claims_held = 0;  // of claims_held, agents' claims
  int64_t claims_superseded = 0;  // failed, but the project had moved to a newer generation
  int64_t claims_inconclusive = 0;
  int64_t scans = 0;
  int64_t credential_checks = 0;
  int64_t instance_ops = 0;  // instance calls (files, resources, agent status and commands) 2xx
  int steward_kills = 0;
  int cluster_restarts = 0;
  int cluster_kills = 0;                // kills kept down past the unreachable grace
  int64_t told_unreachable = 0;         // projects seen Unknown/ClusterUnreachable while down
  int64_t max_told_after_grace_ms = 0;  // the latest of those, after the kill + grace
  int64_t moves = 0;                    // moves to another cluster answered 2xx
  int database_restarts = 0;
  int64_t handovers_checked = 0;        // shards a killed replica held, each taken over again
  int64_t max_handover_ms = 0;          // the longest of those takeovers
  int64_t fenced_writes_checked = 0;    // replicas' Kubernetes writes checked against the epochs
  int64_t ordered_creates_checked = 0;  // Service/Ingress creates checked for their dependency
  int64_t ordered_creates_excused = 0;  // of those, unproven across a cluster kill
  int64_t running_claims_timed = 0;     // Running claims timed against their Deployment's create
  int64_t max_check_lag_ms = 0;         // the longest wait of a claim for its check to start
  int64_t late_checks = 0;              // claims whose check started > 2 s after they were seen
  double seconds = 0;
  std::vector<std::string> violations;
};

// Runs the whole torture. Fails (without a report) only when the run could not be set up
// (binary missing, cluster or Steward did not start); violations are in the report.
StatusOr<TortureReport> RunTorture(const TortureOptions& options, std::ostream& out);

}  // namespace steward::torture
