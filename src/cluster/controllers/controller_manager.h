// ControllerManager: runs every simulated controller of the embedded cluster — deployment,
// replicaset, the scheduler + kubelet of its one node, endpointslice + endpoints, ingress load
// balancer, clean-up finalizers, PVC binder, garbage collector, namespace — against ObjectApi.
//
// Design: one storage watch over every type (with an initial snapshot) feeds an informer cache
// and its indexes; each change enqueues keyed work (de-duplicated, delayed by the profile's
// delays through a Scheduler — nothing sleeps); one worker thread drains the watch before every
// item, so the cache always reflects the controllers' own writes. Every read-modify-write goes
// through ObjectApi (Modify, status subresource for status), so watches, resourceVersions and
// generation rules apply, and writes that change nothing are skipped.
//
// Threads: the worker and the scheduler's thread. Thread-safety: all public methods may be
// called from any thread.
#pragma once

#include <cstdint>
#include <memory>

#include "cluster/apiserver/object_api.h"
#include "cluster/profile/profile.h"
#include "common/status.h"

namespace steward::cluster {

namespace controllers {
class ProcessRuntime;
}

class ControllerManager {
 public:
  // `api` must outlive this object. `seed` drives every random choice (delays, names, IPs).
  ControllerManager(ObjectApi& api, Profile profile, uint64_t seed);
  ~ControllerManager();
  ControllerManager(const ControllerManager&) = delete;
  ControllerManager& operator=(const ControllerManager&) = delete;

  // Creates the default IngressClass when absent, subscribes and starts the worker.
  // FailedPrecondition when already started; the watch's error when it cannot subscribe.
  Status Start();
  // Stops the worker and drops pending work. Idempotent, blocking; called by the destructor.
  void Stop();
  // Gives the kubelet a process runtime (process pods, per the profile's process_images). Call
  // before Start(); `runtime` must outlive this object and be stopped (StopAll) before it.
  void SetProcessRuntime(controllers::ProcessRuntime* runtime);
  // Replaces the profile (delays, failing images, ...) for work scheduled from now on.
  void SetProfile(Profile profile);

  // Work items processed so far (for tests and metrics).
  uint64_t processed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace steward::cluster
