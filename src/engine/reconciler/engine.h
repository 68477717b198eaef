// Engine: converges every project toward its desired state (DESIGN.md §2, §6).
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
#pragma once

#include <chrono>
#include <functional>
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
  uint64_t writes = 0;  // create/update/delete requests sent
  // Runs whose step Kubernetes refused for Steward's credentials: 401 (or none to send) / 403.
  uint64_t kube_unauthorized = 0;
  uint64_t kube_forbidden = 0;
  size_t queue_depth = 0;
  size_t queue_waiting = 0;     // projects whose requeue (a retry, a recheck) is not yet due
  std::vector<Orphan> orphans;  // labelled objects of no stored project, still present
  bool started = false;         // Start() succeeded (caches synced) and Stop() not called
};

class Engine {
 public:
  static StatusOr<std::unique_ptr<Engine>> Create(EngineOptions options,
                                                  std::shared_ptr<kube::Client> client,
                                                  store::Store& store);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Starts informers, waits for them to sync (kDeadlineExceeded after options.sync_timeout),
  // enqueues every stored project, scans for orphans and starts the workers.
  Status Start();
  void Stop();

  void Enqueue(const std::string& project_id);
  // The intent operations, wired to enqueue into this engine.
  Intents& intents();
  EngineStats stats() const;
  // The EndpointSlices of Service `service` (label kubernetes.io/service-name) in the engine's
  // namespace, from its informer: what its Service readiness verdicts are made from.
  // nullopt before Start() has synced the caches or after Stop(). Any thread.
  std::optional<std::vector<Json>> EndpointSlicesOf(const std::string& service) const;
  const EngineOptions& options() const;

 private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace steward::engine
