#include "engine/reconciler/engine.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <utility>

#include "common/log.h"
#include "common/mutex.h"
#include "engine/manifests/manifests.h"
#include "engine/model/shard.h"
#include "engine/readiness/readiness.h"
#include "engine/reconciler/observer.h"
#include "engine/reconciler/reconciler.h"
#include "engine/reconciler/secret_vault.h"
#include "engine/workqueue/worker_pool.h"
#include "kube/informer/informer.h"

namespace steward::engine {
namespace {

// A cached TLS Secret needs its name, uid, labels and type; its certificate and key stay out of
// Steward's memory.
void DropSecretData(Json& secret) {
  if (!secret.is_object()) return;
  secret.erase("data");
  secret.erase("stringData");
}

}  // namespace

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

  // Sharded mode (options.config.shards > 0). The shards this replica acts for, with their
  // fences; runs of other projects are dropped. `paused` while SetOwnedShards swaps the
  // informers (every run is dropped then; the swap enqueues the owned projects afterwards);
  // `inflight` counts runs under way, which a swap waits for.
  const int shards = options.config.shards;
  std::map<int, store::Fence> owned GUARDED_BY(mu);
  bool paused GUARDED_BY(mu) = false;
  int inflight GUARDED_BY(mu) = 0;
  CondVar idle;
  uint64_t shard_swaps GUARDED_BY(mu) = 0;
  Mutex swap_mu;  // serialises SetOwnedShards and Stop's teardown
  // Reachability (the class comment): wall ms since the cluster is unreachable, 0 while it
  // answers; written by the health thread only.
  std::atomic<int64_t> unreachable_since_ms{0};
  Mutex health_mu;
  CondVar health_cv;
  bool health_stop GUARDED_BY(health_mu) = false;
  std::thread health;
  int listener = -1;

  Impl(EngineOptions o, std::shared_ptr<kube::Client> c, store::Store& s)
      : options(std::move(o)),
        client(std::move(c)),
        store(s),
        clock(options.clock != nullptr ? *options.clock : real_clock),
        observer(clock, options.expectation_timeout, options.config.namespace_name),
        vault(client, options.config, options.field_manager, s.FeedId()),
        // No enqueue of its own: every commit reaches OnChange (the store's listener, from Start)
        // before the committing call returns, on this replica and the others. (With several
        // replicas both used to enqueue; the second Add often found the key taken by a worker
        // and cost one more run per intent.)
        intents(s, nullptr, &options.config, &vault) {}

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

  // Unsharded: every project is this engine's.
  bool Owns(const std::string& id) EXCLUDES(mu) {
    if (shards == 0) return true;
    MutexLock lock(mu);
    return !paused && owned.contains(ShardOf(id, shards));
  }

  // The informers of every managed kind, selected on managed-by (and in sharded mode on the
  // given shard selector, "steward.io/shard in (...)"), in a new factory (not started).
  void BuildInformers(const std::string& shard_selector) {
    kube::InformerOptions io;
    io.label_indexes = {std::string(kProjectLabel), "kubernetes.io/service-name"};
    factory = std::make_unique<kube::InformerFactory>(client, io);
    const std::string also = shard_selector.empty() ? "" : "," + shard_selector;
    // Every kind Steward creates carries the managed-by label; EndpointSlices are made by the
    // cluster and carry the Service's name (and, copied from the Service, its shard) instead.
    const std::string ours =
        std::string(kManagedByLabel) + "=" + std::string(kManagedByValue) + also;
    for (const ResourceType* t : {&ResourceType::Secret(), &ResourceType::PersistentVolumeClaim(),
                                  &ResourceType::Deployment(), &ResourceType::Service(),
                                  &ResourceType::Ingress(), &ResourceType::Pod()}) {
      Watch(*t, ours);
    }
    Watch(ResourceType::EndpointSlice(), "kubernetes.io/service-name" + also);
    // ReplicaSets (they carry the pod template's labels) only for ReplicaSetsReadiness: kept
    // without their pod template, a tenth of their size.
    Watch(ResourceType::ReplicaSet(), ours, SlimReplicaSet);
    // The certificates cert-manager makes for the projects' Ingresses carry none of Steward's
    // labels: a suspend finds them (by the names the Ingresses give) in a cache of the
    // namespace's TLS Secrets, kept without their keys, instead of asking the server for each.
    observer.SetTlsSecrets(factory->For(ResourceType::Secret(), options.config.namespace_name, "",
                                        DropSecretData, "type=kubernetes.io/tls"));
  }

  // Every stored project this engine owns, then every project named by a labelled object in
  // the caches (orphans among them).
  Status EnqueueOwned() {
    RETURN_IF_ERROR(EnqueueStored());
    for (const ResourceType* t :
         {&ResourceType::Secret(), &ResourceType::PersistentVolumeClaim(),
          &ResourceType::Deployment(), &ResourceType::Service(), &ResourceType::Ingress()}) {
      kube::Informer* informer = observer.informer(*t);
      if (informer == nullptr) continue;
      for (const auto& o : informer->List()) {
        std::string id(o->label(kProjectLabel));
        if (!id.empty() && Owns(id)) queue->Add(id);
      }
    }
    return Status::Ok();
  }

  // Every stored project of this cluster that this engine owns, and every one moving away from
  // it (what it still has of them goes).
  Status EnqueueStored() {
    for (const bool leaving : {false, true}) {
      std::string after;
      for (;;) {
        store::ListFilter f;
        f.after_id = after;
        f.limit = 1000;
        (leaving ? f.moving_from : f.cluster) = options.cluster;
        ASSIGN_OR_RETURN(auto page, store.ListProjects(f));
        for (const auto& p : page) {
          if (Owns(p.id)) queue->Add(p.id, p.team);
        }
        if (page.size() < 1000) break;
        after = page.back().id;
      }
    }
    return Status::Ok();
  }

  // One worker run. Sharded: only a project of an owned shard runs, under that shard's fence.
  WorkResult Run(const std::string& key) {
    std::optional<store::Fence> fence;
    if (shards > 0) {
      MutexLock lock(mu);
      auto it = owned.find(ShardOf(key, shards));
      if (paused || it == owned.end()) return WorkResult::Ok();  // not ours (now): dropped
      fence = it->second;
      ++inflight;
    }
    WorkResult result;
    if (!options.on_reconcile) {
      result = reconciler->Reconcile(key, fence);
    } else {
      auto begin = std::chrono::steady_clock::now();
      result = reconciler->Reconcile(key, fence);
      options.on_reconcile(result.kind, std::chrono::steady_clock::now() - begin);
    }
    if (shards > 0) {
      MutexLock lock(mu);
      if (--inflight == 0) idle.NotifyAll();
    }
    return result;
  }

  // Before each Kubernetes write of a fenced run: the shard is still ours here (a swap or a
  // lost Lease takes it away at once) and in the store (nobody acquired it since).
  Status CheckFence(const store::Fence& fence) EXCLUDES(mu) {
    {
      MutexLock lock(mu);
      auto it = owned.find(fence.shard);
      if (it == owned.end() || it->second.epoch != fence.epoch) {
        return Aborted("shard " + std::to_string(fence.shard) + " is no longer " + fence.owner +
                       "'s at epoch " + std::to_string(fence.epoch));
      }
    }
    return store.CheckFence(fence);
  }

  // A change committed through any replica's API (the shared store's change feed) wakes the
  // project's owner: intents only (a generation not yet observed, an operation, a move's end),
  // not the status writes runs make — but for a record moving away from this cluster, every
  // change (a startFirst move waits for the new cluster's Running). Every replica notes when each
  // intent was accepted (IntentTimes): whichever owns the record when its status answers the intent
  // reports how long it took.
  void OnChange(const store::ProjectChange& c) {
    if (!c.record) {
      reconciler->intent_times().Forget(c.project_id);
      return;
    }
    bool intent = c.record->generation != c.record->observed_generation;
    for (const auto& h : c.history) {
      if (h.kind == "move") intent = true;
      if (h.kind != "operation") continue;
      intent = true;
      const int64_t at_ms =
          h.at_ms != 0
              ? h.at_ms
              : std::chrono::duration_cast<Millis>(clock.WallNow().time_since_epoch()).count();
      reconciler->intent_times().Accepted(c.project_id, h.generation, h.summary, at_ms);
    }
    const bool here = intent && c.record->cluster == options.cluster;
    if ((here || c.record->moving_from == options.cluster) && Owns(c.project_id)) {
      queue->Add(c.project_id, c.record->team);
    }
  }

  // The health thread: every tick, whether the transport has failed for longer than the grace;
  // each change of that enqueues every owned project (their runs write what it means).
  void WatchHealth() EXCLUDES(health_mu) {
    const auto grace = options.unreachable_grace;
    // A read of one atomic a tick: cheap, so ticks are short (what it adds to the grace).
    const auto tick = std::clamp<std::chrono::milliseconds>(
        grace / 20, std::chrono::milliseconds(50), std::chrono::milliseconds(250));
    for (;;) {
      {
        MutexLock lock(health_mu);
        if (health_cv.WaitFor(health_mu, tick, [&]() REQUIRES(health_mu) { return health_stop; })) {
          return;
        }
      }
      const std::optional<SteadyTime> failing = client->transport().failing_since();
      const bool down = failing && clock.Now() - *failing >= grace;
      const bool was_down = unreachable_since_ms.load() != 0;
      if (down == was_down) continue;
      if (down) {
        const int64_t since =
            std::chrono::duration_cast<Millis>(clock.WallNow().time_since_epoch()).count() -
            std::chrono::duration_cast<Millis>(clock.Now() - *failing).count();
        unreachable_since_ms.store(std::max<int64_t>(since, 1));
        // Runs in flight end at their next failure rather than after their whole backoff.
        client->transport().SetFailFast(true);
        LOG_ERROR(
            "cluster {}: no answer for {} ms (engine.unreachableGrace {} ms): its projects "
            "are Unknown until it answers",
            options.cluster, std::chrono::duration_cast<Millis>(clock.Now() - *failing).count(),
            grace.count());
      } else {
        unreachable_since_ms.store(0);
        client->transport().SetFailFast(false);
        LOG_WARN("cluster {}: answers again; its projects are observed again", options.cluster);
      }
      if (Status st = EnqueueStored(); !st.ok()) {
        LOG_WARN("cluster {}: enqueueing its projects: {}", options.cluster, st.message());
      }
    }
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
  if (options.config.shards < 0 || options.config.shards > kMaxShards) {
    return InvalidArgument("replicas.shards: must be between 1 and " + std::to_string(kMaxShards));
  }
  auto impl = std::make_unique<Impl>(std::move(options), std::move(client), store);
  ASSIGN_OR_RETURN(impl->queue, WorkQueue::Create(impl->options.queue, impl->clock));
  // Sharded: no informers until a shard is owned (SetOwnedShards).
  if (impl->shards == 0) impl->BuildInformers("");
  Impl* d = impl.get();
  impl->reconciler = std::make_unique<Reconciler>(
      impl->options, impl->client, store, impl->observer, impl->clock,
      [d](const store::Fence& fence) { return d->CheckFence(fence); },
      [d](const std::string& id) {
        if (d->queue && d->Owns(id)) d->queue->Add(id);
      },
      [d]() { return d->unreachable_since_ms.load(); });
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
  if (d.factory) {
    d.factory->StartAll();
    if (d.options.wait_for_sync && !d.factory->WaitForAllSynced(d.options.sync_timeout)) {
      return Status(StatusCode::kDeadlineExceeded,
                    "informers did not sync within " +
                        std::to_string(d.options.sync_timeout.count()) + " ms (namespace " +
                        d.options.config.namespace_name + ")");
    }
  }
  RETURN_IF_ERROR(d.intents.ClaimUnclaimedHostnames().status());
  // Every intent committed from here on, by this process or another sharing the store, is
  // enqueued by the listener (registered before the stored projects are: a commit in between is
  // enqueued twice, which the queue folds into one).
  d.listener = d.store.AddListener([&d](const store::ProjectChange& c) { d.OnChange(c); });
  RETURN_IF_ERROR(d.EnqueueOwned());
  ASSIGN_OR_RETURN(d.pool, WorkerPool::Start(*d.queue, d.options.config.workers,
                                             [&d](const std::string& key) { return d.Run(key); }));
  {
    MutexLock lock(d.mu);
    d.running = true;
  }
  if (d.options.unreachable_grace.count() > 0) d.health = std::thread([&d] { d.WatchHealth(); });
  LOG_INFO("engine started: namespace {}, {} workers, store {}{}", d.options.config.namespace_name,
           d.options.config.workers, d.store.Describe(),
           d.shards > 0 ? ", sharded over " + std::to_string(d.shards) + " shards" : "");
  return Status::Ok();
}

Status Engine::SetOwnedShards(std::map<int, store::Fence> next) {
  Impl& d = *impl_;
  if (d.shards == 0) return FailedPrecondition("the engine is not sharded (replicas.shards 0)");
  for (const auto& [shard, fence] : next) {
    if (shard < 0 || shard >= d.shards || fence.shard != shard) {
      return InvalidArgument("shard " + std::to_string(shard) + " out of range or mislabelled");
    }
  }
  MutexLock swap(d.swap_mu);
  std::set<int> wanted;
  for (const auto& entry : next) wanted.insert(entry.first);
  {
    MutexLock lock(d.mu);
    if (!d.running || d.stopped) return FailedPrecondition("the engine is not running");
    std::set<int> have;
    for (const auto& entry : d.owned) have.insert(entry.first);
    if (have == wanted) {
      d.owned = std::move(next);  // new epochs only: runs under an older fence abort
      return Status::Ok();
    }
    // Stop acting at once on the shards that go (their in-flight runs fail their next fence
    // check), then drain every run: the informers are swapped under no run.
    std::erase_if(d.owned, [&](const auto& entry) {
      auto it = next.find(entry.first);
      return it == next.end() || it->second.epoch != entry.second.epoch;
    });
    d.paused = true;
    d.idle.Wait(d.mu, [&d]() REQUIRES(d.mu) { return d.inflight == 0; });
  }
  if (d.factory) d.factory->StopAll();
  d.observer.Clear();
  d.factory.reset();
  if (!wanted.empty()) {
    d.BuildInformers(ShardSelector(wanted));
    d.factory->StartAll();
    // The shards are this replica's whether or not the cluster answers: a cluster that is
    // down (or slow to list) must not take the shards of the others from it (the membership
    // drops all of them on a failed apply). Its runs wait for the caches (Observer::Synced),
    // except to say that the cluster does not answer; the wait ends when it is declared so.
    const SteadyTime deadline = std::chrono::steady_clock::now() + d.options.sync_timeout;
    bool synced = false;
    while (!synced && d.unreachable_since_ms.load() == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      synced = d.factory->WaitForAllSynced(std::chrono::milliseconds(250));
    }
    if (!synced) {
      LOG_WARN("cluster {}: informers for {} shard(s) not synced ({}); their runs wait for them",
               d.options.cluster, wanted.size(),
               d.unreachable_since_ms.load() != 0
                   ? "the cluster is unreachable"
                   : "not within " + std::to_string(d.options.sync_timeout.count()) + " ms");
    }
  }
  {
    MutexLock lock(d.mu);
    d.owned = std::move(next);
    d.paused = false;
    ++d.shard_swaps;
  }
  LOG_INFO("engine: now acting for {} shard(s)", wanted.size());
  return d.EnqueueOwned();
}

std::map<int, int64_t> Engine::OwnedShards() const {
  MutexLock lock(impl_->mu);
  std::map<int, int64_t> out;
  for (const auto& [shard, fence] : impl_->owned) out[shard] = fence.epoch;
  return out;
}

void Engine::Stop() {
  Impl& d = *impl_;
  {
    MutexLock lock(d.mu);
    if (d.stopped) return;
    d.stopped = true;
  }
  if (d.listener >= 0) d.store.RemoveListener(d.listener);
  {
    MutexLock lock(d.health_mu);
    d.health_stop = true;
    d.health_cv.NotifyAll();
  }
  if (d.health.joinable()) d.health.join();
  if (d.pool) d.pool->Stop();
  d.queue->ShutDown();
  MutexLock swap(d.swap_mu);  // after a swap under way
  if (d.factory) d.factory->StopAll();
}

void Engine::Enqueue(const std::string& project_id) {
  if (impl_->Owns(project_id)) impl_->queue->Add(project_id);
}

Intents& Engine::intents() { return impl_->intents; }
CredentialVault& Engine::vault() { return impl_->vault; }

EngineStats Engine::stats() const {
  EngineStats s;
  const Reconciler::Counts counts = impl_->reconciler->counts();
  s.reconciles = counts.runs;
  s.unchanged_runs = counts.unchanged_runs;
  s.writes = counts.writes;
  s.kube_unauthorized = counts.unauthorized;
  s.kube_forbidden = counts.forbidden;
  s.kube_refused_writes = impl_->reconciler->refused_writes();
  s.queue_depth = impl_->queue->Len();
  {
    const WorkQueueStats q = impl_->queue->Stats();
    s.queue_waiting = q.waiting;
    s.queue_processing = q.processing;
  }
  s.orphans = impl_->reconciler->orphans();
  s.lost_shard_runs = counts.lost_shard_runs;
  s.unsynced_runs = counts.unsynced_runs;
  s.caches_synced = impl_->observer.Synced();
  s.unreachable_since_ms = impl_->unreachable_since_ms.load();
  {
    const kube::TransportStats t = impl_->client->transport().stats();
    s.kube_requests = t.requests;
    s.kube_retries = t.retries;
  }
  {
    MutexLock lock(impl_->mu);
    s.started = impl_->running && !impl_->stopped;
    s.shard_swaps = impl_->shard_swaps;
    for (const auto& [shard, fence] : impl_->owned) s.shards[shard] = fence.epoch;
  }
  return s;
}

std::optional<std::vector<Json>> Engine::EndpointSlicesOf(const std::string& service) const {
  {
    MutexLock lock(impl_->mu);
    if (!impl_->running || impl_->stopped) return std::nullopt;
  }
  std::shared_ptr<kube::Informer> slices = impl_->observer.Shared(ResourceType::EndpointSlice());
  if (slices == nullptr || !slices->HasSynced()) return std::nullopt;
  if (impl_->shards > 0) {
    // Sharded: only a Service of this replica's share is in its caches; another's is not
    // known here (the caller asks the server).
    std::shared_ptr<kube::Informer> services = impl_->observer.Shared(ResourceType::Service());
    if (services == nullptr ||
        services->Get(impl_->options.config.namespace_name, service) == nullptr) {
      return std::nullopt;
    }
  }
  std::vector<Json> out;
  for (const kube::ObjectRef& obj : slices->ByLabel("kubernetes.io/service-name", service)) {
    if (obj->ns() == impl_->options.config.namespace_name) out.push_back(obj->Parse());
  }
  return out;
}

const EngineOptions& Engine::options() const { return impl_->options; }

}  // namespace steward::engine
