#include "engine/reconciler/engine.h"

#include <utility>

#include "common/log.h"
#include "common/mutex.h"
#include "engine/manifests/manifests.h"
#include "engine/readiness/readiness.h"
#include "engine/reconciler/observer.h"
#include "engine/reconciler/reconciler.h"
#include "engine/reconciler/secret_vault.h"
#include "engine/workqueue/worker_pool.h"
#include "kube/informer/informer.h"

namespace steward::engine {

using kube::ResourceType;

struct Engine::Impl {
  EngineOptions options;
  std::shared_ptr<kube::Client> client;
  store::Store& store;
  RealClock real_clock;
  const Clock& clock;
  std::unique_ptr<WorkQueue> queue;
  std::unique_ptr<kube::InformerFactory> factory;
  Observer observer;
  std::unique_ptr<Reconciler> reconciler;
  std::unique_ptr<WorkerPool> pool;
  SecretVault vault;  // before intents, which uses it
  Intents intents;
  Mutex mu;
  bool started GUARDED_BY(mu) = false;
  bool stopped GUARDED_BY(mu) = false;
  bool running GUARDED_BY(mu) = false;  // Start() finished

  Impl(EngineOptions o, std::shared_ptr<kube::Client> c, store::Store& s)
      : options(std::move(o)),
        client(std::move(c)),
        store(s),
        clock(options.clock != nullptr ? *options.clock : real_clock),
        observer(clock, options.expectation_timeout, options.config.namespace_name),
        vault(client, options.config, options.field_manager),
        intents(
            s,
            [this](const std::string& id) {
              if (queue) queue->Add(id);
            },
            &options.config, &vault) {}

  // The project an object belongs to: its label, or for an EndpointSlice its Service's label.
  std::string ProjectOf(const ResourceType& type, const kube::ObjectRef& obj) {
    if (type == ResourceType::EndpointSlice()) {
      std::string_view svc = obj->label("kubernetes.io/service-name");
      if (svc.empty()) return "";
      kube::ObjectRef service =
          observer.informer(ResourceType::Service())->Get(obj->ns(), std::string(svc));
      return service ? std::string(service->label(kProjectLabel)) : "";
    }
    return std::string(obj->label(kProjectLabel));
  }

  void Watch(const ResourceType& type, const std::string& selector,
             std::function<void(Json&)> transform = {}) {
    auto informer =
        factory->For(type, options.config.namespace_name, selector, std::move(transform));
    observer.Add(type, informer);
    auto wake = [this, &type](const kube::ObjectRef& obj) {
      std::string id = ProjectOf(type, obj);
      if (!id.empty()) queue->Add(id);
    };
    kube::InformerHandlers h;
    h.on_add = wake;
    h.on_update = [wake](const kube::ObjectRef& old_obj, const kube::ObjectRef& new_obj) {
      if (old_obj->resource_version() == new_obj->resource_version()) return;  // resync
      wake(new_obj);
    };
    h.on_delete = [wake](const kube::ObjectRef& last, bool) { wake(last); };
    informer->AddHandlers(std::move(h));
  }
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StatusOr<std::unique_ptr<Engine>> Engine::Create(EngineOptions options,
                                                 std::shared_ptr<kube::Client> client,
                                                 store::Store& store) {
  if (options.config.workers < 1) return InvalidArgument("engine.workers: must be at least 1");
  if (options.config.http_probe && !options.prober) {
    return InvalidArgument("engine.httpProbe: set, but no HTTP prober was wired in");
  }
  auto impl = std::make_unique<Impl>(std::move(options), std::move(client), store);
  ASSIGN_OR_RETURN(impl->queue, WorkQueue::Create(impl->options.queue, impl->clock));

  kube::InformerOptions io;
  io.label_indexes = {std::string(kProjectLabel), "kubernetes.io/service-name"};
  impl->factory = std::make_unique<kube::InformerFactory>(impl->client, io);
  // Every kind Steward creates carries the managed-by label; EndpointSlices are made by the
  // cluster and carry the Service's name instead.
  const std::string ours = std::string(kManagedByLabel) + "=" + std::string(kManagedByValue);
  for (const ResourceType* t : {&ResourceType::Secret(), &ResourceType::PersistentVolumeClaim(),
                                &ResourceType::Deployment(), &ResourceType::Service(),
                                &ResourceType::Ingress(), &ResourceType::Pod()}) {
    impl->Watch(*t, ours);
  }
  impl->Watch(ResourceType::EndpointSlice(), "kubernetes.io/service-name");
  // ReplicaSets (they carry the pod template's labels) only for ReplicaSetsReadiness: kept
  // without their pod template, a tenth of their size.
  impl->Watch(ResourceType::ReplicaSet(), ours, SlimReplicaSet);
  impl->reconciler =
      std::make_unique<Reconciler>(impl->options, impl->client, store, impl->observer, impl->clock);
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Engine::~Engine() { Stop(); }

Status Engine::Start() {
  Impl& d = *impl_;
  {
    MutexLock lock(d.mu);
    if (d.started) return FailedPrecondition("engine already started");
    d.started = true;
  }
  d.factory->StartAll();
  if (!d.factory->WaitForAllSynced(d.options.sync_timeout)) {
    return Status(StatusCode::kDeadlineExceeded,
                  "informers did not sync within " +
                      std::to_string(d.options.sync_timeout.count()) + " ms (namespace " +
                      d.options.config.namespace_name + ")");
  }
  RETURN_IF_ERROR(d.intents.ClaimUnclaimedHostnames().status());
  // Every stored project, then every project named by a labelled object (orphans among them).
  std::string after;
  for (;;) {
    store::ListFilter f;
    f.after_id = after;
    f.limit = 1000;
    ASSIGN_OR_RETURN(auto page, d.store.ListProjects(f));
    for (const auto& p : page) d.queue->Add(p.id);
    if (page.size() < 1000) break;
    after = page.back().id;
  }
  for (const ResourceType* t :
       {&ResourceType::Secret(), &ResourceType::PersistentVolumeClaim(),
        &ResourceType::Deployment(), &ResourceType::Service(), &ResourceType::Ingress()}) {
    for (const auto& o : d.observer.informer(*t)->List()) {
      std::string id(o->label(kProjectLabel));
      if (!id.empty()) d.queue->Add(id);
    }
  }
  ASSIGN_OR_RETURN(
      d.pool, WorkerPool::Start(*d.queue, d.options.config.workers, [&d](const std::string& key) {
        if (!d.options.on_reconcile) return d.reconciler->Reconcile(key);
        auto begin = std::chrono::steady_clock::now();
        WorkResult result = d.reconciler->Reconcile(key);
        d.options.on_reconcile(result.kind, std::chrono::steady_clock::now() - begin);
        return result;
      }));
  {
    MutexLock lock(d.mu);
    d.running = true;
  }
  LOG_INFO("engine started: namespace {}, {} workers, store {}", d.options.config.namespace_name,
           d.options.config.workers, d.store.Describe());
  return Status::Ok();
}

void Engine::Stop() {
  Impl& d = *impl_;
  {
    MutexLock lock(d.mu);
    if (d.stopped) return;
    d.stopped = true;
  }
  if (d.pool) d.pool->Stop();
  d.queue->ShutDown();
  d.factory->StopAll();
}

void Engine::Enqueue(const std::string& project_id) { impl_->queue->Add(project_id); }

Intents& Engine::intents() { return impl_->intents; }

EngineStats Engine::stats() const {
  EngineStats s;
  s.reconciles = impl_->reconciler->runs();
  s.writes = impl_->reconciler->writes();
  s.kube_unauthorized = impl_->reconciler->unauthorized();
  s.kube_forbidden = impl_->reconciler->forbidden();
  s.queue_depth = impl_->queue->Len();
  s.queue_waiting = impl_->queue->Stats().waiting;
  s.orphans = impl_->reconciler->orphans();
  {
    MutexLock lock(impl_->mu);
    s.started = impl_->running && !impl_->stopped;
  }
  return s;
}

std::optional<std::vector<Json>> Engine::EndpointSlicesOf(const std::string& service) const {
  {
    MutexLock lock(impl_->mu);
    if (!impl_->running || impl_->stopped) return std::nullopt;
  }
  kube::Informer* slices = impl_->observer.informer(ResourceType::EndpointSlice());
  if (slices == nullptr || !slices->HasSynced()) return std::nullopt;
  std::vector<Json> out;
  for (const kube::ObjectRef& obj : slices->ByLabel("kubernetes.io/service-name", service)) {
    if (obj->ns() == impl_->options.config.namespace_name) out.push_back(obj->Parse());
  }
  return out;
}

const EngineOptions& Engine::options() const { return impl_->options; }

}  // namespace steward::engine
