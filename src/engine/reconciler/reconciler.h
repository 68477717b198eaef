// Reconciler: one run for one project. It reads the intent from the store, observes the
// project's objects through the Observer, takes every step toward the intent that nothing it
// waits for holds back (at most one create, update or delete per object), and writes the status
// it observed back to the store. Waiting never sleeps: a run that must wait returns RequeueAfter
// and an informer event for the project's objects wakes it sooner.
//
//   run:     create in dependency order, each object once what it depends on is observed to
//            exist — Secret and PVC → Deployment → Service → Ingress(es) — and wait for every
//            readiness rule (docs/design.md §4: PVC Bound, Deployment available, Service ready
//            endpoints, Ingress address) at once → probe (optional) → Running; then pending
//            credentials become active and older ones revoked.
//   suspend: delete the Ingresses, the Service and the Deployment in one pass (Ingresses first,
//            so traffic stops first), each with a uid precondition, and the Ingresses' TLS
//            Secrets once the Ingresses are gone → Suspended once all of them and every pod are
//            observed gone.
//   delete:  as suspend, with the PVC and the Secrets in the same pass → the record is purged
//            once all are gone (history stays).
// Creating over an object that is still terminating waits for it to be gone.
//
// Errors follow docs/design.md §5 (Classify in classify.cc has the table): 404 on a delete is
// done; AlreadyExists is read and decided (ours: adopt; ours and terminating: wait; not ours:
// Failed); Conflict re-reads; a request the server refuses as wrong (422, 400, other 4xx) fails
// with the server's reason and message and is not retried; 429 waits Retry-After; 401/403 are
// retried slowly (kAuthRetryInitial..kAuthRetryMax) with a loud status, an ERROR line and a
// counter; 5xx, timeouts and transport failures back off. Nothing unclassified is taken for
// success.
//
// Sharded mode (several replicas, docs/design.md §10): a run is given the Fence of its project's
// shard. Every store write it makes carries it (Mutation::fence, PurgeProject), and before every
// create, update and delete it sends to Kubernetes it asks `check_fence`; a fence that no longer
// holds (kAborted) ends the run quietly — no status written, no requeue, counted in
// lost_shard_runs() — since the shard's new owner reconciles the project from then on.
//
// Thread-safety: Reconcile may run on many threads for different projects; the work queue
// guarantees one run per project at a time, which the reconciler relies on.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "engine/manifests/manifests.h"
#include "engine/model/project.h"
#include "engine/reconciler/adoption.h"
#include "engine/reconciler/engine.h"
#include "engine/reconciler/intent_times.h"
#include "engine/reconciler/observer.h"
#include "engine/reconciler/start_gate.h"
#include "engine/workqueue/worker_pool.h"
#include "kube/client/client.h"
#include "store/store.h"

namespace steward::engine {

class Reconciler {
 public:
  // Ok while the fence holds; kAborted when the shard is no longer this replica's. Called on
  // the worker thread before each Kubernetes write of a fenced run.
  using FenceCheck = std::function<Status(const store::Fence&)>;
  // Called (on a worker thread, no lock held) with a project whose start was waiting for a slot
  // and now has one (config.max_starting): enqueue it.
  using Wake = std::function<void(const std::string& project_id)>;
  // Since when (wall ms) the cluster has not answered for longer than its grace; 0 while it
  // answers (engine.h: the engine's watch on its transport). A run in that state asks the
  // cluster nothing and writes the record's status Unknown / ClusterUnreachable.
  using Unreachable = std::function<int64_t()>;
  Reconciler(const EngineOptions& options, std::shared_ptr<kube::Client> client,
             store::Store& store, Observer& observer, const Clock& clock,
             FenceCheck check_fence = {}, Wake wake = {}, Unreachable unreachable = {});
  // Starts under way and waiting for a slot (config.max_starting).
  size_t starts_under_way() const { return starts_.under_way(); }
  size_t starts_waiting() const { return starts_.waiting(); }

  // One run; `fence` set in sharded mode (the run acts only while it holds).
  WorkResult Reconcile(const std::string& project_id,
                       const std::optional<store::Fence>& fence = std::nullopt);
  // What the runs so far came to (any thread).
  struct Counts {
    uint64_t runs = 0;
    uint64_t writes = 0;
    // Runs that found a Running project's adoption fingerprint unchanged (adoption.h) and
    // ended there: nothing rendered, no cached object parsed, no status written.
    uint64_t unchanged_runs = 0;
    // Runs whose step Kubernetes refused with 401 Unauthorized (or that had no credentials
    // to send) / 403 Forbidden.
    uint64_t unauthorized = 0;
    uint64_t forbidden = 0;
    uint64_t lost_shard_runs = 0;  // ended because their shard was lost (sharded mode)
    uint64_t unsynced_runs = 0;    // put off because a cache had not synced (Observer::Synced)
  };
  Counts counts() const;
  // Create, update and delete requests the API server refused (or that got no answer: 0), by
  // HTTP status. A 404 on a delete is not a refusal (the object is gone already).
  std::map<int, uint64_t> refused_writes() const EXCLUDES(refused_mu_);
  void NoteRefusedWrite(int http_status) EXCLUDES(refused_mu_);

  // docs/design.md §5's slow retry for 401 / 403: a project's first refused run is retried after
  // kAuthRetryInitial, each further consecutive one after twice the previous delay, at most
  // kAuthRetryMax (events and new intents still run it sooner).
  static constexpr std::chrono::seconds kAuthRetryInitial{60};
  static constexpr std::chrono::seconds kAuthRetryMax{300};
  std::vector<Orphan> orphans() const;
  // When each record's latest intent was accepted: fed by the engine's store listener, read
  // when a status is written (EngineOptions::on_status).
  IntentTimes& intent_times() { return intent_times_; }

  // Defined in run.h (internal to the reconciler's files).
  struct Outcome;   // one step's result
  struct Run;       // one run's state and its steps
  struct Loaded;    // what a run starts from
  struct Decision;  // what a run decided and did

 private:
  // The phases of Reconcile: load the intent (a project the store does not know goes to
  // ReconcileUnknown), decide and take the next step, write the status observed, and map the
  // step's outcome to the work queue's result.
  Expected<Loaded, WorkResult> Load(const std::string& project_id,
                                    const std::optional<store::Fence>& fence);
  // The fingerprint a run toward Running starts from (nullopt when none applies), and the end
  // of a run that found it unchanged since the stored Running verdict.
  std::optional<std::string> FingerprintOf(const Loaded& in) const;
  bool Unchanged(const Loaded& in, const std::optional<std::string>& fingerprint) const;
  WorkResult EndUnchanged(const store::ProjectRecord& rec);
  Decision Decide(Run& run, const Loaded& in);
  Decision DecideRunning(Run& run, const Loaded& in);  // provision toward the intent
  // Suspend, or delete and purge; `creds` are the project's, revoked once suspended with
  // supplied credentials (no pod holds them).
  Decision DecideStopped(Run& run, const ObjectNames& names,
                         const std::vector<store::Credential>& creds);
  Decision DecideAgent(Run& run, const Loaded& in);  // an MQTT schema agent's run
  WorkResult Purge(const store::ProjectRecord& rec, const std::optional<store::Fence>& fence);
  // A record moved away from this cluster (moving_from): everything of it here is removed
  // (after the new cluster runs it, for startFirst), then the move ends in the store with a
  // "move" history line. Writes no status: the record's is the new cluster's.
  WorkResult Depart(const store::ProjectRecord& rec, const std::optional<store::Fence>& fence);
  // The quiet end of a run whose shard is no longer ours (see the class comment).
  WorkResult LostShard(const std::string& project_id, const Status& why);
  // Fills the status's reason, message and conditions from the run; writes it unless the
  // intent moved on or nothing changed. A record gone meanwhile is not an error.
  Status WriteStatus(Run& run, Decision& d);
  // When the cluster has not answered for longer than its grace (unreachable_): writes the
  // record's status Unknown, reason ClusterUnreachable, with the phase last observed (once: a
  // record already Unknown is left as it is), asks the cluster nothing, and ends the run Ok;
  // nullopt while the cluster answers.
  std::optional<WorkResult> EndIfUnreachable(const store::ProjectRecord& rec,
                                             const std::optional<store::Fence>& fence);
  WorkResult ToWorkResult(const Outcome& outcome, bool bounded) const;
  WorkResult ReconcileUnknown(const std::string& project_id,
                              const std::optional<store::Fence>& fence);
  // Drops the orphans reported for `project_id` (a project stored after its first objects were
  // seen: the API writes a supplied Secret, migrate relabels, before the commit).
  void ForgetOrphans(const std::string& project_id) EXCLUDES(orphans_mu_);

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
  // The delay before retrying a project's call refused for Steward's credentials, from its
  // consecutive refused runs (kAuthRetryInitial, doubling, at most kAuthRetryMax).
  std::chrono::milliseconds AuthRetry(const std::string& project_id);
  // After a run: a refusal of Steward's credentials is counted, logged (ERROR) and remembered
  // for AuthRetry; any other outcome forgets the project's refusals.
  void NoteAuth(const std::string& project_id, const Outcome& outcome);
  // Start admission: whether the run may take a project's first step (its Deployment does not
  // exist yet), and the end of a start once the project is Running, Failed or not to run.
  bool AdmitStart(const store::ProjectRecord& rec);
  void SettleStart(const store::ProjectRecord& rec, const Decision& d);
  void WakeAll(const std::vector<std::string>& ids) const;
  // After a status write: EngineOptions::on_status, with the intent it answers.
  void ReportStatus(const store::ProjectRecord& rec, const ProjectStatus& status, std::string from,
                    int64_t at_ms);

  const EngineOptions& options_;
  std::shared_ptr<kube::Client> client_;
  store::Store& store_;
  Observer& observer_;
  const Clock& clock_;
  const FenceCheck check_fence_;
  const Wake wake_;
  const Unreachable unreachable_;
  StartGate starts_;
  const AdoptionFingerprints fingerprints_;
  IntentTimes intent_times_;
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> unchanged_runs_{0};
  std::atomic<uint64_t> lost_shard_runs_{0};
  std::atomic<uint64_t> unsynced_runs_{0};
  std::atomic<uint64_t> runs_{0};
  std::atomic<uint64_t> unauthorized_{0};
  std::atomic<uint64_t> forbidden_{0};
  mutable Mutex refused_mu_;
  std::map<int, uint64_t> refused_writes_ GUARDED_BY(refused_mu_);
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
  // By project id: consecutive runs refused for Steward's credentials.
  std::map<std::string, int> auth_refusals_ GUARDED_BY(memo_mu_);
};

}  // namespace steward::engine
