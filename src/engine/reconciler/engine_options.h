// EngineOptions: how an Engine is built (its configuration, queue, timings, the HTTP prober and
// the seams tests and metrics hook into). Kept apart from engine.h so that code which only
// configures an engine (say, hooking metrics into on_reconcile) need not see the Engine itself.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "engine/model/project.h"
#include "engine/probe/http_prober.h"
#include "engine/workqueue/worker_pool.h"
#include "engine/workqueue/workqueue.h"
#include "kube/client/resource.h"

namespace steward::engine {

// The engine's work queue: a project's next step (a run less than a minute after its last) goes
// before its team's projects that have not started, so a burst finishes what it started first;
// while such projects wait, one new project goes in after every 5 next steps, which keeps enough
// Deployments rolling out for the burst's end (docs/performance.md, issue 33: of 1,000 projects
// the first Running at 2.6 s instead of 18 s, the median at 10.5 s, all at 1.04 × the bound;
// 8 in a row: all at 1.06 ×, 4: the median at 11.0 s).
inline WorkQueueOptions EngineQueueDefaults() {
  WorkQueueOptions o;
  o.resume_window = std::chrono::seconds(60);
  o.resumed_run = 5;
  return o;
}

// A status the engine committed for one record (metrics, EngineOptions::on_status).
struct StatusWritten {
  std::string id;
  bool agent = false;
  std::string from;  // the phase before ("" for a record's first status)
  std::string to;
  std::string reason;  // the new status's reason
  int64_t generation = 0;
  // The intent at `generation`: its operation as the history names it ("create+start",
  // "update", "suspend", ...) and when the store accepted it (wall ms). Empty and 0 when this
  // process did not see it accepted (it started later, or another replica owned the record).
  std::string operation;
  int64_t accepted_ms = 0;
  int64_t at_ms = 0;  // when this status was committed (wall ms)
  // This status is the intent's first in a done phase (Running, Suspended, Failed): the
  // intent is complete, `at_ms - accepted_ms` after it was accepted.
  bool completes = false;
};

struct EngineOptions {
  EngineConfig config;
  // The cluster this engine acts on (its client's): only records placed there are its
  // (store::ProjectRecord::cluster); "default" is the one cluster of a configuration without
  // `clusters:`. Several engines, one per cluster, may share a store.
  std::string cluster = "default";
  // After this long with every request to the cluster failing (no answer, or 5xx; the
  // transport's failing_since), the cluster is unreachable: every project of it says so
  // (Unknown, ClusterUnreachable) and runs ask it nothing until it answers again, when every
  // project is run again (and adopted: nothing is written if nothing changed). 0: never.
  std::chrono::milliseconds unreachable_grace{30000};
  WorkQueueOptions queue = EngineQueueDefaults();
  std::string field_manager = "steward";
  // A step that waits for the cluster requeues after this even without an event (a safety net;
  // informer events are what normally wake it).
  std::chrono::milliseconds recheck{10000};
  // How long a write's result stands in for the cache before the cache must show it.
  std::chrono::milliseconds expectation_timeout{30000};
  std::chrono::milliseconds sync_timeout{60000};
  // Start() waits for the caches' first lists (and fails after sync_timeout). False: it starts
  // the informers and goes on without them: for one of several clusters that did not answer at
  // start, whose runs then wait for its caches (they decide nothing from an empty one) and
  // whose projects its health thread tells Unknown after the grace.
  bool wait_for_sync = true;
  HttpProber prober;  // needed when config.http_probe
  // Test seam for crash tests: called before and after every create, update and delete the
  // engine sends, with when = "before" | "after", the verb, the kind and the name. An error
  // ends the run at that point as if the process had died there: nothing more is written to the
  // cluster or the store by that run, and the project is not requeued.
  std::function<Status(std::string_view when, std::string_view verb, const kube::ResourceType&,
                       std::string_view name)>
      write_hook;
  // Called after every reconcile run with its result and how long it took (metrics). Runs on
  // the worker thread; must be quick and thread-safe.
  std::function<void(WorkResult::Kind, std::chrono::nanoseconds)> on_reconcile;
  // Called after every status the engine commits (on the worker thread, after the commit;
  // quick and thread-safe). Only the record's owner writes its status, so over replicas each
  // status is reported once.
  std::function<void(const StatusWritten&)> on_status;
  const Clock* clock = nullptr;  // null: RealClock
};

}  // namespace steward::engine
