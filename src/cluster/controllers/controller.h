// The pieces every simulated controller shares: the context (API, cache, queue, events,
// profile) and the Controller interface the manager dispatches to.
//
// Thread-safety: controllers run on the manager's worker thread only; the context's queue and
// profile accessors are thread-safe, everything else is confined to that thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cluster/apiserver/object_api.h"
#include "cluster/controllers/controller_cache.h"
#include "cluster/controllers/controller_queue.h"
#include "cluster/controllers/event_recorder.h"
#include "cluster/controllers/process_runtime.h"
#include "cluster/profile/profile.h"
#include "common/mutex.h"
#include "common/random.h"

namespace steward::cluster::controllers {

// The current profile, replaceable from any thread.
class ProfileHolder {
 public:
  explicit ProfileHolder(Profile p) : profile_(std::make_shared<const Profile>(std::move(p))) {}
  std::shared_ptr<const Profile> Get() const {
    MutexLock lock(mu_);
    return profile_;
  }
  void Set(Profile p) {
    auto next = std::make_shared<const Profile>(std::move(p));
    MutexLock lock(mu_);
    profile_ = std::move(next);
  }

 private:
  mutable Mutex mu_;
  std::shared_ptr<const Profile> profile_ GUARDED_BY(mu_);
};

struct ControllerContext {
  ObjectApi& api;
  ControllerCache& cache;
  ControllerQueue& queue;
  EventRecorder& events;
  Random& random;
  ProfileHolder& profile;
  // The process runtime (process pods); null: every pod is virtual.
  ProcessRuntime* processes = nullptr;

  // A sample of one of the profile's delays, e.g. Delay(&Profile::pod_start).
  std::chrono::milliseconds Delay(DelaySpec Profile::*field) {
    auto p = profile.Get();
    return ((*p).*field).Sample(random);
  }
  SystemTime WallNow() const { return api.clock().WallNow(); }
  SteadyTime Now() const { return api.clock().Now(); }
};

// One observed change, after the cache was updated.
struct Change {
  WatchEventType type;
  const ResourceType& rt;
  const std::string& gr;  // rt's group-resource, e.g. "deployments.apps"
  const std::string& ns;
  const std::string& name;
  const CachedObject* old_obj;  // the cached state before (null when first seen)
  const CachedObject* new_obj;  // the cached state after (null on delete)
  const Json& object;           // the object after the event (its last state on delete)
};

class Controller {
 public:
  virtual ~Controller() = default;
  // Called for every change of every type (except Events); enqueue work, keep indexes.
  virtual void Observe(const Change& change) = 0;
  // Handles one item of a kind this controller registered for. Returns false to retry the
  // item with backoff.
  virtual bool Sync(Work kind, const std::string& key) = 0;
};

}  // namespace steward::cluster::controllers
