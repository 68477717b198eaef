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
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/model/project.h"
#include "engine/reconciler/intents.h"
#include "engine/workqueue/worker_pool.h"
#include "engine/workqueue/workqueue.h"
#include "kube/client/client.h"
#include "store/store.h"

namespace steward::engine {

// Probes a project's URL (through the ingress) before it is called Running: OK when it answers.
using HttpProber = std::function<Status(const std::string& host, const std::string& url)>;

struct EngineOptions {
  EngineConfig config;
  WorkQueueOptions queue;
  std::string field_manager = "steward";
  // A step that waits for the cluster requeues after this even without an event (a safety net;
  // informer events are what normally wake it).
  std::chrono::milliseconds recheck{10000};
  // How long a write's result stands in for the cache before the cache must show it.
  std::chrono::milliseconds expectation_timeout{30000};
  std::chrono::milliseconds sync_timeout{60000};
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
  const Clock* clock = nullptr;  // null: RealClock
};

struct Orphan {
  std::string kind, name, project_id;
};

struct EngineStats {
  uint64_t reconciles = 0;
  uint64_t writes = 0;  // create/update/delete requests sent
  size_t queue_depth = 0;
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
  const EngineOptions& options() const;

 private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace steward::engine
