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
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
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

  const EngineOptions& options_;
  std::shared_ptr<kube::Client> client_;
  store::Store& store_;
  Observer& observer_;
  const Clock& clock_;
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> runs_{0};
  mutable std::mutex orphans_mu_;
  std::vector<Orphan> orphans_;
  std::set<std::string> reported_orphans_;
};

}  // namespace steward::engine
