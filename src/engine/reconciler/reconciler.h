// Reconciler: one run for one project. It reads the intent from the store, observes the
// project's objects through the Observer, takes the next step toward the intent (one create,
// update or delete per object, in dependency order), and writes the status it observed back to
// the store. Waiting never sleeps: a run that must wait returns RequeueAfter and an informer
// event for the project's objects wakes it sooner.
//
//   run:     Secret → PVC (Bound) → Deployment (ready, DESIGN.md §4) → Service (ready
//            endpoints) → Ingress(es) (address, configurable) → probe (optional) → Running;
//            then pending credentials become active and older ones revoked.
//   suspend: Ingresses gone → Service gone → Deployment gone and its pods gone → Suspended.
//   delete:  as suspend, then PVC and Secret gone → the record is purged (history stays).
//
// Errors follow DESIGN.md §5: 404 on a delete is done; AlreadyExists is read and decided
// (ours: adopt; ours and terminating: wait; not ours: Failed); Conflict re-reads; Invalid fails
// with the server's message; 429 waits Retry-After; everything else backs off. Nothing
// unclassified is taken for success.
//
// Thread-safety: Reconcile may run on many threads for different projects; the work queue
// guarantees one run per project at a time, which the reconciler relies on.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "engine/model/project.h"
#include "engine/reconciler/engine.h"
#include "engine/reconciler/observer.h"
#include "engine/workqueue/worker_pool.h"
#include "kube/client/client.h"
#include "store/store.h"

namespace steward::engine {

class Reconciler {
 public:
  Reconciler(const EngineOptions& options, std::shared_ptr<kube::Client> client,
             store::Store& store, Observer& observer, const Clock& clock);

  WorkResult Reconcile(const std::string& project_id);

  uint64_t writes() const { return writes_.load(); }
  uint64_t runs() const { return runs_.load(); }
  std::vector<Orphan> orphans() const;

  struct Outcome;  // one step's result (reconciler.cc)
  struct Run;      // one run's state (reconciler.cc)

 private:
  WorkResult ReconcileUnknown(const std::string& project_id);

  // A write whose answer did not hold what was written (NotPersisted): while the object still has
  // the answer's content (status and others' *.kubernetes.io/ annotations aside), or the cache
  // has not caught up, at the same generation, the same failure is reported without writing
  // again. Returns its message.
  std::optional<std::string> KnownUnpersisted(const store::ProjectRecord& rec,
                                              const std::string& object, const View& view);
  void RememberUnpersisted(const store::ProjectRecord& rec, std::string object, std::string content,
                           std::string message);
  // Bounded waits: true when the project has waited on `key` (resource, reason, message) at
  // this generation for longer than config.step_timeout_seconds. Any other key restarts the
  // clock; nullopt forgets the project's wait.
  bool WaitedTooLong(const store::ProjectRecord& rec, const std::optional<std::string>& key)
      EXCLUDES(memo_mu_);
  // Applies the bound to a run's outcome: a wait that made no progress for too long becomes
  // Failed with its reason (true returned: the run still requeues to keep watching).
  bool BoundWait(const store::ProjectRecord& rec, Run& run, Outcome* outcome);
  void Forget(const std::string& project_id);

  const EngineOptions& options_;
  std::shared_ptr<kube::Client> client_;
  store::Store& store_;
  Observer& observer_;
  const Clock& clock_;
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> runs_{0};
  mutable Mutex orphans_mu_;
  std::vector<Orphan> orphans_ GUARDED_BY(orphans_mu_);
  std::set<std::string> reported_orphans_ GUARDED_BY(orphans_mu_);

  struct Unpersisted {
    int64_t generation = 0;
    std::string object, content, message;
  };
  struct Waiting {
    int64_t generation = 0;
    std::string key;
    SteadyTime since;
  };
  Mutex memo_mu_;
  std::map<std::string, Unpersisted> unpersisted_ GUARDED_BY(memo_mu_);  // by project id
  std::map<std::string, Waiting> waiting_ GUARDED_BY(memo_mu_);          // by project id
};

}  // namespace steward::engine
