// ControllerQueue: the keyed, de-duplicating work queue of the simulated controllers.
//
// An item is a (kind, key) pair. An item that is already ready is queued once, however often it
// is added. AddAfter() delays an item through a Scheduler; a delayed item keeps the earliest of
// its requested times, and adding it for now moves it to the ready list at once. Failed items
// are retried with a per-item exponential backoff (AddRateLimited / Forget), as client-go's
// rate-limited queue does.
//
// Thread-safety: every method may be called from any thread. The Scheduler must outlive the
// queue's use and is expected to be stopped before the queue is destroyed.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/scheduler.h"

namespace steward::cluster::controllers {

// What an item asks for; each kind is handled by one controller.
enum class Work : uint8_t {
  kDeployment,
  kReplicaSet,
  kPod,
  kEndpoints,
  kIngress,
  kServiceCleanup,
  kIngressCleanup,
  kPvcBind,
  kPvcCleanup,
  kGcAttempt,
  kGcOwner,
  kNamespace,
  kEventSweep,
};

struct WorkItem {
  Work kind;
  std::string key;
  bool operator==(const WorkItem& o) const = default;
};

struct WorkItemHash {
  size_t operator()(const WorkItem& w) const {
    return std::hash<std::string>()(w.key) * 31 + static_cast<size_t>(w.kind);
  }
};

class ControllerQueue {
 public:
  explicit ControllerQueue(Scheduler& scheduler);
  ~ControllerQueue();
  ControllerQueue(const ControllerQueue&) = delete;
  ControllerQueue& operator=(const ControllerQueue&) = delete;

  // Makes the item ready now (cancelling any delayed entry for it).
  void Add(const WorkItem& item);
  // Makes the item ready after `delay` (at once when <= 0). Keeps the earliest requested time.
  void AddAfter(const WorkItem& item, std::chrono::nanoseconds delay);
  // Re-adds a failed item after 5 ms doubling per consecutive failure, capped at 30 s.
  void AddRateLimited(const WorkItem& item);
  // Clears the failure count of an item that succeeded.
  void Forget(const WorkItem& item);

  // Takes the oldest ready item, if any; never blocks.
  std::optional<WorkItem> TryPop();
  // Blocks until an item is ready, Kick() was called since the last wait, or Shutdown().
  // Returns false once shut down.
  bool Wait();
  // Wakes a waiter (used for "watch events are pending").
  void Kick();
  // Stops the queue: Wait() returns false, adds are ignored.
  void Shutdown();

  size_t ReadySize() const;
  size_t DelayedSize() const;

 private:
  void AddLocked(const WorkItem& item) REQUIRES(mu_);
  void Fire(const WorkItem& item, const std::shared_ptr<Scheduler::TaskId>& id) EXCLUDES(mu_);

  Scheduler& scheduler_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<WorkItem> ready_ GUARDED_BY(mu_);
  std::unordered_set<WorkItem, WorkItemHash> queued_ GUARDED_BY(mu_);
  struct Delayed {
    SteadyTime due;
    Scheduler::TaskId id;
  };
  std::unordered_map<WorkItem, Delayed, WorkItemHash> delayed_ GUARDED_BY(mu_);
  std::unordered_map<WorkItem, int, WorkItemHash> failures_ GUARDED_BY(mu_);
  bool kicked_ GUARDED_BY(mu_) = false;
  bool shutdown_ GUARDED_BY(mu_) = false;
};

}  // namespace steward::cluster::controllers
