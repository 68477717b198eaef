#include "cluster/controllers/controller_manager.h"

#include <pthread.h>

#include <atomic>
#include <exception>
#include <map>
#include <thread>

#include "cluster/controllers/controller.h"
#include "cluster/controllers/deployment_controller.h"
#include "cluster/controllers/endpoints_controller.h"
#include "cluster/controllers/garbage_collector.h"
#include "cluster/controllers/kubelet.h"
#include "cluster/controllers/namespace_controller.h"
#include "cluster/controllers/replicaset_controller.h"
#include "cluster/controllers/simple_controllers.h"
#include "common/log.h"
#include "common/mutex.h"

namespace steward::cluster {

using namespace controllers;  // NOLINT: the implementation's own namespace

namespace {
constexpr std::chrono::seconds kEventSweepInterval{60};
}  // namespace

struct ControllerManager::Impl {
  Impl(ObjectApi& a, Profile p, uint64_t seed)
      : api(a), profile(std::move(p)), random(seed), events(a) {
    for (Controller* c :
         std::initializer_list<Controller*>{&deployments, &replicasets, &kubelet, &endpoints,
                                            &ingress, &finalizers, &pvc, &gc, &namespaces}) {
      all.push_back(c);
    }
    route[Work::kDeployment] = &deployments;
    route[Work::kReplicaSet] = &replicasets;
    route[Work::kPod] = &kubelet;
    route[Work::kEndpoints] = &endpoints;
    route[Work::kIngress] = &ingress;
    route[Work::kServiceCleanup] = &finalizers;
    route[Work::kIngressCleanup] = &finalizers;
    route[Work::kPvcCleanup] = &finalizers;
    route[Work::kPvcBind] = &pvc;
    route[Work::kGcAttempt] = &gc;
    route[Work::kGcOwner] = &gc;
    route[Work::kNamespace] = &namespaces;
  }

  void Run();
  void DrainWatch();
  void Dispatch(const WatchEvent& ev);
  void Process(const WorkItem& item);

  ObjectApi& api;
  ProfileHolder profile;
  Random random;
  Scheduler scheduler{"controllers"};
  ControllerQueue queue{scheduler};
  ControllerCache cache;
  EventRecorder events;
  ControllerContext ctx{api, cache, queue, events, random, profile};
  DeploymentController deployments{ctx};
  ReplicaSetController replicasets{ctx};
  Kubelet kubelet{ctx};
  EndpointsController endpoints{ctx};
  IngressController ingress{ctx};
  CleanupFinalizers finalizers{ctx};
  PvcBinder pvc{ctx};
  GarbageCollector gc{ctx};
  NamespaceController namespaces{ctx};
  std::vector<Controller*> all;
  std::map<Work, Controller*> route;

  // Not guarded: set by Start() (under mu) before the worker starts, which then reads watcher
  // without the lock; Stop() joins the worker under mu.
  std::unique_ptr<Watcher> watcher;
  std::thread worker;
  Mutex mu;
  bool started GUARDED_BY(mu) = false;
  bool stopped GUARDED_BY(mu) = false;
  std::atomic<uint64_t> processed{0};
};

void ControllerManager::Impl::Run() {
  for (;;) {
    DrainWatch();
    if (auto item = queue.TryPop()) {
      Process(*item);
      continue;
    }
    if (!queue.Wait()) return;
  }
}

void ControllerManager::Impl::DrainWatch() {
  for (;;) {
    std::vector<WatchEvent> batch = watcher->Drain();
    if (batch.empty()) return;
    for (const auto& ev : batch) {
      try {
        Dispatch(ev);
      } catch (const std::exception& e) {
        LOG_ERROR("controllers: observing {}/{}/{}: {}", ev.object.group_resource, ev.object.ns,
                  ev.object.name, e.what());
      }
    }
  }
}

void ControllerManager::Impl::Dispatch(const WatchEvent& ev) {
  const ObjectRecord& rec = ev.object;
  if (rec.group_resource == "events") {
    // Not cached (the recorder tracks its own); only a terminating namespace cares.
    namespaces.Touch(rec.ns);
    return;
  }
  const ResourceType* rt = FindGroupResource(rec.group_resource);
  if (rt == nullptr) return;
  Json obj = rec.Parse();
  std::unique_ptr<CachedObject> old;
  const CachedObject* cur = nullptr;
  if (ev.type == WatchEventType::kDeleted) {
    old = cache.Remove(rec.group_resource, rec.ns, rec.name);
    if (old == nullptr) return;
  } else {
    old = cache.Put(MakeCachedObject(*rt, rec, obj));
    cur = cache.Find(rec.group_resource, rec.ns, rec.name);
  }
  Change change{ev.type, *rt, rec.group_resource, rec.ns, rec.name, old.get(), cur, obj};
  for (Controller* c : all) c->Observe(change);
}

void ControllerManager::Impl::Process(const WorkItem& item) {
  processed.fetch_add(1, std::memory_order_relaxed);
  if (item.kind == Work::kEventSweep) {
    events.Sweep();
    queue.AddAfter(item, kEventSweepInterval);
    return;
  }
  auto it = route.find(item.kind);
  if (it == route.end()) return;
  bool ok = false;
  try {
    ok = it->second->Sync(item.kind, item.key);
  } catch (const std::exception& e) {
    LOG_ERROR("controllers: sync {}: {}", item.key, e.what());
  }
  if (ok) {
    queue.Forget(item);
  } else {
    queue.AddRateLimited(item);
  }
}

ControllerManager::ControllerManager(ObjectApi& api, Profile profile, uint64_t seed)
    : impl_(std::make_unique<Impl>(api, std::move(profile), seed)) {}

ControllerManager::~ControllerManager() { Stop(); }

Status ControllerManager::Start() {
  MutexLock lock(impl_->mu);
  if (impl_->started) return FailedPrecondition("controller manager already started");
  RETURN_IF_ERROR(IngressController::EnsureIngressClass(impl_->api));
  WatchRequest req;
  req.initial_snapshot = true;
  auto watcher = impl_->api.storage().Watch(req);
  if (!watcher.ok()) return watcher.status();
  impl_->watcher = std::move(*watcher);
  Impl* impl = impl_.get();
  impl_->watcher->SetNotify([impl] { impl->queue.Kick(); });
  impl_->queue.AddAfter({Work::kEventSweep, ""}, kEventSweepInterval);
  impl_->started = true;
  impl_->worker = std::thread([impl] { impl->Run(); });
  pthread_setname_np(impl_->worker.native_handle(), "controllers");
  return Status::Ok();
}

void ControllerManager::Stop() {
  MutexLock lock(impl_->mu);
  if (!impl_->started || impl_->stopped) return;
  impl_->stopped = true;
  impl_->scheduler.Stop();
  impl_->queue.Shutdown();
  impl_->watcher->Close();
  if (impl_->worker.joinable()) impl_->worker.join();
}

void ControllerManager::SetProcessRuntime(ProcessRuntime* runtime) {
  impl_->ctx.processes = runtime;
  if (runtime == nullptr) return;
  Impl* impl = impl_.get();
  runtime->SetNotify([impl](const std::string& key) { impl->queue.Add({Work::kPod, key}); });
}

void ControllerManager::SetProfile(Profile profile) { impl_->profile.Set(std::move(profile)); }

uint64_t ControllerManager::processed() const {
  return impl_->processed.load(std::memory_order_relaxed);
}

}  // namespace steward::cluster
