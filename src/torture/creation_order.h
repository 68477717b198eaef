// The torture run's order checks (docs/design.md §3.3 and §3.4, issue 33), from the cluster's audit
// log (RequestLog's JSON lines: each request's arrival and answer times, code and object):
//
// Creation order. Steward creates a record's objects in dependency order, each only once the
// object it depends on exists (ObjectOwners::DependencyOf: a project's Service after its
// Deployment, its Ingresses — main and custom-hostname — after its Service; an agent's Service
// after its Deployment). Every successful create (2xx) of such an object O, which arrived at the
// API server at time s, holds when its dependency D existed at s: among D's events before s —
// a successful create of D *answered* (its answer's time) at or before s, a delete of D answered
// 2xx/202 that *arrived* before s (from then on D was terminating or gone) — the latest is a
// create. No such event, or a delete last, is a violation: O was created before D existed (a
// create still in flight does not count), or over a D that was going away. Exception, counted
// apart as excused: a cluster kill (SIGKILL) after that latest event and before s, since a create
// of D the API server committed but was killed before logging leaves no line.
//
// Running after creation. A Running claim says every object is ready; a Deployment created at t
// cannot have a ready pod before t + the cluster profile's minimum time from pod creation to
// Ready (the fixed parts of pod_scheduling + pod_start + pod_ready; the embedded kubelet only
// adds to it, across restarts too). So a Running claim committed at `since` (the record's
// status.since, Steward's wall clock at the commit) less than that minimum after the arrival of
// the latest successful create of its Deployment that arrived before `since` was made before
// the Deployment could be ready: a violation, however late the live check read the cluster.
//
// Both assume one wall clock for the cluster and Steward (the torture runs both on one machine)
// and names unique per object (the engine refuses two projects whose object names clash). A
// deletecollection is not taken as a delete of any object (Steward sends none).
//
// Pure functions of their inputs; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torture/epochs.h"

namespace steward::torture {

struct OrderReport {
  int64_t checked = 0;  // successful creates of an object with a dependency, of a known record
  int64_t excused = 0;  // of those, without proof but with a cluster kill that may have lost it
  std::vector<std::string> violations;
};

// `cluster_kills_us`: when each kill of the cluster was over (the process gone), wall clock µs.
OrderReport CheckCreationOrder(const std::vector<AuditWrite>& writes, const ObjectOwners& owners,
                               const std::vector<int64_t>& cluster_kills_us);

// One Running claim as Steward showed it.
struct RunningClaim {
  std::string record;      // the record's id
  std::string ns;          // its Deployment's namespace
  std::string deployment;  // its Deployment's name
  int64_t since_ms = 0;    // status.since; claims with 0 are not checked
  std::string said;        // what Steward said, for the report
};

struct ReadinessReport {
  int64_t checked = 0;  // distinct claims (record, since) checked
  std::vector<std::string> violations;
};

// `min_ready_ms` <= 0 checks nothing (a profile without a minimum, or with process pods whose
// readiness is their own probe's).
ReadinessReport CheckRunningAfterCreate(const std::vector<RunningClaim>& claims,
                                        const std::vector<AuditWrite>& writes,
                                        int64_t min_ready_ms);

}  // namespace steward::torture
