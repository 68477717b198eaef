// Engine: converges every project toward its desired state (docs/design.md §2, §6).
//
// Wiring: informers (one per managed kind, in the configured namespace, label-selected on
// app.kubernetes.io/managed-by=steward; EndpointSlices unselected, indexed by service name) wake
// the project named by an object's steward.io/project label; a keyed WorkQueue hands each
// project to one worker at a time; the Reconciler takes one step per run, verifies it from the
// caches, and writes the status it observed back to the store.
//
// Lifecycle: Create → Start (informers start and sync; every stored project is enqueued;
// labelled objects without a project are reported, and removed when configured) → Stop (workers
// drain, informers stop). Thread-safe; Stop is idempotent and also run by the destructor.
//
// The cluster's reachability: a thread of the engine watches its client's transport
// (Transport::failing_since); once every request has failed for options.unreachable_grace, the
// cluster is unreachable: every owned project is enqueued and its run writes Unknown /
// ClusterUnreachable without asking the cluster anything, and the client retries nothing
// (Transport::SetFailFast), so that a run in flight ends at its next failure. At the first answer
// after that every owned project is enqueued again and its run observes as after a restart.
//
// Sharded mode (config.shards > 0; several replicas share the store, docs/design.md §10): the
// engine acts only for the shards it is given (SetOwnedShards, by the replica's membership,
// src/replica). Start() starts the workers with no shard and no informer; each SetOwnedShards
// swaps the informers for ones selected on the owned shards (steward.io/shard in (...)), runs
// only projects of those shards under their fences (the Reconciler's class comment), and a
// store listener wakes an owned project when an intent for it is committed (through any
// replica's API). With no shard owned there are no informers and no runs.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/status.h"
#include "engine/intents/intents.h"
#include "engine/model/project.h"
#include "engine/reconciler/engine_options.h"
#include "engine/workqueue/worker_pool.h"
#include "engine/workqueue/workqueue.h"
#include "kube/client/client.h"
#include "store/store.h"

namespace steward::engine {

struct Orphan {
  std::string kind, name, project_id;
};

struct EngineStats {
  uint64_t reconciles = 0;
  // Of those, runs that found a Running project unchanged by its adoption fingerprint
  // (adoption.h): no render, no status write.
  uint64_t unchanged_runs = 0;
  uint64_t writes = 0;  // create/update/delete requests sent
  // Runs whose step Kubernetes refused for Steward's credentials: 401 (or none to send) / 403.
  uint64_t kube_unauthorized = 0;
  uint64_t kube_forbidden = 0;
  // Create, update and delete requests the API server refused, by HTTP status (0: no answer).
  std::map<int, uint64_t> kube_refused_writes;
  size_t queue_depth = 0;
  size_t queue_waiting = 0;     // projects whose requeue (a retry, a recheck) is not yet due
  size_t queue_processing = 0;  // runs under way (handed to a worker, not yet done)
  std::vector<Orphan> orphans;  // labelled objects of no stored project, still present
  bool started = false;         // Start() succeeded (caches synced) and Stop() not called
  // Sharded mode: the shards acted for (shard → epoch), informer swaps made, runs ended because
  // their shard was lost.
  std::map<int, int64_t> shards;
  uint64_t shard_swaps = 0;
  uint64_t lost_shard_runs = 0;
  uint64_t unsynced_runs = 0;  // runs put off until the caches synced (SetOwnedShards)
  // Every cache holds its first list (Observer::Synced): false while the cluster lists nothing
  // (down, or refusing a kind's list), when every run is put off.
  bool caches_synced = true;
  // Since when (wall ms) the cluster has been unreachable (EngineOptions::unreachable_grace); 0
  // while it answers.
  int64_t unreachable_since_ms = 0;
  // Requests the cluster's client was given and the retries it made (kube::TransportStats); no
  // retry while the cluster is unreachable (kube::Transport::SetFailFast).
  uint64_t kube_requests = 0;
  uint64_t kube_retries = 0;
};

class Engine {
 public:
  static StatusOr<std::unique_ptr<Engine>> Create(EngineOptions options,
                                                  std::shared_ptr<kube::Client> client,
                                                  store::Store& store);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Starts informers, waits for them to sync (kDeadlineExceeded after options.sync_timeout;
  // not with options.wait_for_sync false), enqueues every stored project, scans for orphans and
  // starts the workers.
  Status Start();
  void Stop();

  // Sharded mode only (kFailedPrecondition otherwise, or before Start / after Stop): from now on
  // act for exactly these shards, each under its fence (fence.shard == key; the membership
  // acquired them in the store). Shards that go stop at once (their runs abort at their next
  // write) and every run is drained before the informers are swapped; returns once the new
  // informers have synced (or options.sync_timeout passed, or at once while the cluster is
  // unreachable) and the owned projects are enqueued, so that a caller may release what it gave
  // up. Shards whose caches have not synced are still owned: their runs decide nothing until
  // the caches hold their first lists (Observer::Synced), and a cluster that does not answer
  // takes no shard from the engines of the others. A set equal to the current one only
  // replaces the fences. Any thread but a worker; serialised.
  Status SetOwnedShards(std::map<int, store::Fence> owned);
  std::map<int, int64_t> OwnedShards() const;  // shard → epoch

  // Enqueues the project (sharded: only when its shard is owned).
  void Enqueue(const std::string& project_id);
  // The intent operations, wired to enqueue into this engine.
  Intents& intents();
  // Where supplied credentials go in this engine's cluster (the Secrets its runs read): for an
  // Intents that places records on several clusters.
  CredentialVault& vault();
  EngineStats stats() const;
  // The EndpointSlices of Service `service` (label kubernetes.io/service-name) in the engine's
  // namespace, from its informer: what its Service readiness verdicts are made from.
  // nullopt before Start() has synced the caches or after Stop(); in sharded mode also when the
  // Service is not of this replica's shards (its caches do not hold it). Any thread.
  std::optional<std::vector<Json>> EndpointSlicesOf(const std::string& service) const;
  const EngineOptions& options() const;

 private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace steward::engine
