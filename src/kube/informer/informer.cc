// Informer: the reflector (list + watch into the cache) and the public cache reads.
#include "kube/informer/informer.h"

#include <atomic>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "common/backoff.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/random.h"
#include "kube/informer/clock_wait.h"
#include "kube/informer/dispatcher.h"
#include "kube/informer/object_cache.h"

namespace steward::kube {

namespace {

using internal::Notification;

// A watch that ends without error but delivered nothing and lasted less than this is treated as
// a failure (client-go: "very short watch"), so a server that closes every watch at once is not
// hammered.
constexpr Millis kShortWatch{1000};
// A relist whose continue token expires (410) restarts from the first page at most this often.
constexpr int kMaxListRestarts = 3;

uint64_t SeedOrRandom(uint64_t seed) {
  if (seed != 0) return seed;
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) | device();
}

std::string Combine(const std::string& name, const std::string& described) {
  return name.empty() ? described : name + " (" + described + ")";
}

}  // namespace

struct Informer::Impl {
  // How one watch request ended, as the reflector loop acts on it.
  struct WatchOutcome {
    enum class Kind { kClean, kShort, kGone, kError, kStopped };
    Kind kind = Kind::kClean;
    uint64_t activity = 0;  // events and bookmarks received
    std::string error;
  };

  Impl(std::unique_ptr<ListerWatcher> lw, InformerOptions opts)
      : lister_watcher(std::move(lw)),
        options(std::move(opts)),
        clock(options.clock ? *options.clock : RealClock::Get()),
        random(SeedOrRandom(options.seed)),
        name(Combine(options.name, lister_watcher->Describe())),
        cache(options.label_indexes),
        dispatcher(internal::Dispatcher::Options{
            .name = name,
            .clock = &clock,
            .tick_period = options.resync,
            .tick = [this] { Resync(); },
        }) {}

  // Reflector.
  void Run();
  Status ListAndReplace();
  Status ListAll(std::map<std::string, ObjectRef, std::less<>>& items, std::string& list_rv);
  void AddPage(ScannedList& page, std::map<std::string, ObjectRef, std::less<>>& items);
  void Replace(std::map<std::string, ObjectRef, std::less<>> items, const std::string& list_rv);
  WatchOutcome WatchOnce();
  void ApplyEvent(const WatchEvent& event);
  void ApplyUpsert(const WatchEvent& event);
  void ApplyDelete(const WatchEvent& event);
  // The cached form of a listed or watched object (after options.transform).
  StatusOr<ObjectRef> Build(const Json& object) const;
  StatusOr<ObjectRef> BuildScanned(ScannedItem item) const;
  void SetResourceVersion(const std::string& rv);
  // Sleeps on the clock; false when stopping.
  bool Sleep(Millis delay);
  void Resync();
  void MarkSynced();

  std::unique_ptr<ListerWatcher> lister_watcher;
  InformerOptions options;
  Clock& clock;
  Random random;
  const std::string name;

  mutable SharedMutex cache_mu;
  internal::ObjectCache cache GUARDED_BY(cache_mu);
  internal::Dispatcher dispatcher;  // thread-safe itself

  // The reflector's sleeps wait on cv under mu.
  mutable Mutex mu;
  mutable CondVar cv;
  enum class State { kNew, kRunning, kStopped } state GUARDED_BY(mu) = State::kNew;
  bool synced GUARDED_BY(mu) = false;
  InformerStats stats GUARDED_BY(mu);

  std::atomic<bool> stopping{false};
  Mutex stop_mu;  // serialises the joins of Stop()
  std::shared_ptr<CancelToken> cancel = std::make_shared<CancelToken>();
  // Not guarded by one mutex: started by Start() under mu (once: state kNew), joined by Stop()
  // under stop_mu.
  std::thread reflector;
  std::string resource_version;  // reflector thread only
};

void Informer::Impl::Run() {
  Backoff backoff(Backoff::Options{.initial = options.backoff_initial,
                                   .max = options.backoff_max,
                                   .factor = 2.0,
                                   .jitter = 0.25},
                  &random);
  bool need_list = true;
  while (!stopping.load()) {
    if (need_list) {
      Status listed = ListAndReplace();
      if (!listed.ok()) {
        if (stopping.load()) break;
        Millis delay = backoff.Next();
        LOG_WARN("informer {}: {}; retrying in {} ms", name, listed.ToString(), delay.count());
        Sleep(delay);
        continue;
      }
      need_list = false;
    }
    WatchOutcome out = WatchOnce();
    using Kind = WatchOutcome::Kind;
    if (out.kind == Kind::kStopped) break;
    if (out.activity > 0 || out.kind == Kind::kClean) backoff.Reset();
    if (out.kind == Kind::kClean) continue;  // reopen at once from the last resourceVersion
    {
      MutexLock lock(mu);
      ++stats.watch_errors;
      if (out.kind == Kind::kGone) ++stats.relists_gone;
    }
    Millis delay{0};
    if (out.kind == Kind::kGone) {
      need_list = true;
      // A healthy watch relists at once; a 410 right after a list waits like any failure.
      if (out.activity == 0) delay = backoff.Next();
      LOG_INFO("informer {}: {}; relisting in {} ms", name, out.error, delay.count());
    } else {
      delay = backoff.Next();
      LOG_WARN("informer {}: watch from resourceVersion {} failed: {}; retrying in {} ms", name,
               resource_version, out.error, delay.count());
    }
    Sleep(delay);
  }
}

Status Informer::Impl::ListAndReplace() {
  std::map<std::string, ObjectRef, std::less<>> items;
  std::string list_rv;
  RETURN_IF_ERROR(ListAll(items, list_rv));
  Replace(std::move(items), list_rv);
  return Status();
}

Status Informer::Impl::ListAll(std::map<std::string, ObjectRef, std::less<>>& items,
                               std::string& list_rv) {
  ListOptions list_options;
  list_options.limit = options.page_size;
  int restarts = 0;
  while (true) {
    if (stopping.load()) return Cancelled("informer " + name + ": stopped while listing");
    Result<ScannedList> page = lister_watcher->ListScanned(list_options);
    if (!page.ok()) {
      const ApiError& error = page.error();
      if (error.IsGone() && !list_options.continue_token.empty() && restarts++ < kMaxListRestarts) {
        LOG_INFO("informer {}: list continue token expired; restarting the list", name);
        items.clear();
        list_rv.clear();
        list_options.continue_token.clear();
        continue;
      }
      return Status(error.code, "list " + lister_watcher->Describe() + ": " + error.ToString());
    }
    if (list_options.continue_token.empty()) list_rv = page->resource_version;
    AddPage(*page, items);
    if (page->continue_token.empty()) return Status();
    list_options.continue_token = page->continue_token;
  }
}

void Informer::Impl::AddPage(ScannedList& page,
                             std::map<std::string, ObjectRef, std::less<>>& items) {
  for (ScannedItem& item : page.items) {
    // An object the cache already holds at the same resourceVersion is reused, not rebuilt.
    if (item.error.empty() && item.metadata_object && !item.name.empty()) {
      std::string key = ObjectKey(item.ns, item.name);
      ReaderMutexLock lock(cache_mu);
      ObjectRef cached = cache.Get(key);
      if (cached && !item.resource_version.empty() &&
          cached->resource_version() == item.resource_version) {
        items[key] = std::move(cached);
        continue;
      }
    }
    auto built = BuildScanned(std::move(item));
    if (!built.ok()) {
      LOG_WARN("informer {}: skipping a listed object: {}", name, built.status().ToString());
      continue;
    }
    ObjectRef object = std::move(built).value();
    items[object->key()] = object;
  }
}

void Informer::Impl::Replace(std::map<std::string, ObjectRef, std::less<>> items,
                             const std::string& list_rv) {
  uint64_t tombstones = 0;
  [[maybe_unused]] size_t size;
  {
    WriterMutexLock lock(cache_mu);
    for (auto& change : cache.Replace(std::move(items))) {
      using Kind = internal::ObjectCache::Change::Kind;
      Notification n;
      n.old_object = std::move(change.old_object);
      n.new_object = std::move(change.new_object);
      if (change.kind == Kind::kAdd) n.kind = Notification::Kind::kAdd;
      if (change.kind == Kind::kUpdate) n.kind = Notification::Kind::kUpdate;
      if (change.kind == Kind::kDelete) {
        n.kind = Notification::Kind::kDelete;
        n.final_state_unknown = true;
        ++tombstones;
      }
      dispatcher.Push(std::move(n));
    }
    size = cache.size();
  }
  resource_version = list_rv;
  bool first;
  {
    MutexLock lock(mu);
    ++stats.lists;
    stats.tombstones += tombstones;
    stats.resource_version = list_rv;
    first = !synced;
  }
  LOG_DEBUG("informer {}: listed {} objects at resourceVersion {} ({} tombstones)", name, size,
            list_rv, tombstones);
  if (first) dispatcher.PushMarker([this] { MarkSynced(); });
}

void Informer::Impl::MarkSynced() {
  {
    MutexLock lock(mu);
    synced = true;
  }
  cv.NotifyAll();
}

Informer::Impl::WatchOutcome Informer::Impl::WatchOnce() {
  WatchOptions watch_options;
  watch_options.resource_version = resource_version;
  watch_options.allow_bookmarks = true;
  // Spread reconnects of many informers (client-go: a random timeout in [T, 2T)).
  int timeout = std::max(1, options.watch_timeout_seconds);
  watch_options.timeout_seconds = static_cast<int>(random.Uniform(timeout, 2 * timeout - 1));
  watch_options.cancel = cancel;
  {
    MutexLock lock(mu);
    ++stats.watches;
  }
  WatchOutcome out;
  std::optional<ApiError> error_event;
  SteadyTime start = clock.Now();
  Result<WatchEnd> end = lister_watcher->Watch(watch_options, [&](const WatchEvent& event) {
    if (stopping.load()) return false;
    if (event.type == WatchEvent::Type::kError) {
      error_event = ApiErrorFromStatusObject(event.object, 500);
      return false;
    }
    ++out.activity;
    ApplyEvent(event);
    return true;
  });
  using Kind = WatchOutcome::Kind;
  if (stopping.load()) {
    out.kind = Kind::kStopped;
  } else if (error_event || !end.ok()) {
    const ApiError& error = error_event ? *error_event : end.error();
    out.kind = error.IsGone() ? Kind::kGone : Kind::kError;
    out.error = (error_event ? "watch ERROR event: " : "watch: ") + error.ToString();
  } else if (out.activity == 0 && clock.Now() - start < kShortWatch) {
    out.kind = Kind::kShort;
    out.error = "very short watch: the server closed it at once without events";
  }
  return out;
}

void Informer::Impl::ApplyEvent(const WatchEvent& event) {
  switch (event.type) {
    case WatchEvent::Type::kBookmark:
      break;
    case WatchEvent::Type::kAdded:
    case WatchEvent::Type::kModified:
      ApplyUpsert(event);
      break;
    case WatchEvent::Type::kDeleted:
      ApplyDelete(event);
      break;
    case WatchEvent::Type::kError:
      return;  // handled by the caller
  }
  // Opaque: never compared, only remembered.
  SetResourceVersion(event.ResourceVersion());
}

StatusOr<ObjectRef> Informer::Impl::BuildScanned(ScannedItem item) const {
  if (!options.transform) return CachedObject::FromScanned(std::move(item));
  // A transform works on a document: parse the one item (never the whole page), then transform
  // it in place (Build would copy it first: a copy of every listed ReplicaSet at a restart).
  auto parsed = ParseJson(item.json);
  if (!parsed.ok()) return parsed.status();
  options.transform(*parsed);
  return CachedObject::FromJson(*parsed);
}

StatusOr<ObjectRef> Informer::Impl::Build(const Json& object) const {
  if (!options.transform) return CachedObject::FromJson(object);
  Json copy = object;
  options.transform(copy);
  return CachedObject::FromJson(copy);
}

void Informer::Impl::ApplyUpsert(const WatchEvent& event) {
  auto built = Build(event.object);
  if (!built.ok()) {
    LOG_WARN("informer {}: skipping a {} event: {}", name, WatchEventTypeName(event.type),
             built.status().ToString());
    return;
  }
  ObjectRef object = std::move(built).value();
  {
    WriterMutexLock lock(cache_mu);
    // The same resourceVersion is the same state (equality is the one comparison Kubernetes
    // allows on resourceVersions): a replayed event changes nothing and notifies no one.
    ObjectRef cached = cache.Get(object->key());
    if (cached && cached->resource_version() == object->resource_version()) return;
    ObjectRef previous = cache.Upsert(object);
    Notification n;
    n.kind = previous ? Notification::Kind::kUpdate : Notification::Kind::kAdd;
    n.old_object = std::move(previous);
    n.new_object = std::move(object);
    dispatcher.Push(std::move(n));
  }
  MutexLock lock(mu);
  ++stats.events;
}

void Informer::Impl::ApplyDelete(const WatchEvent& event) {
  // The handlers get the event's object (the final state); if it does not parse, the key from
  // its metadata still removes the cached one, which is then passed instead.
  ObjectRef final_state;
  std::string key;
  if (auto built = Build(event.object); built.ok()) {
    final_state = std::move(built).value();
    key = final_state->key();
  } else {
    const Json* meta = FindPath(event.object, "metadata");
    if (meta == nullptr || !meta->is_object() || GetString(*meta, "name").empty()) {
      LOG_WARN("informer {}: skipping a DELETED event: {}", name, built.status().ToString());
      return;
    }
    key = ObjectKey(GetString(*meta, "namespace"), GetString(*meta, "name"));
  }
  {
    WriterMutexLock lock(cache_mu);
    ObjectRef removed = cache.Remove(key);
    if (removed) {  // a delete of an object never seen is ignored
      Notification n;
      n.kind = Notification::Kind::kDelete;
      n.old_object = final_state ? std::move(final_state) : std::move(removed);
      dispatcher.Push(std::move(n));
    }
  }
  MutexLock lock(mu);
  ++stats.events;
}

void Informer::Impl::SetResourceVersion(const std::string& rv) {
  if (rv.empty()) return;
  resource_version = rv;
  MutexLock lock(mu);
  stats.resource_version = rv;
}

bool Informer::Impl::Sleep(Millis delay) {
  MutexLock lock(mu);
  internal::WaitUntil(cv, mu, clock, clock.Now() + delay, [&] { return stopping.load(); });
  return !stopping.load();
}

void Informer::Impl::Resync() {
  {
    MutexLock lock(mu);
    if (!synced) return;
  }
  ReaderMutexLock lock(cache_mu);
  dispatcher.PushResync(cache.All());
}

// ---- Informer ----

Informer::Informer(std::unique_ptr<ListerWatcher> lister_watcher, InformerOptions options)
    : impl_(std::make_unique<Impl>(std::move(lister_watcher), std::move(options))) {}

Informer::~Informer() { Stop(); }

int Informer::AddHandlers(InformerHandlers handlers) {
  ReaderMutexLock lock(impl_->cache_mu);
  return impl_->dispatcher.AddHandlers(std::move(handlers), impl_->cache.All());
}

void Informer::RemoveHandlers(int id) { impl_->dispatcher.RemoveHandlers(id); }

void Informer::Start() {
  MutexLock lock(impl_->mu);
  if (impl_->state != Impl::State::kNew) return;
  impl_->state = Impl::State::kRunning;
  impl_->dispatcher.Start();
  impl_->reflector = std::thread([impl = impl_.get()] { impl->Run(); });
}

void Informer::Stop() {
  {
    MutexLock lock(impl_->mu);
    impl_->state = Impl::State::kStopped;
    impl_->stopping.store(true);
  }
  impl_->cv.NotifyAll();
  impl_->cancel->Cancel();
  if (impl_->dispatcher.OnDispatchThread()) {
    // From a handler: it cannot wait for its own thread; the threads end by themselves and the
    // next Stop() (or the destructor) from another thread joins them.
    impl_->dispatcher.Stop();
    return;
  }
  MutexLock stop_lock(impl_->stop_mu);  // concurrent Stop() calls join once
  if (impl_->reflector.joinable()) impl_->reflector.join();
  impl_->dispatcher.Stop();
}

bool Informer::HasSynced() const {
  MutexLock lock(impl_->mu);
  return impl_->synced;
}

bool Informer::WaitForSync(Millis timeout) const {
  MutexLock lock(impl_->mu);
  impl_->cv.WaitFor(impl_->mu, timeout,
                    [&]() REQUIRES(impl_->mu) { return impl_->synced || impl_->stopping.load(); });
  return impl_->synced;
}

ObjectRef Informer::Get(std::string_view ns, std::string_view name) const {
  ReaderMutexLock lock(impl_->cache_mu);
  return impl_->cache.Get(ObjectKey(ns, name));
}

std::vector<ObjectRef> Informer::List() const {
  ReaderMutexLock lock(impl_->cache_mu);
  return impl_->cache.All();
}

std::vector<ObjectRef> Informer::ByNamespace(std::string_view ns) const {
  ReaderMutexLock lock(impl_->cache_mu);
  return impl_->cache.ByNamespace(ns);
}

std::vector<ObjectRef> Informer::ByLabel(std::string_view key, std::string_view value) const {
  ReaderMutexLock lock(impl_->cache_mu);
  return impl_->cache.ByLabel(key, value);
}

size_t Informer::size() const {
  ReaderMutexLock lock(impl_->cache_mu);
  return impl_->cache.size();
}

InformerStats Informer::stats() const {
  InformerStats out;
  {
    MutexLock lock(impl_->mu);
    out = impl_->stats;
  }
  out.objects = size();
  return out;
}

}  // namespace steward::kube
